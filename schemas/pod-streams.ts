// Query strings of a tracked resource's pod log stream and terminal (API.md §7).
import { Type } from 'typebox'
import { Defaulted } from './common.ts'

/** The most lines a log stream's `tail` may ask for. */
export const LOG_TAIL_MAX = 5000

const PodName = Type.String({ maxLength: 253, description: 'one of the workload\'s pods (GET /v1/api/resources/{id}/pods lists them); default: a ready one, newest first. Empty = default' })
const ContainerName = Type.String({ maxLength: 253, description: 'a container of the pod; default: its first. Empty = default' })

export const LogStreamQuery = Type.Object({
  pod: Type.Optional(PodName),
  container: Type.Optional(ContainerName),
  tail: Defaulted(Type.Integer({ minimum: 0, maximum: LOG_TAIL_MAX, default: 100, description: `lines of history sent first (0–${LOG_TAIL_MAX})` })),
  since_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 31_536_000, description: 'only lines newer than this many seconds' })),
  follow: Defaulted(Type.Boolean({ default: true, description: 'keep streaming new lines; false sends the tail, then `complete`' })),
  timestamps: Defaulted(Type.Boolean({ default: false, description: 'also prefix each `line` with its RFC 3339 time (as `kubectl logs --timestamps`); the `timestamp` field carries it either way' })),
}, { additionalProperties: false })

export const TerminalQuery = Type.Object({
  shell: Type.Optional(Type.String({ maxLength: 64, description: 'sh (default), bash, ash, zsh, or their /bin/ paths; anything else is refused with an `error` message' })),
  pod: Type.Optional(PodName),
  container: Type.Optional(ContainerName),
  token: Type.Optional(Type.String({ maxLength: 8192, description: 'the access token (browsers cannot set headers on a WebSocket); never logged. An Authorization header works too' })),
}, { additionalProperties: false })

export const PodLogsMetadata = Type.Object({
  pod: Type.String(), container: Type.String(), namespace: Type.String(), cluster: Type.String({ description: 'the cluster\'s name' }),
}, { additionalProperties: false })
export const PodLogEvent = Type.Object({
  line: Type.String({ description: 'one line, without its newline; cut at LOG_LINE_MAX_BYTES (then ending in "…[line truncated]")' }),
  timestamp: Type.Union([Type.String(), Type.Null()], { description: 'when the kubelet recorded the line (ISO 8601 UTC); null if it did not say' }),
}, { additionalProperties: false })
export const PodLogsError = Type.Object({ error: Type.String() }, { additionalProperties: false })
export const PodLogsComplete = Type.Object({}, { additionalProperties: false })

export const podLogsStreamDoc = {
  description: [
    'Server-Sent Events. Frames: `id: <n>\\nevent: <type>\\ndata: <one line of JSON>\\n\\n` (LF only); the first frame also carries `retry: 3000` and is the `metadata` event; a `: ping` comment comes every SSE_HEARTBEAT_MS (15 s). Send `Authorization: Bearer <token>` (browsers: read with `fetch`).',
    'The pod is the resource itself (a Pod) or one of its pods (a Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, or a Service through its selector): `pod` picks one, by default a ready one, newest first. Viewer access to the cluster suffices.',
    'Events: `metadata {pod, container, namespace, cluster}`, `log {line, timestamp}` (the last `tail` lines first, then, with `follow`, new lines as they come), `error {error}` (an unknown container, a container not started yet, the cluster failing), `complete {}` (the log ended: `follow=false` after the tail, the container stopped, or after an `error`); the response ends after `complete`.',
    'Clients following the same pod, container and options share one request to the cluster, stopped when the last one leaves; a client joining it first gets its recent lines (up to `tail`, within SSE_REPLAY_SIZE events), and one reconnecting with `Last-Event-ID` the lines it missed from that window. A client reading too slowly loses lines (SSE_BUFFER_SIZE per client; the server logs a warning).',
  ].join('\n\n'),
  events: {
    metadata: { description: 'which pod and container the lines come from', schema: PodLogsMetadata },
    log: { description: 'one log line', schema: PodLogEvent },
    error: { description: 'the log cannot be read, or reading it failed', schema: PodLogsError },
    complete: { description: 'the log ended; the response ends after it', schema: PodLogsComplete },
  },
}

// The terminal's JSON text frames (API.md §7), documented on the route as `x-websocket-messages`.
const Str = Type.String()
export const TerminalServerMessage = Type.Union([
  Type.Object({ type: Type.Literal('metadata'), data: Type.Object({ pod: Str, container: Str, namespace: Str, cluster: Str, shell: Str }, { additionalProperties: false }) }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('output'), data: Type.String({ description: 'terminal output (UTF-8; a TTY merges stderr into it)' }) }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('error'), data: Type.String({ description: 'why a request was refused or a frame rejected' }) }, { additionalProperties: false }),
  Type.Object({
    type: Type.Literal('close'),
    data: Type.Object({
      reason: Type.String({ description: 'exited, idle timeout, refused, the client closed the connection, the service is shutting down, ...' }),
      exit_code: Type.Union([Type.Integer(), Type.Null()], { description: 'the shell\'s exit code; null when it did not exit by itself' }),
    }, { additionalProperties: false }),
  }, { additionalProperties: false }),
])
export const TerminalClientMessage = Type.Union([
  Type.Object({ type: Type.Literal('input'), data: Type.String({ description: 'keystrokes, as the terminal sends them (\\r for Enter)' }) }),
  Type.Object({ type: Type.Literal('resize'), rows: Type.Integer({ minimum: 1, maximum: 1000 }), cols: Type.Integer({ minimum: 1, maximum: 1000 }) }),
])
