// The SSE streams' event payloads (API.md §7), documented on each stream route as the `x-events` extension
// (event type → description and payload schema) and as the `text/event-stream` response. Payloads are plain
// JSON objects; the same schemas check them in the stream tests.
import { Type, type TSchema } from 'typebox'
import { DriftDetectedEvent, DriftResolvedEvent, NodeDriftSchema } from './drift.ts'

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })

export const NodeStatus = Type.Object({
  state: Type.String({ description: 'running, pending, failed, completed, warning, unknown or deleted (API.md §4); drifted while the objects differ from what was applied (API.md §12)' }),
  live_state: Type.Optional(Type.String({ description: 'while drifted: the state the objects show (running, failed, deleted, ...)' })),
  drift: Type.Optional(NodeDriftSchema),
  message: Type.String(),
  action: Type.Optional(Type.String({ description: 'during a run: what the apply did (created, configured, unchanged, failed, skipped)' })),
  ready: Type.Optional(Type.String({ description: 'e.g. "2/3"' })),
}, { additionalProperties: Type.Union([Type.Number(), Type.String(), Type.Null()]), description: 'node status: `{state, message}` plus the kind\'s counters (replicas, readyReplicas, clusterIP, externalIP, phase, ...)' })

export const NodeUpdateEvent = Type.Object({
  node_id: Type.String(), kind: Type.String({ description: 'Kubernetes kind of the object behind the node' }), status: NodeStatus,
}, { additionalProperties: false })

export const StatusChangeEvent = Type.Object({
  resource_id: Type.String({ description: 'tracked resource id' }), node_id: Type.String(), kind: Type.String(),
  name: Type.String(), namespace: Type.Union([Type.String(), Type.Null()]),
  old_status: Type.String(), new_status: Type.String(), message: Type.String(),
}, { additionalProperties: false })

export const WorkflowSyncEvent = Type.Object({
  nodes: Type.Array(Type.Object({ node_id: Type.String(), status: NodeStatus }, { additionalProperties: false })),
}, { additionalProperties: false })

export const ErrorEvent = Type.Object({ error: Type.String() }, { additionalProperties: false })

export const CompleteEvent = Type.Object({
  run_id: Type.String(), status: Type.String({ description: 'completed or failed' }),
}, { additionalProperties: false })

interface EventDoc { description: string; schema: TSchema | { $ref: string } }

const FRAMES = [
  'Server-Sent Events. Frames: `id: <n>\\nevent: <type>\\ndata: <one line of JSON>\\n\\n` (LF only); the first frame also carries `retry: 3000` and is the `metadata` snapshot; a `: ping` comment comes every SSE_HEARTBEAT_MS (15 s).',
  'Send `Authorization: Bearer <token>` (browsers: read with `fetch`, not EventSource). A client reconnecting with `Last-Event-ID` first gets the events it missed that are still in the replay window (SSE_REPLAY_SIZE per stream), after a fresh `metadata`.',
  'Each subscriber has a bounded buffer (SSE_BUFFER_SIZE, 256 events): a client that reads too slowly loses events (the server logs a warning); the next `metadata` or `workflow_sync` brings it up to date.',
].join('\n\n')

/** The 429 of every SSE route: the user already holds MAX_STREAMS_PER_USER open streams. */
export const tooManyStreams = {
  429: Type.Ref('ErrorResponse', { description: 'this user already holds MAX_STREAMS_PER_USER open streams; close one first' }),
}

export function streamResponse(description: string) {
  return {
    description,
    content: { 'text/event-stream': { schema: Type.String({ description: 'an SSE stream; see x-events for its event types' }) } },
  }
}

export const workflowStreamDoc = {
  description: [
    FRAMES,
    'Events: `metadata` (the workflow; each node\'s live status in `data._status`), `node_update` (a node\'s status: an object of a run applied or failed, or its resource changed in the cluster), `status_change` (a tracked resource of the workflow changed status), `workflow_sync` (every node\'s status: after each run and each watch resync), `error` (a run failed, or the workflow was deleted), `complete` (a run ended), `drift_detected` (a node\'s objects differ from what was applied, or its drifted fields changed), `drift_resolved` (they match again).',
    'Dry runs publish no node status; their `error` and `complete` are sent.',
  ].join('\n\n'),
  events: {
    metadata: { description: 'the workflow as GET /v1/api/workflows/{id} returns it', schema: ref('Workflow') },
    node_update: { description: 'one node\'s status', schema: NodeUpdateEvent },
    status_change: { description: 'a tracked resource of this workflow changed status', schema: StatusChangeEvent },
    workflow_sync: { description: 'every node\'s status after a run or a watch resync', schema: WorkflowSyncEvent },
    drift_detected: { description: 'a node drifted (or its drifted fields changed); a node_update with its status follows', schema: DriftDetectedEvent },
    drift_resolved: { description: 'a drifted node matches what was applied again; a node_update with its status follows', schema: DriftResolvedEvent },
    error: { description: 'a run failed (its error), or the workflow was deleted', schema: ErrorEvent },
    complete: { description: 'a run ended', schema: CompleteEvent },
  } satisfies Record<string, EventDoc>,
}

export const resourceStreamDoc = {
  description: [
    FRAMES,
    'Events: `metadata` (the tracked resource), `node_update` (its node\'s status; for a workload\'s Pod record, the pod\'s own status), `status_change` (its status changed in the cluster), `error` (its cluster became unreachable: statuses may be stale until it answers again).',
  ].join('\n\n'),
  events: {
    metadata: { description: 'the tracked resource as GET /v1/api/resources/{id} returns it', schema: ref('TrackedResource') },
    node_update: { description: 'the status of the resource\'s node (of a workload\'s Pod record: the pod\'s own; the node follows the workload)', schema: NodeUpdateEvent },
    status_change: { description: 'the resource changed status', schema: StatusChangeEvent },
    error: { description: 'the resource\'s cluster is unreachable', schema: ErrorEvent },
  } satisfies Record<string, EventDoc>,
}
