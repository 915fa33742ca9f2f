// The resource page's live channels in the KubeOrch UI's dialect (CONTRACT.md §4 "Resource status", "Pod
// logs", §5): the same streams and terminal as /v1/api, re-encoded event by event. Each function is
// defined once at module level, so the SSE layer caches an event's encoding for every UI client alike.
import type { Reframe } from '../../events/sse.ts'
import type { TerminalEncoder } from '../../routes/resources/terminal.ts'
import { uiStatus, toUiResource } from './resource-shape.ts'
import type { TrackedResource } from '../../repositories/resources.ts'
import { type Json, isObject } from './translate.ts'

const errorText = (data: unknown) => (isObject(data) && typeof data.error === 'string' ? data.error : 'the stream failed')

/** The keys of a status the resource page reads (useResourceStatusStream's ResourceStatus); nothing else is sent. */
const STATUS_KEYS = ['message', 'replicas', 'readyReplicas', 'clusterIP', 'externalIP', 'nodePort', 'phase', 'loadBalancerIP', 'loadBalancerHostname'] as const

/** `{state, message?, replicas?, …}` from one of our node statuses (`{state, message, ...counters}`). */
export function uiStatusOf(status: Json): Json {
  // A drifted node (API.md §12) still has its objects' own state: the resource page shows that, as its badge
  // (from the record) does; the drift is the workflow canvas's to show.
  const state = status.state === 'drifted' && typeof status.live_state === 'string' ? status.live_state : status.state
  const out: Json = { state: uiStatus(state) }
  for (const key of STATUS_KEYS) if (status[key] !== undefined && status[key] !== null) out[key] = status[key]
  return out
}

/**
 * Resource status stream: `metadata` → `{id, name, namespace, type, status, spec}`; our `node_update`
 * (`{node_id, kind, status}`) and `status_change` (`{new_status, message}`) → `status_update {status}`;
 * `error {error}` → the error text (the page shows a JSON string as is). The page ignores anything else.
 *
 * Both become `status_update` because each carries what the other lacks: node_update has the counts
 * (replicas, readyReplicas, ...) and comes alone when only they change, but its status is the node's, the
 * worst of the node's objects; status_change follows it on every change of status with the resource's
 * own state and message, which is what the page shows (the latest update replaces the previous one).
 */
export const resourceStreamReframe: Reframe = (type, data) => {
  if (!isObject(data)) return null
  switch (type) {
    case 'metadata': {
      const r = toUiResource(data as unknown as TrackedResource)
      return { type, data: { id: r.id, name: r.name, namespace: r.namespace, type: r.type, status: r.status, spec: r.spec } }
    }
    case 'node_update':
      return isObject(data.status) ? { type: 'status_update', data: { status: uiStatusOf(data.status) } } : null
    case 'status_change':
      return { type: 'status_update', data: { status: uiStatusOf({ state: data.new_status, message: data.message }) } }
    case 'error':
      return { type, data: errorText(data) }
    case 'complete':
      return { type, data }
    default:
      return null
  }
}

/**
 * Pod log stream: `log {line, timestamp}` → one line of raw text "<RFC 3339 time> <line>" (the page splits
 * it at the first space); `error {error}` → raw text; `metadata {pod, container, namespace, cluster}` and
 * `complete` as they are. A line the kubelet sent without a time gets "-" in its place, so the page never
 * takes the line's first word for a time.
 */
export const podLogReframe: Reframe = (type, data) => {
  switch (type) {
    case 'log': {
      if (!isObject(data) || typeof data.line !== 'string') return null
      return { type, text: `${typeof data.timestamp === 'string' ? data.timestamp : '-'} ${data.line}` }
    }
    case 'error':
      return { type, text: errorText(data) }
    case 'metadata':
    case 'complete':
      return { type, data: data ?? {} }
    default:
      return null
  }
}

/** Our close payload `{reason, exit_code}` as the one line the UI prints: "exited (exit code 3)". */
function closeReason(data: unknown): string {
  if (!isObject(data) || typeof data.reason !== 'string') return typeof data === 'string' ? data : 'closed'
  return typeof data.exit_code === 'number' ? `${data.reason} (exit code ${data.exit_code})` : data.reason
}

/**
 * Terminal frames: `metadata.data` is a JSON *string* of `{pod, container, namespace, cluster}` (the UI
 * parses it a second time), `close.data` the reason as a string; `output` and `error` are unchanged.
 */
export const terminalEncoder: TerminalEncoder = (type, data) => {
  if (type === 'metadata') return JSON.stringify({ type, data: JSON.stringify(data) })
  if (type === 'close') return JSON.stringify({ type, data: closeReason(data) })
  return JSON.stringify({ type, data })
}
