// Status derivation for tracked resources and node status: object in, {status, message, ready, counters}
// out. Pure: no I/O, no clock. One module per kind family; a kind this table does not know is judged as a
// custom resource (by its Ready/Available condition). Argo CD's gitops-engine health checks are the model.
import { result, type DerivedStatus, type KubeObject, type StatusContext } from './types.ts'
import { podStatus } from './pods.ts'
import { deploymentStatus, statefulSetStatus, daemonSetStatus, replicaSetStatus } from './workloads.ts'
import { jobStatus, cronJobStatus } from './batch.ts'
import { serviceStatus, ingressStatus, networkPolicyStatus } from './networking.ts'
import { pvcStatus } from './storage.ts'
import { hpaStatus, pdbStatus } from './scaling.ts'
import { configMapStatus, secretStatus, serviceAccountStatus, namespaceStatus } from './config.ts'
import { customStatus } from './custom.ts'

export type { ResourceStatus, DerivedStatus, StatusContext, Counters } from './types.ts'
export { RESOURCE_STATUSES } from './types.ts'
export { messageKey } from './message-key.ts'

type Derive = (o: KubeObject, ctx: StatusContext) => DerivedStatus

/** Keyed by `<api group>/<Kind>` (core group empty), so a custom kind that reuses a built-in name is not misread. */
const BY_KIND: Record<string, Derive> = {
  '/Pod': podStatus,
  'apps/Deployment': deploymentStatus,
  'apps/StatefulSet': statefulSetStatus,
  'apps/DaemonSet': daemonSetStatus,
  'apps/ReplicaSet': replicaSetStatus,
  'batch/Job': jobStatus,
  'batch/CronJob': cronJobStatus,
  '/Service': serviceStatus,
  'networking.k8s.io/Ingress': ingressStatus,
  'networking.k8s.io/NetworkPolicy': networkPolicyStatus,
  '/PersistentVolumeClaim': pvcStatus,
  'autoscaling/HorizontalPodAutoscaler': hpaStatus,
  'policy/PodDisruptionBudget': pdbStatus,
  '/ConfigMap': configMapStatus,
  '/Secret': secretStatus,
  '/ServiceAccount': serviceAccountStatus,
  '/Namespace': namespaceStatus,
}

export const groupOf = (apiVersion: string): string => (apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.lastIndexOf('/')) : '')

/** Whether deriveStatus has a kind-specific rule for this object (false: judged as a custom resource). */
export function isBuiltInKind(apiVersion: string, kind: string): boolean {
  return `${groupOf(apiVersion)}/${kind}` in BY_KIND
}

/**
 * The object's status in the tracked-resource vocabulary. `ctx.pods` (the pods a workload selects) lets
 * a workload whose pods cannot start read `failed`/`warning` rather than `pending`.
 */
export function deriveStatus(object: KubeObject, ctx: StatusContext = {}): DerivedStatus {
  const derive = BY_KIND[`${groupOf(String(object.apiVersion ?? ''))}/${object.kind}`] ?? customStatus
  const derived = derive(object, ctx)
  // Whatever its kind, an object being deleted is on its way out (finalizers may hold it for a while).
  if (object.metadata?.deletionTimestamp && derived.status !== 'pending') return result('pending', 'terminating', derived.ready, derived.counters)
  return derived
}
