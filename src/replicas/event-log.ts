// The events collection shared by the replicas (API.md §11): every published stream event is one document
// whose `_id` is a sequence number reserved from a counter document, so every replica delivers the same
// events in the same order and an SSE id means the same thing on each of them. `data` is kept as the JSON
// text the SSE frame carries: payloads (labels like `app.kubernetes.io/name`, `$`-prefixed manifest fields)
// are not all valid BSON field names, and the text is what every reader needs anyway.
import type { Collection, Db } from 'mongodb'

export const EVENTS_COLLECTION = 'events'
const COUNTERS_COLLECTION = 'event_counters'
const COUNTER_ID = 'events'
const DEFAULT_RETENTION_S = 3600
const INDEX_OPTIONS_CONFLICT = 85

export interface EventDoc {
  _id: number
  key: string
  type: string
  /** JSON text of the payload. */
  data: string
  at: Date
  /** The replica that published it (src/replicas/identity.ts). */
  origin: string
}

interface CounterDoc { _id: string; seq: number }

/**
 * Kept EVENT_RETENTION_S after `at` (TTL), and `{key, _id}` for a reconnecting client's replay. A changed
 * retention replaces the TTL index (a database refuses to redefine an index under the same name).
 */
export async function eventLogIndexes(db: Db, opts: { eventRetentionS?: number } = {}): Promise<void> {
  const events = db.collection(EVENTS_COLLECTION)
  const ttl = { name: 'at_ttl', expireAfterSeconds: opts.eventRetentionS ?? DEFAULT_RETENTION_S }
  try {
    await events.createIndex({ at: 1 }, ttl)
  } catch (err) {
    if ((err as { code?: number }).code !== INDEX_OPTIONS_CONFLICT) throw err
    await events.dropIndex('at_ttl')
    await events.createIndex({ at: 1 }, ttl)
  }
  await events.createIndex({ key: 1, _id: 1 }, { name: 'key_id' })
}

export class EventLog {
  private readonly events: Collection<EventDoc>
  private readonly counters: Collection<CounterDoc>

  constructor(db: Db) {
    this.events = db.collection<EventDoc>(EVENTS_COLLECTION)
    this.counters = db.collection<CounterDoc>(COUNTERS_COLLECTION)
  }

  /** Reserves `n` consecutive ids; returns the first. */
  async reserve(n: number): Promise<number> {
    const doc = await this.counters.findOneAndUpdate({ _id: COUNTER_ID }, { $inc: { seq: n } }, { upsert: true, returnDocument: 'after' })
    if (!doc) throw new Error('event counter not returned')
    return doc.seq - n + 1
  }

  /**
   * Inserts documents whose ids are reserved. Idempotent: a retry after an error that left some of them
   * written counts those as written (duplicate key) rather than failing again.
   */
  async insert(docs: EventDoc[]): Promise<void> {
    try {
      await this.events.insertMany(docs, { ordered: false })
    } catch (err) {
      const writeErrors = (err as { writeErrors?: Array<{ code?: number }> | { code?: number } }).writeErrors
      const list = Array.isArray(writeErrors) ? writeErrors : writeErrors ? [writeErrors] : null
      if (list && list.length > 0 && list.every((e) => e.code === 11000)) return
      throw err
    }
  }

  /** Up to `limit` events after `after`, oldest first: the tail. */
  after(after: number, limit: number): Promise<EventDoc[]> {
    return this.events.find({ _id: { $gt: after } }).sort({ _id: 1 }).limit(limit).toArray()
  }

  /** The newest `limit` events of `key` in (after, upTo], oldest first: a reconnecting client's replay. */
  async replay(key: string, after: number, upTo: number, limit: number): Promise<EventDoc[]> {
    if (limit <= 0 || upTo <= after) return []
    const docs = await this.events.find({ key, _id: { $gt: after, $lte: upTo } }).sort({ _id: -1 }).limit(limit).toArray()
    return docs.reverse()
  }

  /** Where a new tail starts: the newest event written, else (all expired) the counter. */
  async newestId(): Promise<number> {
    const [newest] = await this.events.find({}, { projection: { _id: 1 } }).sort({ _id: -1 }).limit(1).toArray()
    if (newest) return newest._id
    const counter = await this.counters.findOne({ _id: COUNTER_ID })
    return counter?.seq ?? 0
  }
}
