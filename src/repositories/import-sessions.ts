// The `import_sessions` collection (API.md §8 "Import"): one analysis of a compose file or a Git repository,
// kept for IMPORT_SESSION_TTL_S (a TTL index on expires_at, plus a check on read since a sweep may lag).
// Owner-scoped: every read takes the owner, so another user's session is indistinguishable from a missing one.
//
// What is never stored: the compose content, the interpolation variables (env, env_file) and a Git token.
// The analysis itself holds no secret value (secret nodes carry keys only).
import type { Collection, Db } from 'mongodb'
import { indexSetups } from './indexes.ts'
import { newId, isId } from './ids.ts'
import type { Analysis } from '../services/import/index.ts'

export type ImportSource = 'compose' | 'git'
export type ImportStatus = 'pending' | 'cloning' | 'analyzing' | 'completed' | 'failed'
export const TERMINAL_STATUSES: ReadonlySet<ImportStatus> = new Set(['completed', 'failed'])
const UNFINISHED: ImportStatus[] = ['pending', 'cloning', 'analyzing']

export interface ImportSessionDoc {
  _id: string
  owner_id: string
  source: ImportSource
  status: ImportStatus
  /** 0..100 */
  progress: number
  /** What the session is doing now, or how it ended. */
  message: string
  error: string | null
  analysis: Analysis | null
  /** compose: the uploaded file's name, if any. */
  filename: string | null
  /** git: where from (never with credentials: the URL is refused when it carries any). */
  url: string | null
  branch: string | null
  path: string | null
  commit: string | null
  logs: string[]
  created_at: Date
  updated_at: Date
  finished_at: Date | null
  expires_at: Date
  /** The process doing the work, and when it last said it still is (start-up recovery). Internal. */
  instance_id: string
  heartbeat_at: Date
}

export interface ImportSession {
  id: string
  source: ImportSource
  status: ImportStatus
  progress: number
  message: string
  error: string | null
  analysis?: Analysis
  filename: string | null
  url: string | null
  branch: string | null
  path: string | null
  commit: string | null
  logs: string[]
  created_at: string
  updated_at: string
  finished_at: string | null
  expires_at: string
}

export function toImportSession(doc: ImportSessionDoc): ImportSession {
  const { _id, owner_id: _o, instance_id: _i, heartbeat_at: _h, analysis, created_at, updated_at, finished_at, expires_at, ...rest } = doc
  return {
    id: _id, ...rest, ...(analysis && { analysis }),
    created_at: created_at.toISOString(), updated_at: updated_at.toISOString(),
    finished_at: finished_at ? finished_at.toISOString() : null, expires_at: expires_at.toISOString(),
  }
}

indexSetups.push(async (db) => {
  const c = db.collection('import_sessions')
  await c.createIndex({ expires_at: 1 }, { expireAfterSeconds: 0, name: 'expires_at_ttl' })
  // Start-up recovery looks for sessions a dead process left unfinished.
  await c.createIndex({ status: 1 })
})

export type ImportProgress = Partial<Pick<ImportSessionDoc, 'status' | 'progress' | 'message' | 'logs' | 'commit' | 'branch'>>
export type ImportOutcome = Pick<ImportSessionDoc, 'status' | 'progress' | 'message' | 'error' | 'analysis' | 'logs'> & Partial<Pick<ImportSessionDoc, 'commit' | 'branch'>>

export class ImportSessionRepository {
  private readonly c: Collection<ImportSessionDoc>

  constructor(db: Db) {
    this.c = db.collection<ImportSessionDoc>('import_sessions')
  }

  async create(input: Omit<ImportSessionDoc, '_id'>): Promise<ImportSession> {
    const doc: ImportSessionDoc = { _id: newId(), ...input }
    await this.c.insertOne(doc)
    return toImportSession(doc)
  }

  /** The owner's session, unless it expired (the TTL sweep may not have removed it yet). */
  async get(ownerId: string, id: string, now = new Date()): Promise<ImportSession | null> {
    if (!isId(id)) return null
    const doc = await this.c.findOne({ _id: id, owner_id: ownerId, expires_at: { $gt: now } })
    return doc && toImportSession(doc)
  }

  /** Progress of a session still going; false when it had already ended. */
  async progress(id: string, fields: ImportProgress): Promise<boolean> {
    const res = await this.c.updateOne({ _id: id, status: { $in: UNFINISHED } }, { $set: { ...fields, updated_at: new Date() } })
    return res.matchedCount > 0
  }

  /** Records the end of a session; null when it had already ended (e.g. marked interrupted meanwhile). */
  async finish(id: string, outcome: ImportOutcome): Promise<ImportSession | null> {
    const at = new Date()
    const doc = await this.c.findOneAndUpdate(
      { _id: id, status: { $in: UNFINISHED } },
      { $set: { ...outcome, updated_at: at, finished_at: at } },
      { returnDocument: 'after' },
    )
    return doc && toImportSession(doc)
  }

  /** Unfinished sessions of other processes that have not said they are alive since `before`. */
  async abandoned(instanceId: string, before: Date): Promise<ImportSessionDoc[]> {
    return this.c.find({ status: { $in: UNFINISHED }, instance_id: { $ne: instanceId }, heartbeat_at: { $lt: before } }).toArray()
  }

  /** Unfinished sessions of this process (shutdown). */
  async unfinishedOf(instanceId: string): Promise<ImportSessionDoc[]> {
    return this.c.find({ status: { $in: UNFINISHED }, instance_id: instanceId }).toArray()
  }

  /** This process's sessions are alive. */
  async heartbeat(ids: string[], at: Date): Promise<void> {
    if (ids.length) await this.c.updateMany({ _id: { $in: ids }, status: { $in: UNFINISHED } }, { $set: { heartbeat_at: at } })
  }
}
