// HorizontalPodAutoscaler (autoscaling/v2) and PodDisruptionBudget (policy/v1), aimed at the workloads
// connected to them.
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler'
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget'
import type { IIoK8sApiAutoscalingV2MetricSpec as MetricSpec } from 'kubernetes-models/autoscaling/v2/MetricSpec'
import { linksOf, objectMeta, stringMap, type Builder } from './build-context.ts'
import { labelProblems } from './metadata.ts'
import { workloadsSelector } from './networking.ts'
import { WORKLOAD_KINDS } from './workloads.ts'
import type { WorkloadType } from './wiring.ts'

/** CPU target when the node names neither CPU nor memory (the schema's default). */
export const DEFAULT_CPU_TARGET = 80

const resourceMetric = (name: 'cpu' | 'memory', averageUtilization: number): MetricSpec =>
  ({ type: 'Resource', resource: { name, target: { type: 'Utilization', averageUtilization } } })

export const hpa: Builder = (input) => {
  const { node, report } = input
  const d = node.data
  const targets = linksOf(input, 'workload-hpa').map((l) => l.peer)
  const scalable = targets.filter((t) => WORKLOAD_KINDS[t.type as WorkloadType].scalable)
  for (const t of targets) if (!scalable.includes(t)) report.warn(`a ${WORKLOAD_KINDS[t.type as WorkloadType].kind} cannot be scaled; ${t.name} is not a scale target`)
  if (scalable.length === 0) report.error('scaleTargetRef: connect a Deployment, StatefulSet or ReplicaSet to scale')
  if (scalable.length > 1) report.warn(`${scalable.length} workloads are connected; an autoscaler scales one, ${scalable[0].name}`)
  const target = scalable[0]
  const minReplicas = d.minReplicas as number | undefined
  const maxReplicas = d.maxReplicas as number
  if (minReplicas !== undefined && minReplicas > maxReplicas) report.error(`minReplicas: ${minReplicas} is more than maxReplicas (${maxReplicas})`)
  const cpu = d.targetCPUUtilization as number | undefined
  const memory = d.targetMemoryUtilization as number | undefined
  const metrics: MetricSpec[] = []
  if (cpu !== undefined || memory === undefined) metrics.push(resourceMetric('cpu', cpu ?? DEFAULT_CPU_TARGET))
  if (memory !== undefined) metrics.push(resourceMetric('memory', memory))
  const kind = target ? WORKLOAD_KINDS[target.type as WorkloadType] : { apiVersion: 'apps/v1', kind: 'Deployment' }
  return [new HorizontalPodAutoscaler({
    metadata: objectMeta(input),
    spec: {
      scaleTargetRef: { apiVersion: kind.apiVersion, kind: kind.kind, name: target?.name ?? node.name },
      ...(minReplicas !== undefined && { minReplicas }),
      maxReplicas,
      metrics,
    },
  })]
}

export const poddisruptionbudget: Builder = (input) => {
  const { node, report, ctx } = input
  const d = node.data
  const explicit = stringMap(d, 'selector')
  if (explicit) for (const p of labelProblems(explicit, 'selector')) report.error(p)
  const workloads = linksOf(input, 'workload-poddisruptionbudget')
  if (!explicit && workloads.length === 0) report.error('selector: set it or connect a workload')
  if (d.minAvailable !== undefined && d.maxUnavailable !== undefined) report.error('minAvailable and maxUnavailable cannot both be set')
  return [new PodDisruptionBudget({
    metadata: objectMeta(input),
    spec: {
      selector: explicit ? { matchLabels: explicit } : workloadsSelector(ctx.workflowId, workloads),
      ...(d.minAvailable !== undefined && { minAvailable: d.minAvailable as number | string }),
      ...(d.maxUnavailable !== undefined && { maxUnavailable: d.maxUnavailable as number | string }),
    },
  })]
}
