// The audit log (API.md §12): one entry per state-changing request, terminal session edge and share
// change; the admin's list of everyone's and a user's list of their own.
import { Type } from 'typebox'
import { Defaulted, StringEnum, Timestamp } from './common.ts'
import { MAX_PAGE_SIZE } from './pagination.ts'

export const AUDIT_OUTCOMES = ['ok', 'denied', 'failed'] as const

const Nullable = <T extends ReturnType<typeof Type.String>>(s: T) => Type.Union([s, Type.Null()])

export const AuditSession = Type.Object({
  phase: StringEnum(['open', 'close'], { description: '`open`: the shell connected (or was refused: see status); `close`: the session ended' }),
  exit_code: Type.Optional(Type.Union([Type.Integer(), Type.Null()], { description: 'the shell\'s exit code (close; null when it did not exit by itself)' })),
  bytes_in: Type.Optional(Type.Integer({ minimum: 0, description: 'bytes typed into the terminal (close); a count only, the input is never kept' })),
  bytes_out: Type.Optional(Type.Integer({ minimum: 0, description: 'bytes of terminal output (close); a count only' })),
  duration_ms: Type.Optional(Type.Integer({ minimum: 0, description: 'from the shell connecting to the end (close)' })),
}, { additionalProperties: false, description: 'terminal sessions (`resource.exec`) only' })

export const AuditEntry = Type.Object({
  id: Type.String(),
  at: Timestamp,
  actor_id: Nullable(Type.String({ description: 'the user who made the request; null when unknown (no valid token, a sign-in with an unknown email)' })),
  actor_email: Nullable(Type.String({ description: 'the actor\'s email when the entry was made' })),
  action: Type.String({ description: '`<group>.<verb>`, derived from the route\'s operationId: `workflow.run`, `workflow.rollback`, `cluster.share`, `cluster.unshare`, `resource.exec`, `auth.login`' }),
  target_type: Nullable(Type.String({ description: 'what the path names: `workflow`, `cluster`, `resource`, …' })),
  target_id: Nullable(Type.String({ description: 'the id (or cluster name) in the path; for a create, the new record\'s id; null otherwise' })),
  subject_id: Nullable(Type.String({ description: 'the other user a change is about: a share\'s grantee' })),
  outcome: StringEnum(AUDIT_OUTCOMES, { description: '`ok` (status < 400), `denied` (401, 403 and 404: another user\'s id answers 404) or `failed` (any other error)' }),
  status: Type.Integer({ description: 'the HTTP status answered (101 for a terminal session, 499 for one the client left before it connected)' }),
  ip: Nullable(Type.String()),
  request_id: Nullable(Type.String({ description: 'the request\'s id in the service log' })),
  session: Type.Optional(AuditSession),
}, { additionalProperties: false, description: `kept AUDIT_RETENTION_DAYS (90) days; never holds a body, a query string, a header or a secret` })

const AuditFilters = {
  action: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '^[a-z_]+\\.[a-z0-9_]+$', description: 'exact action, e.g. `workflow.run`' })),
  target_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'exact target id (or cluster name)' })),
  outcome: Type.Optional(StringEnum(AUDIT_OUTCOMES)),
  from: Type.Optional(Type.String({ format: 'date-time', description: 'entries at or after this ISO 8601 time' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'entries at or before this ISO 8601 time' })),
}

const Paging = {
  page: Defaulted(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'page number, from 1' })),
  limit: Defaulted(Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: 20, description: `entries per page (at most ${MAX_PAGE_SIZE})` })),
}

/** The caller's own entries: every filter but the actor. Newest first, always. */
export const OwnAuditQuery = Type.Object({ ...Paging, ...AuditFilters }, { additionalProperties: false })

export const AdminAuditQuery = Type.Object({
  ...Paging,
  actor_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'entries of this user' })),
  ...AuditFilters,
}, { additionalProperties: false })

export const AuditList = Type.Object({
  entries: Type.Array(AuditEntry),
  total: Type.Integer({ minimum: 0 }),
  page: Type.Integer({ minimum: 1 }),
  limit: Type.Integer({ minimum: 1 }),
}, { additionalProperties: false })
