// The `notification_deliveries` collection (API.md §12): one record per notification per channel, with
// every attempt. It is also the delivery queue: a replica takes a due record with one atomic
// findOneAndUpdate that stamps a claim token and a claim expiry, so each record is worked by one replica
// at a time, and a record whose replica died is taken again once its claim expires. State lives here, not
// in a process, so a restart loses nothing. Records expire at `expires_at` (TTL).
import type { Collection, Db, Filter } from 'mongodb'
import { randomUUID } from 'node:crypto'
import { indexSetups } from './indexes.ts'
import { newId, isId } from './ids.ts'
import { paginate, type Page, type PageRequest } from './pagination.ts'
import type { DeliveryStatus } from '../../schemas/notifications.ts'

export interface DeliveredNotification { id: string; type: string; title: string; message: string; link: string; created_at: string }

export interface AttemptDoc { at: Date; status_code: number | null; error: string | null; duration_ms: number; redirects: number }

export interface DeliveryDoc {
  _id: string
  owner_id: string
  channel_id: string
  /** The notification's type, or "test". */
  type: string
  test: boolean
  /** What is sent: a copy, so a delivery outlives its notification and a test needs none stored. */
  notification: DeliveredNotification
  status: DeliveryStatus
  attempts: AttemptDoc[]
  /** When a pending record is due; null once finished. */
  next_at: Date | null
  /** Set while one replica works the record; only that holder may record the attempt. */
  claim_token: string | null
  claim_until: Date | null
  created_at: Date
  finished_at: Date | null
  expires_at: Date
}

export interface Delivery {
  id: string; channel_id: string; type: string; test: boolean; status: DeliveryStatus
  attempts: Array<{ at: string; status_code: number | null; error: string | null; duration_ms: number; redirects: number }>
  next_attempt_at: string | null; notification: DeliveredNotification; created_at: string; finished_at: string | null
}

export const toDelivery = (d: DeliveryDoc): Delivery => ({
  id: d._id, channel_id: d.channel_id, type: d.type, test: d.test, status: d.status,
  attempts: d.attempts.map((a) => ({ ...a, at: a.at.toISOString() })),
  next_attempt_at: d.next_at ? d.next_at.toISOString() : null, notification: d.notification,
  created_at: d.created_at.toISOString(), finished_at: d.finished_at ? d.finished_at.toISOString() : null,
})

indexSetups.push(async (db) => {
  const c = db.collection('notification_deliveries')
  await c.createIndex({ owner_id: 1, channel_id: 1, created_at: -1 })
  await c.createIndex({ status: 1, next_at: 1 })
  await c.createIndex({ expires_at: 1 }, { expireAfterSeconds: 0, name: 'expires_at_ttl' })
})

export interface NewDelivery { owner_id: string; channel_id: string; type: string; test: boolean; notification: DeliveredNotification }

/** A claimed record and the token that proves the claim. */
export interface Claimed { doc: DeliveryDoc; token: string }

/** What one attempt concluded: the record's next status and, when pending, when it is due again. */
export interface AttemptOutcome { attempt: AttemptDoc; status: DeliveryStatus; next_at: Date | null }

export class NotificationDeliveryRepository {
  private readonly c: Collection<DeliveryDoc>
  constructor(db: Db, private readonly retentionMs: number) {
    this.c = db.collection<DeliveryDoc>('notification_deliveries')
  }

  private fresh(input: NewDelivery, now: Date): DeliveryDoc {
    return {
      _id: newId(), ...input, status: 'pending', attempts: [], next_at: now, claim_token: null, claim_until: null,
      created_at: now, finished_at: null, expires_at: new Date(now.getTime() + this.retentionMs),
    }
  }

  /** Pending records, due now, for any replica to take. */
  async enqueue(inputs: NewDelivery[], now = new Date()): Promise<DeliveryDoc[]> {
    if (!inputs.length) return []
    const docs = inputs.map((i) => this.fresh(i, now))
    await this.c.insertMany(docs)
    return docs
  }

  /** A pending record already claimed by the caller (a test delivery sent at once by the request's replica). */
  async enqueueClaimed(input: NewDelivery, claimMs: number, now = new Date()): Promise<Claimed> {
    const token = randomUUID()
    const doc: DeliveryDoc = { ...this.fresh(input, now), claim_token: token, claim_until: new Date(now.getTime() + claimMs) }
    await this.c.insertOne(doc)
    return { doc, token }
  }

  /** Takes the most overdue record nobody holds (or whose holder's claim expired); null when none is due. */
  async claim(claimMs: number, now = new Date()): Promise<Claimed | null> {
    const token = randomUUID()
    const doc = await this.c.findOneAndUpdate(
      { status: 'pending', next_at: { $lte: now }, $or: [{ claim_until: null }, { claim_until: { $lte: now } }] },
      { $set: { claim_token: token, claim_until: new Date(now.getTime() + claimMs) } },
      { sort: { next_at: 1 }, returnDocument: 'after' },
    )
    return doc && { doc, token }
  }

  /** Records an attempt and releases the claim; null when the claim was lost (expired and taken again, or the record deleted). */
  async record(claimed: Claimed, outcome: AttemptOutcome, now = new Date()): Promise<DeliveryDoc | null> {
    return this.c.findOneAndUpdate(
      { _id: claimed.doc._id, claim_token: claimed.token },
      {
        $push: { attempts: outcome.attempt },
        $set: { status: outcome.status, next_at: outcome.next_at, claim_token: null, claim_until: null, finished_at: outcome.status === 'pending' ? null : now },
      },
      { returnDocument: 'after' },
    )
  }

  /** Gives a claim back without an attempt (shutdown): the record is due again at once, for any replica. */
  async release(claimed: Claimed, now = new Date()): Promise<void> {
    await this.c.updateOne({ _id: claimed.doc._id, claim_token: claimed.token }, { $set: { claim_token: null, claim_until: null, next_at: now } })
  }

  /** When the next pending record is due (the earliest `next_at`), or null when none is pending. */
  async nextDue(): Promise<Date | null> {
    const [doc] = await this.c.find({ status: 'pending' }, { projection: { next_at: 1 } }).sort({ next_at: 1 }).limit(1).toArray()
    return doc?.next_at ?? null
  }

  async get(ownerId: string, id: string): Promise<DeliveryDoc | null> {
    if (!isId(id)) return null
    return this.c.findOne({ _id: id, owner_id: ownerId })
  }

  list(ownerId: string, channelId: string, req: PageRequest, opts: { status?: DeliveryStatus } = {}): Promise<Page<Delivery>> {
    const filter: Filter<DeliveryDoc> = { owner_id: ownerId, channel_id: channelId, ...(opts.status && { status: opts.status }) }
    return paginate(this.c, req, { filter, sortFields: { created_at: 'created_at' }, searchFields: ['type', 'notification.title'] }, toDelivery)
  }

  /** With their channel: nothing is sent for a channel that is gone. */
  async deleteForChannel(ownerId: string, channelId: string): Promise<number> {
    return (await this.c.deleteMany({ owner_id: ownerId, channel_id: channelId })).deletedCount
  }
}
