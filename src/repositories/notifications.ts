// The `notifications` collection (API.md §10): what happened to a user's runs, builds, imports, clusters and
// resources, kept 30 days (a TTL index on created_at). Every query takes the owner, so one user can
// neither read nor mark another's notifications.
import type { Collection, Db, Filter } from 'mongodb'
import { indexSetups } from './indexes.ts'
import { newId, isId } from './ids.ts'
import { paginate, type Page, type PageRequest } from './pagination.ts'
import type { NotificationType } from '../../schemas/notifications.ts'

export const NOTIFICATION_RETENTION_S = 30 * 24 * 3600

export interface NotificationDoc {
  _id: string
  owner_id: string
  type: NotificationType
  title: string
  message: string
  /** API path of the subject (run, build, import, cluster, resource). */
  link: string
  read: boolean
  created_at: Date
}

export interface Notification { id: string; type: NotificationType; title: string; message: string; link: string; read: boolean; created_at: string }

export type NewNotification = Pick<NotificationDoc, 'type' | 'title' | 'message' | 'link'>

/** A narrower set of one owner's notifications (the KubeOrch UI's alert pages read the failures). */
export interface NotificationFilter {
  read?: boolean
  types?: readonly NotificationType[]
  /** Leaves out those whose title matches. */
  exceptTitle?: RegExp
}

export const toNotification = ({ _id, owner_id: _o, created_at, ...rest }: NotificationDoc): Notification => ({ id: _id, ...rest, created_at: created_at.toISOString() })

indexSetups.push(async (db) => {
  const c = db.collection('notifications')
  await c.createIndex({ owner_id: 1, created_at: -1 })
  await c.createIndex({ owner_id: 1, read: 1 })
  await c.createIndex({ created_at: 1 }, { expireAfterSeconds: NOTIFICATION_RETENTION_S, name: 'created_at_ttl' })
})

export class NotificationRepository {
  private readonly c: Collection<NotificationDoc>
  constructor(db: Db) {
    this.c = db.collection<NotificationDoc>('notifications')
  }

  async create(ownerId: string, input: NewNotification, now = new Date()): Promise<Notification> {
    const doc: NotificationDoc = { _id: newId(), owner_id: ownerId, ...input, read: false, created_at: now }
    await this.c.insertOne(doc)
    return toNotification(doc)
  }

  list(ownerId: string, req: PageRequest, opts: { unread?: boolean } & NotificationFilter = {}): Promise<Page<Notification>> {
    const filter = this.filter(ownerId, opts.unread ? { ...opts, read: false } : opts)
    return paginate(this.c, req, { filter, sortFields: { created_at: 'created_at' }, searchFields: ['title', 'message'] }, toNotification)
  }

  count(ownerId: string, f: NotificationFilter): Promise<number> {
    return this.c.countDocuments(this.filter(ownerId, f))
  }

  private filter(ownerId: string, f: NotificationFilter): Filter<NotificationDoc> {
    const filter: Filter<NotificationDoc> = { owner_id: ownerId }
    if (f.read !== undefined) filter.read = f.read
    if (f.types) filter.type = { $in: [...f.types] }
    if (f.exceptTitle) filter.title = { $not: f.exceptTitle }
    return filter
  }

  unreadCount(ownerId: string): Promise<number> {
    return this.c.countDocuments({ owner_id: ownerId, read: false })
  }

  /** Null when there is no such notification of this owner. */
  async get(ownerId: string, id: string): Promise<Notification | null> {
    if (!isId(id)) return null
    const doc = await this.c.findOne({ _id: id, owner_id: ownerId })
    return doc && toNotification(doc)
  }

  /** Null when there is no such notification of this owner. */
  async markRead(ownerId: string, id: string, f: NotificationFilter = {}): Promise<Notification | null> {
    if (!isId(id)) return null
    const doc = await this.c.findOneAndUpdate({ ...this.filter(ownerId, f), _id: id }, { $set: { read: true } }, { returnDocument: 'after' })
    return doc && toNotification(doc)
  }

  /** How many were unread. */
  async markAllRead(ownerId: string): Promise<number> {
    const res = await this.c.updateMany({ owner_id: ownerId, read: false }, { $set: { read: true } })
    return res.modifiedCount
  }
}
