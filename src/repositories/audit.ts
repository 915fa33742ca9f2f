// The `audit` collection (API.md §12): who changed what, when, and how it ended. Entries are written in
// batches by the recorder (src/services/lifecycle/audit/recorder.ts) and only ever read back; they expire
// AUDIT_RETENTION_DAYS after `at` (a TTL index). Reads are scoped in here: `listOwn` takes the caller and
// matches only the entries they are the actor of, whatever filter comes with it.
import type { Collection, Db, Filter } from 'mongodb'
import { paginate, type Page, type PageRequest } from './pagination.ts'

export const AUDIT_COLLECTION = 'audit'

export const AUDIT_OUTCOMES = ['ok', 'denied', 'failed'] as const
export type AuditOutcome = typeof AUDIT_OUTCOMES[number]

/** A terminal session's side of an entry: its opening, or its end with what went through it (counts only). */
export interface TerminalSessionFields {
  phase: 'open' | 'close'
  exit_code?: number | null
  bytes_in?: number
  bytes_out?: number
  duration_ms?: number
}

export interface AuditDoc {
  _id: string
  at: Date
  actor_id: string | null
  actor_email: string | null
  action: string
  target_type: string | null
  target_id: string | null
  /** The other user a change is about (a share's grantee); never an email. */
  subject_id: string | null
  outcome: AuditOutcome
  status: number
  ip: string | null
  request_id: string | null
  session?: TerminalSessionFields
}

export interface AuditEntry extends Omit<AuditDoc, '_id' | 'at' | 'session'> { id: string; at: string; session?: TerminalSessionFields }

export interface AuditFilter {
  actor_id?: string
  action?: string
  target_id?: string
  outcome?: AuditOutcome
  from?: Date
  to?: Date
}

export const toAuditEntry = ({ _id, at, session, ...rest }: AuditDoc): AuditEntry => ({ id: _id, at: at.toISOString(), ...rest, ...(session && { session }) })

const INDEX_OPTIONS_CONFLICT = 85
const TTL_INDEX = 'at_ttl'

/**
 * The filters' indexes (newest first within an actor, an action, a target) and the retention TTL. A changed
 * retention replaces the TTL index: a database refuses to redefine an index under the same name.
 */
export async function auditIndexes(db: Db, retentionS: number): Promise<void> {
  const c = db.collection(AUDIT_COLLECTION)
  const ttl = { name: TTL_INDEX, expireAfterSeconds: retentionS }
  try {
    await c.createIndex({ at: 1 }, ttl)
  } catch (err) {
    if ((err as { code?: number }).code !== INDEX_OPTIONS_CONFLICT) throw err
    await c.dropIndex(TTL_INDEX)
    await c.createIndex({ at: 1 }, ttl)
  }
  await c.createIndex({ actor_id: 1, at: -1 }, { name: 'actor_at' })
  await c.createIndex({ action: 1, at: -1 }, { name: 'action_at' })
  await c.createIndex({ target_id: 1, at: -1 }, { name: 'target_at' })
}

export class AuditRepository {
  private readonly c: Collection<AuditDoc>
  constructor(db: Db) {
    this.c = db.collection<AuditDoc>(AUDIT_COLLECTION)
  }

  /** Unordered: one bad document does not keep the rest of the batch out. */
  async insertMany(docs: AuditDoc[]): Promise<void> {
    if (docs.length) await this.c.insertMany(docs, { ordered: false })
  }

  /** Every user's entries (the admin view), newest first. */
  listAll(filter: AuditFilter, req: PageRequest): Promise<Page<AuditEntry>> {
    return this.page(this.filter(filter), req)
  }

  /** The entries `actorId` is the actor of, newest first; an `actor_id` in the filter is ignored. */
  listOwn(actorId: string, filter: Omit<AuditFilter, 'actor_id'>, req: PageRequest): Promise<Page<AuditEntry>> {
    return this.page(this.filter({ ...filter, actor_id: actorId }), req)
  }

  private page(filter: Filter<AuditDoc>, req: PageRequest): Promise<Page<AuditEntry>> {
    // `at` then `_id` (ObjectIds grow with time): entries of one millisecond keep their order.
    return paginate(this.c, { ...req, sort: 'at', search: undefined }, { filter, sortFields: { at: 'at' } }, toAuditEntry)
  }

  private filter(f: AuditFilter): Filter<AuditDoc> {
    const q: Filter<AuditDoc> = {}
    if (f.actor_id !== undefined) q.actor_id = f.actor_id
    if (f.action !== undefined) q.action = f.action
    if (f.target_id !== undefined) q.target_id = f.target_id
    if (f.outcome !== undefined) q.outcome = f.outcome
    if (f.from || f.to) q.at = { ...(f.from && { $gte: f.from }), ...(f.to && { $lte: f.to }) }
    return q
  }
}
