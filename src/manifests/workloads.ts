// Deployment, StatefulSet, DaemonSet, ReplicaSet, Pod, Job and CronJob: one container named after the
// node, plus what connected config, storage and service account nodes bring (envFrom, volumes, identity).
import { Deployment } from 'kubernetes-models/apps/v1/Deployment'
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet'
import { DaemonSet } from 'kubernetes-models/apps/v1/DaemonSet'
import { ReplicaSet } from 'kubernetes-models/apps/v1/ReplicaSet'
import { Pod } from 'kubernetes-models/v1/Pod'
import { Job } from 'kubernetes-models/batch/v1/Job'
import { CronJob } from 'kubernetes-models/batch/v1/CronJob'
import type { IIoK8sApiCoreV1PodSpec as PodSpec } from 'kubernetes-models/v1/PodSpec'
import type { IIoK8sApiCoreV1Container as Container } from 'kubernetes-models/v1/Container'
import type { IIoK8sApiCoreV1Volume as Volume } from 'kubernetes-models/v1/Volume'
import type { IIoK8sApiCoreV1VolumeMount as VolumeMount } from 'kubernetes-models/v1/VolumeMount'
import type { IIoK8sApiCoreV1EnvFromSource as EnvFromSource } from 'kubernetes-models/v1/EnvFromSource'
import type { IIoK8sApiCoreV1EnvVar as EnvVar } from 'kubernetes-models/v1/EnvVar'
import { linksOf, objectMeta, podLabels, str, type BuildInput, type Builder } from './build-context.ts'
import { selectorLabels } from './metadata.ts'
import type { WorkloadType } from './wiring.ts'

/** kind and apiVersion of each workload type, for scale targets. */
export const WORKLOAD_KINDS: Record<WorkloadType, { apiVersion: string; kind: string; scalable: boolean }> = {
  deployment: { apiVersion: 'apps/v1', kind: 'Deployment', scalable: true },
  statefulset: { apiVersion: 'apps/v1', kind: 'StatefulSet', scalable: true },
  replicaset: { apiVersion: 'apps/v1', kind: 'ReplicaSet', scalable: true },
  daemonset: { apiVersion: 'apps/v1', kind: 'DaemonSet', scalable: false },
  pod: { apiVersion: 'v1', kind: 'Pod', scalable: false },
  job: { apiVersion: 'batch/v1', kind: 'Job', scalable: false },
  cronjob: { apiVersion: 'batch/v1', kind: 'CronJob', scalable: false },
}

/** Where a connected config map or secret is mounted when the edge asks for files but the node names no path. */
export const DEFAULT_CONFIG_MOUNT = { configmap: '/etc/config', secret: '/etc/secrets' } as const
/** Where a connected claim is mounted when it names no mountPath. */
export const DEFAULT_CLAIM_MOUNT = '/mnt'
/** Target handles that ask for a config map or secret as files rather than environment. */
export const VOLUME_HANDLES = new Set(['volume', 'mount', 'files'])
/** Name of the StatefulSet's per-pod claim template (mount it with a volumeMount of this name). */
export const STATEFULSET_CLAIM = 'data'

const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/
const MASKED = ''

function envOf(input: BuildInput): EnvVar[] {
  const { node, report, ctx } = input
  const explicit = (node.data.env as Array<{ name: string; value?: string }> | undefined) ?? []
  const env = new Map<string, EnvVar>()
  for (const [i, e] of explicit.entries()) {
    if (!ENV_NAME.test(e.name)) report.error(`env/${i}/name: ${JSON.stringify(e.name.slice(0, 80))} is not a valid environment variable name`)
    env.set(e.name, e.value === undefined ? { name: e.name } : { name: e.name, value: e.value })
  }
  // Run-time variables come from the run and override the workflow's; a preview shows only their names.
  for (const [k, v] of Object.entries(ctx.envVars?.[node.id] ?? {})) {
    if (!ENV_NAME.test(k)) { report.error(`run envVars: ${JSON.stringify(k.slice(0, 80))} is not a valid environment variable name`); continue }
    env.set(k, { name: k, value: ctx.revealSecrets ? String(v) : MASKED })
  }
  return [...env.values()]
}

interface Mounts { volumes: Volume[]; mounts: VolumeMount[]; envFrom: EnvFromSource[] }

function wiredMounts(input: BuildInput): Mounts {
  const { report } = input
  const out: Mounts = { volumes: [], mounts: [], envFrom: [] }
  for (const { peer, edge } of linksOf(input, 'config-workload')) {
    const kind = peer.type as 'configmap' | 'secret'
    const mountPath = str(peer.data, 'mountPath')
    const asFiles = mountPath !== undefined || VOLUME_HANDLES.has(String(edge.targetHandle ?? ''))
    if (!asFiles) {
      out.envFrom.push(kind === 'configmap' ? { configMapRef: { name: peer.name } } : { secretRef: { name: peer.name } })
      continue
    }
    out.volumes.push(kind === 'configmap' ? { name: peer.name, configMap: { name: peer.name } } : { name: peer.name, secret: { secretName: peer.name } })
    out.mounts.push({ name: peer.name, mountPath: mountPath ?? `${DEFAULT_CONFIG_MOUNT[kind]}/${peer.name}`, readOnly: true })
  }
  for (const { peer } of linksOf(input, 'pvc-workload')) {
    let mountPath = str(peer.data, 'mountPath')
    if (mountPath === undefined) {
      mountPath = `${DEFAULT_CLAIM_MOUNT}/${peer.name}`
      report.warn(`claim ${peer.name} names no mountPath; mounted at ${mountPath}`)
    }
    out.volumes.push({ name: peer.name, persistentVolumeClaim: { claimName: peer.name } })
    out.mounts.push({ name: peer.name, mountPath })
  }
  const seen = new Set<string>()
  for (const v of out.volumes) {
    if (seen.has(v.name)) report.error(`two connected volumes are both named ${v.name}; rename one of the nodes`)
    seen.add(v.name)
  }
  return out
}

function podSpec(input: BuildInput, extra: { restartPolicy?: string; claimTemplates?: string[] } = {}): PodSpec {
  const { node, report } = input
  const d = node.data
  const wired = wiredMounts(input)
  const explicitMounts = (d.volumeMounts as VolumeMount[] | undefined) ?? []
  const known = new Set([...wired.volumes.map((v) => v.name), ...(extra.claimTemplates ?? [])])
  for (const [i, m] of explicitMounts.entries()) {
    if (!known.has(m.name)) report.error(`volumeMounts/${i}/name: no volume named ${JSON.stringify(m.name)} (connect a config map, secret or claim of that name)`)
  }
  // A mount the node lists itself replaces the one its edge would add for the same volume.
  const explicitNames = new Set(explicitMounts.map((m) => m.name))
  const mounts = [...explicitMounts.map((m) => ({ ...m })), ...wired.mounts.filter((m) => !explicitNames.has(m.name))]
  const port = d.port as number | undefined
  const env = envOf(input)
  const container: Container = {
    name: node.name,
    image: d.image as string,
    ...(d.imagePullPolicy !== undefined && { imagePullPolicy: d.imagePullPolicy as Container['imagePullPolicy'] }),
    ...(d.command !== undefined && { command: d.command as string[] }),
    ...(d.args !== undefined && { args: d.args as string[] }),
    ...(port !== undefined && { ports: [{ containerPort: port, protocol: 'TCP' }] }),
    ...(env.length > 0 && { env }),
    ...(wired.envFrom.length > 0 && { envFrom: wired.envFrom }),
    ...(d.resources !== undefined && { resources: d.resources as Container['resources'] }),
    ...(d.readinessProbe !== undefined && { readinessProbe: d.readinessProbe as Container['readinessProbe'] }),
    ...(d.livenessProbe !== undefined && { livenessProbe: d.livenessProbe as Container['livenessProbe'] }),
    ...(mounts.length > 0 && { volumeMounts: mounts }),
  }
  const accounts = linksOf(input, 'serviceaccount-workload')
  if (accounts.length > 1) report.warn(`${accounts.length} service accounts are connected; the pods run as ${accounts[0].peer.name}`)
  return {
    containers: [container],
    ...(accounts.length > 0 && { serviceAccountName: accounts[0].peer.name }),
    ...(extra.restartPolicy !== undefined && { restartPolicy: extra.restartPolicy as PodSpec['restartPolicy'] }),
    ...(wired.volumes.length > 0 && { volumes: wired.volumes }),
  }
}

function template(input: BuildInput, extra: Parameters<typeof podSpec>[1] = {}) {
  return { metadata: { labels: podLabels(input) }, spec: podSpec(input, extra) }
}

function selector(input: BuildInput) {
  return { matchLabels: selectorLabels(input.node.name, input.ctx.workflowId) }
}

/**
 * The replica count, unless an autoscaler owns it: applying `replicas` on every run would take the field back
 * from the HPA (a server-side apply conflict once it has scaled), so it is left out, as Kubernetes advises.
 */
function replicas(input: BuildInput): { replicas?: number } {
  if (input.node.data.replicas === undefined) return {}
  const hpa = linksOf(input, 'workload-hpa')[0]
  if (hpa) {
    input.report.warn(`replicas has no effect: the autoscaler ${JSON.stringify(hpa.peer.name)} sets the replica count`)
    return {}
  }
  return { replicas: input.node.data.replicas as number }
}

export const deployment: Builder = (input) => [new Deployment({
  metadata: objectMeta(input), spec: { ...replicas(input), selector: selector(input), template: template(input) },
})]

export const replicaset: Builder = (input) => [new ReplicaSet({
  metadata: objectMeta(input), spec: { ...replicas(input), selector: selector(input), template: template(input) },
})]

export const daemonset: Builder = (input) => [new DaemonSet({
  metadata: objectMeta(input), spec: { selector: selector(input), template: template(input) },
})]

export const statefulset: Builder = (input) => {
  const { node, report } = input
  const storage = str(node.data, 'storage')
  const storageClassName = str(node.data, 'storageClassName')
  if (storageClassName !== undefined && storage === undefined) report.warn('storageClassName has no effect without storage')
  const explicitMounts = (node.data.volumeMounts as VolumeMount[] | undefined) ?? []
  if (storage !== undefined && !explicitMounts.some((m) => m.name === STATEFULSET_CLAIM)) {
    report.warn(`each pod gets a ${storage} volume named "${STATEFULSET_CLAIM}" but no volumeMount uses it; add one with name "${STATEFULSET_CLAIM}"`)
  }
  // The governing service: the node's own choice, else a connected service, else the node's name.
  const connected = linksOf(input, 'workload-service')[0]?.peer.name
  return [new StatefulSet({
    metadata: objectMeta(input),
    spec: {
      ...replicas(input),
      serviceName: str(node.data, 'serviceName') ?? connected ?? node.name,
      selector: selector(input),
      template: template(input, { claimTemplates: storage !== undefined ? [STATEFULSET_CLAIM] : [] }),
      ...(storage !== undefined && {
        volumeClaimTemplates: [{
          metadata: { name: STATEFULSET_CLAIM },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } }, ...(storageClassName !== undefined && { storageClassName }) },
        }],
      }),
    },
  })]
}

export const pod: Builder = (input) => [new Pod({
  metadata: objectMeta(input), // its labels are the pod labels
  spec: podSpec(input, { restartPolicy: str(input.node.data, 'restartPolicy') }),
})]

function jobSpec(input: BuildInput) {
  const d = input.node.data
  return {
    ...(d.completions !== undefined && { completions: d.completions as number }),
    ...(d.parallelism !== undefined && { parallelism: d.parallelism as number }),
    ...(d.backoffLimit !== undefined && { backoffLimit: d.backoffLimit as number }),
    // Jobs refuse restartPolicy Always, the pod default.
    template: template(input, { restartPolicy: str(d, 'restartPolicy') ?? 'OnFailure' }),
  }
}

export const job: Builder = (input) => [new Job({ metadata: objectMeta(input), spec: jobSpec(input) })]

export const cronjob: Builder = (input) => {
  const d = input.node.data
  return [new CronJob({
    metadata: objectMeta(input),
    spec: {
      schedule: d.schedule as string,
      ...(d.concurrencyPolicy !== undefined && { concurrencyPolicy: d.concurrencyPolicy as 'Allow' }),
      ...(d.suspend !== undefined && { suspend: d.suspend as boolean }),
      jobTemplate: { metadata: { labels: podLabels(input) }, spec: jobSpec(input) },
    },
  })]
}
