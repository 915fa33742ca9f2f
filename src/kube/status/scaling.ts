// HorizontalPodAutoscalers and PodDisruptionBudgets, both judged by what their controllers report.
import { condition, conditions, describeCondition, result, spec, status, num, type DerivedStatus, type KubeObject, type Loose } from './types.ts'

export function hpaStatus(o: KubeObject): DerivedStatus {
  const s = status(o)
  const cpu = (Array.isArray(s.currentMetrics) ? s.currentMetrics as Loose[] : []).find((m) => m?.type === 'Resource' && m.resource?.name === 'cpu')
  const counters = {
    currentReplicas: num(s.currentReplicas), desiredReplicas: num(s.desiredReplicas),
    minReplicas: num(spec(o).minReplicas, 1), maxReplicas: num(spec(o).maxReplicas),
    currentCPUUtilization: typeof cpu?.resource?.current?.averageUtilization === 'number' ? cpu.resource.current.averageUtilization : null,
  }
  if (!conditions(o).length) return result('pending', 'waiting for the first scaling decision', null, counters)
  const able = condition(o, 'AbleToScale')
  if (able?.status === 'False') return result('failed', describeCondition(able), null, counters)
  // Without metrics it keeps the current size: it works, but does not autoscale.
  const active = condition(o, 'ScalingActive')
  if (active?.status === 'False' && active.reason !== 'ScalingDisabled') return result('warning', describeCondition(active), null, counters)
  return result('running', `${counters.currentReplicas} replicas (${counters.minReplicas}–${counters.maxReplicas})`, null, counters)
}

export function pdbStatus(o: KubeObject): DerivedStatus {
  const s = status(o)
  const counters = { currentHealthy: num(s.currentHealthy), desiredHealthy: num(s.desiredHealthy), disruptionsAllowed: num(s.disruptionsAllowed), expectedPods: num(s.expectedPods) }
  if (s.currentHealthy === undefined) return result('pending', 'waiting for the disruption controller', null, counters)
  // Zero disruptions allowed is a valid budget (minAvailable = replicas); fewer healthy pods than the budget wants is not.
  if (counters.currentHealthy < counters.desiredHealthy) return result('warning', `${counters.currentHealthy} healthy pods, the budget wants ${counters.desiredHealthy}`, null, counters)
  if (counters.expectedPods === 0) return result('warning', 'selects no pods', null, counters)
  return result('running', `${counters.disruptionsAllowed} disruption${counters.disruptionsAllowed === 1 ? '' : 's'} allowed`, null, counters)
}
