// The audit log's read side (API.md §12): the admin's view of every entry and a user's view of their own.
// Writing is the recorder's (recorder.ts), fed by the request hook in plugins/audit.ts and by the terminal.
import { BadRequest } from '../../../errors.ts'
import type { AuditEntry, AuditFilter, AuditOutcome, AuditRepository } from '../../../repositories/audit.ts'
import type { Page } from '../../../repositories/pagination.ts'

export { AuditRecorder, type NewAuditEntry } from './recorder.ts'
export { TerminalAudit, TERMINAL_ACTION } from './terminal.ts'
export { outcomeOf } from './outcome.ts'
export { nameRoute, canonicalKey, type AuditRouteConfig, type RouteNaming } from './actions.ts'

export interface AuditQuery {
  page?: number
  limit?: number
  actor_id?: string
  action?: string
  target_id?: string
  outcome?: AuditOutcome
  /** ISO 8601 times (the route schema checks the format). */
  from?: string
  to?: string
}

function filterOf(q: AuditQuery): AuditFilter {
  const from = q.from === undefined ? undefined : new Date(q.from)
  const to = q.to === undefined ? undefined : new Date(q.to)
  if (from && Number.isNaN(from.getTime())) throw new BadRequest('from must be an ISO 8601 time')
  if (to && Number.isNaN(to.getTime())) throw new BadRequest('to must be an ISO 8601 time')
  if (from && to && from > to) throw new BadRequest('from must not be after to')
  return { actor_id: q.actor_id, action: q.action, target_id: q.target_id, outcome: q.outcome, from, to }
}

export class AuditService {
  constructor(private readonly repo: AuditRepository) {}

  /** Everyone's entries, newest first (admins; the route checks the role). */
  listAll(q: AuditQuery): Promise<Page<AuditEntry>> {
    return this.repo.listAll(filterOf(q), { page: q.page, limit: q.limit })
  }

  /** The caller's own entries, newest first; an actor filter cannot widen it. */
  listOwn(userId: string, q: Omit<AuditQuery, 'actor_id'>): Promise<Page<AuditEntry>> {
    const { actor_id: _ignored, ...filter } = filterOf(q)
    return this.repo.listOwn(userId, filter, { page: q.page, limit: q.limit })
  }
}
