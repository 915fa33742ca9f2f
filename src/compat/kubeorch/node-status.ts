// A node's live status (`data._status`, `node_update.status`) in the KubeOrch UI's vocabulary (CONTRACT.md
// §3; the UI's lib/types/nodes.ts and components/workflow/settings/*). The UI draws it only in the node's
// settings panel, one badge per node type, coloured by its own set of states: our `running` on a
// Deployment showed as a red "running" badge (OBSERVED.md row 12), because only `healthy` is green there.
//
// How our states (src/kube/status/, API.md §4) map, kind by kind. The rules behind the table:
// - `running` is the type's working state; `completed` too (a kind that never completes only gets it from a
//   stale record, and a finished object is not broken).
// - `failed` and `deleted` are the type's error state: the node's object is broken or gone from the cluster.
//   Types without one fall back to the state that says "not in effect" (CronJob `suspended`: nothing gets
//   scheduled; NetworkPolicy `pending`: nothing is enforced). Our `message` says which it is.
// - `pending` is the type's waiting state; the workload panels have none, and `partial` is theirs (its
//   badge is grey and its tooltip reads "ready / replicas pods ready", which is exactly what pending means
//   for a workload: not all replicas ready yet).
// - `warning` (degraded: some replicas stuck, a paused rollout, an autoscaler without metrics, a suspended
//   Job) is the type's in-between state: workloads `partial`, autoscaler `limited` (it cannot scale), Job
//   `pending` (a suspended Job starts no pods).
// - `unknown` is never alarming and never a success: the in-between state.
// A few states need what the status itself says (see `refine`): a PVC `failed` because its volume is Lost
// is `Lost`; a CronJob `warning` is `suspended` only when it is suspended (not when its last job failed);
// a working autoscaler is `scaling` while its current and desired replicas differ, else `stable`.
//
// `drifted` (API.md §12; src/services/lifecycle/drift/node-status.ts): the node's live objects no longer
// match what was applied; the state the watchers derive is kept in `live_state`, and `drift` says since when
// and which fields. A drifted object that is broken (`live_state` failed or deleted) shows as broken. One
// that works is degraded: the types whose panel has a degraded state show it (workloads `partial`,
// autoscaler `limited`); the others keep their live state, because theirs would say something false
// (`pending`: not created yet). The UI's panels have no place for drift details (the Deployment panel shows
// `message` only in `error`), so `drift` and `live_state` stay in the status for a client that reads them,
// and `message` leads with the drifted fields (the UI's own stream shows it where it shows one at all).
import { isIP } from 'node:net'
import { RESOURCE_STATUSES, type ResourceStatus } from '../../kube/status/types.ts'
import { DRIFTED } from '../../services/lifecycle/drift/node-status.ts'

/** The canvas node types whose settings panel shows `_status` (CONTRACT.md §3). */
export const UI_STATUS_TYPES = [
  'deployment', 'statefulset', 'daemonset', 'service', 'ingress', 'configmap', 'secret',
  'persistentvolumeclaim', 'job', 'cronjob', 'hpa', 'networkpolicy',
] as const
export type UiStatusType = typeof UI_STATUS_TYPES[number]

/** Every state the UI knows, per node type (the unions of the UI's lib/types/nodes.ts). */
export const UI_STATES: Record<UiStatusType, readonly string[]> = {
  deployment: ['healthy', 'partial', 'error'],
  statefulset: ['healthy', 'partial', 'error'],
  daemonset: ['healthy', 'partial', 'error'],
  service: ['healthy', 'pending', 'error'],
  ingress: ['healthy', 'pending', 'error'],
  configmap: ['created', 'pending', 'error'],
  secret: ['created', 'pending', 'error'],
  persistentvolumeclaim: ['Bound', 'Pending', 'Lost', 'error'],
  job: ['running', 'completed', 'failed', 'pending'],
  cronjob: ['active', 'suspended'],
  hpa: ['scaling', 'stable', 'limited', 'error'],
  networkpolicy: ['active', 'pending'],
}

type Row = Record<ResourceStatus, string>
const workload: Row = { running: 'healthy', completed: 'healthy', pending: 'partial', warning: 'partial', unknown: 'partial', failed: 'error', deleted: 'error' }
const addressed: Row = { running: 'healthy', completed: 'healthy', pending: 'pending', warning: 'pending', unknown: 'pending', failed: 'error', deleted: 'error' }
const config: Row = { running: 'created', completed: 'created', pending: 'pending', warning: 'pending', unknown: 'pending', failed: 'error', deleted: 'error' }

/** Our state → the UI's, per node type, before `refine`. */
export const STATE_TABLE: Record<UiStatusType, Row> = {
  deployment: workload,
  statefulset: workload,
  daemonset: workload,
  service: addressed,
  ingress: addressed,
  configmap: config,
  secret: config,
  persistentvolumeclaim: { running: 'Bound', completed: 'Bound', pending: 'Pending', warning: 'Pending', unknown: 'Pending', failed: 'error', deleted: 'error' },
  job: { running: 'running', completed: 'completed', pending: 'pending', warning: 'pending', unknown: 'pending', failed: 'failed', deleted: 'failed' },
  cronjob: { running: 'active', completed: 'active', pending: 'active', warning: 'active', unknown: 'suspended', failed: 'suspended', deleted: 'suspended' },
  hpa: { running: 'stable', completed: 'stable', pending: 'scaling', warning: 'limited', unknown: 'limited', failed: 'error', deleted: 'error' },
  networkpolicy: { running: 'active', completed: 'active', pending: 'pending', warning: 'active', unknown: 'pending', failed: 'pending', deleted: 'pending' },
}

/** The Kubernetes kind a node type renders, and back (node_update names the kind of the object). */
const TYPE_OF_KIND: Record<string, UiStatusType> = {
  Deployment: 'deployment', StatefulSet: 'statefulset', DaemonSet: 'daemonset', Service: 'service', Ingress: 'ingress',
  ConfigMap: 'configmap', Secret: 'secret', PersistentVolumeClaim: 'persistentvolumeclaim', Job: 'job', CronJob: 'cronjob',
  HorizontalPodAutoscaler: 'hpa', NetworkPolicy: 'networkpolicy',
}

/** The canvas node type that renders `kind`, when the UI has a status panel for it. */
export const nodeTypeOfKind = (kind: unknown): UiStatusType | undefined => (typeof kind === 'string' ? TYPE_OF_KIND[kind] : undefined)

const isStatusType = (type: unknown): type is UiStatusType => typeof type === 'string' && (UI_STATUS_TYPES as readonly string[]).includes(type)
const isOurState = (state: unknown): state is ResourceStatus => typeof state === 'string' && (RESOURCE_STATUSES as readonly string[]).includes(state)

type Status = Record<string, unknown>
const isObject = (v: unknown): v is Status => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The states that need more than (type, state): see the file's header. */
function refine(type: UiStatusType, ours: ResourceStatus, mapped: string, status: Status): string {
  if (type === 'persistentvolumeclaim' && ours === 'failed' && status.phase === 'Lost') return 'Lost'
  // src/kube/status/batch.ts words a suspended CronJob's warning this way (pinned by the tests).
  if (type === 'cronjob' && ours === 'warning' && typeof status.message === 'string' && status.message.startsWith('suspended')) return 'suspended'
  if (type === 'hpa' && mapped === 'stable' && typeof status.currentReplicas === 'number' && typeof status.desiredReplicas === 'number'
    && status.currentReplicas !== status.desiredReplicas) return 'scaling'
  return mapped
}

/** The UI's names for counters we name otherwise (ours stay too). */
function uiKeys(type: UiStatusType, status: Status): Status {
  const extra: Status = {}
  if (type === 'ingress' && typeof status.externalIP === 'string') {
    if (isIP(status.externalIP)) extra.loadBalancerIP = status.externalIP
    else extra.loadBalancerHostname = status.externalIP
  }
  if (type === 'cronjob' && typeof status.active === 'number') extra.activeJobs = status.active
  if (type === 'hpa' && typeof status.currentCPUUtilization === 'number') extra.currentCPU = status.currentCPUUtilization
  return extra
}

/** The degraded state of the types whose panel has one (a drifted node that still works). */
const DEGRADED: Partial<Record<UiStatusType, string>> = { deployment: 'partial', statefulset: 'partial', daemonset: 'partial', hpa: 'limited' }

/** The UI's state for our `state` on a node of `type` (no status details: the table alone, refined). */
export function uiState(type: UiStatusType, state: string, status: Status = {}): string {
  if (UI_STATES[type].includes(state)) return state // already the UI's (a status the UI saved back)
  if (state === DRIFTED) {
    const live = typeof status.live_state === 'string' && status.live_state !== DRIFTED ? status.live_state : 'unknown'
    const shown = uiState(type, live, { ...status, state: live })
    return live === 'failed' || live === 'deleted' ? shown : DEGRADED[type] ?? shown
  }
  const ours: ResourceStatus = isOurState(state) ? state : 'unknown'
  return refine(type, ours, STATE_TABLE[type][ours], { ...status, state })
}

/**
 * A node status as the UI reads it on a node of `nodeType`: `state` in its set, its key names added. A type
 * without a status panel (plugin, pod, …), or a value that is not a status, is returned unchanged.
 */
export function uiNodeStatus(nodeType: unknown, status: unknown): unknown {
  if (!isStatusType(nodeType) || !isObject(status)) return status
  const state = typeof status.state === 'string' ? status.state : 'unknown'
  return { ...status, ...uiKeys(nodeType, status), ...driftMessage(state, status), state: uiState(nodeType, state, status) }
}

/** How many drifted fields a message names before "and N more". */
const FIELDS_NAMED = 5

function driftMessage(state: string, status: Status): Status {
  if (state !== DRIFTED) return {}
  const fields = isObject(status.drift) && Array.isArray(status.drift.fields) ? status.drift.fields.filter((f): f is string => typeof f === 'string') : []
  const named = fields.slice(0, FIELDS_NAMED).join(', ') + (fields.length > FIELDS_NAMED ? ` and ${fields.length - FIELDS_NAMED} more` : '')
  const live = typeof status.message === 'string' && status.message !== '' ? `; ${status.message}` : ''
  return { message: `drifted from what was applied${named ? `: ${named}` : ''}${live}` }
}

/** A canvas node with its `data._status` in the UI's vocabulary (the same node when it has none). */
export function uiNode<N>(node: N): N {
  if (!isObject(node) || !isObject(node.data) || !('_status' in node.data)) return node
  const status = node.data._status
  if (!isObject(status)) return node
  return { ...node, data: { ...node.data, _status: uiNodeStatus(node.type, status) } } as N
}
