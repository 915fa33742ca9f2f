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
