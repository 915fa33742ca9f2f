// The `import_sessions` collection (API.md §8 "Import"): one analysis of a compose file or a Git repository,
// kept for IMPORT_SESSION_TTL_S (a TTL index on expires_at, plus a check on read since a sweep may lag).
// Owner-scoped: every read takes the owner, so another user's session is indistinguishable from a missing one.
//
// What is never stored: the compose content, the interpolation variables (env, env_file) and a Git token.
// The analysis itself holds no secret value (secret nodes carry keys only).
//
// The analysis is stored as its JSON text (`analysis_json`, made on the worker thread that ran it) and read
// back as that text (RawJson): one string is cheap for the driver and the database to encode, copy and keep,
// where the same analysis as a deep document (1,000 services: tens of thousands of objects) held the event
// loop for hundreds of milliseconds on each write and read (issue 22). Sessions written before hold a deep
// `analysis` document; they read the same.
import type { Collection, Db } from 'mongodb'
import { indexSetups } from './indexes.ts'
import { newId, isId } from './ids.ts'
import type { Analysis } from '../services/import/index.ts'
import { RawJson } from '../events/raw-json.ts'

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
  /** The analysis as JSON text (a completed session). */
  analysis_json?: string | null
  /** The analysis as a document: sessions written before analysis_json. */
  analysis?: Analysis | null
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
  /** The analysis's JSON text, sent as is (a reply, an event); parsed only where the graph is used. */
  analysis?: RawJson
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

export function toImportSession(doc: ImportSessionDoc, analysisJson?: string): ImportSession {
  const { _id, owner_id: _o, instance_id: _i, heartbeat_at: _h, analysis: legacy, analysis_json: stored, created_at, updated_at, finished_at, expires_at, ...rest } = doc
  const json = analysisJson ?? stored ?? (legacy ? JSON.stringify(legacy) : undefined)
  return {
    id: _id, ...rest, ...(json !== undefined && { analysis: new RawJson(json) }),
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
export type ImportOutcome = Pick<ImportSessionDoc, 'status' | 'progress' | 'message' | 'error' | 'logs'> & Partial<Pick<ImportSessionDoc, 'commit' | 'branch'>> & {
  /** The analysis's JSON text (completed), or null. */
  analysis_json: string | null
}

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
      // analysis: null replaces nothing on a session written today; it keeps an old document's shape single.
      { $set: { ...outcome, analysis: null, updated_at: at, finished_at: at } },
      // The analysis is not read back: the caller has its text.
      { returnDocument: 'after', projection: { analysis_json: 0, analysis: 0 } },
    )
    return doc && toImportSession(doc, outcome.analysis_json ?? undefined)
  }

  /**
   * Fails a session another process abandoned, only if it is still as the sweep saw it: unfinished, of the
   * same process, with no heartbeat since. Of replicas sweeping at once exactly one matches (it alone
   * notifies). Null when not matched.
   */
  async settleAbandoned(seen: Pick<ImportSessionDoc, '_id' | 'instance_id' | 'heartbeat_at'>, outcome: ImportOutcome): Promise<ImportSession | null> {
    const at = new Date()
    const doc = await this.c.findOneAndUpdate(
      { _id: seen._id, status: { $in: UNFINISHED }, instance_id: seen.instance_id, heartbeat_at: seen.heartbeat_at },
      { $set: { ...outcome, analysis: null, updated_at: at, finished_at: at } },
      { returnDocument: 'after', projection: { analysis_json: 0, analysis: 0 } },
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
