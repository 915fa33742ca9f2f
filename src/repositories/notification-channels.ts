// The `notification_channels` collection (API.md §12): a user's webhooks. The signing secret is sealed
// against the record id and leaves this module only to the channel service (to sign a delivery). Every
// query takes the owner, so another user's channel id is simply not found.
import type { Collection, Db } from 'mongodb'
import { indexSetups } from './indexes.ts'
import { newId, isId } from './ids.ts'
import { insertUnique, isDuplicateKey } from './errors.ts'
import { paginate, type Page, type PageRequest } from './pagination.ts'
import { Conflict } from '../errors.ts'
import type { NotificationType } from '../../schemas/notifications.ts'

export interface ChannelDoc {
  _id: string
  owner_id: string
  name: string
  /** The name lower-cased: uniqueness per owner is checked on it. */
  name_key: string
  url: string
  /** Empty: every type. */
  events: NotificationType[]
  enabled: boolean
  /** The signing secret sealed against "notification_channels:<id>". */
  secret_sealed: string
  created_at: Date
  updated_at: Date
}

export type NewChannel = Pick<ChannelDoc, 'name' | 'url' | 'events' | 'enabled' | 'secret_sealed'>
export type ChannelChanges = Partial<NewChannel>

indexSetups.push(async (db) => {
  const c = db.collection('notification_channels')
  await c.createIndex({ owner_id: 1, name_key: 1 }, { unique: true })
  await c.createIndex({ owner_id: 1, created_at: -1 })
})

export class NotificationChannelRepository {
  private readonly c: Collection<ChannelDoc>
  constructor(db: Db, private readonly now: () => Date = () => new Date()) {
    this.c = db.collection<ChannelDoc>('notification_channels')
  }

  /** A new record id, so the secret can be sealed against it before the insert. */
  newId(): string { return newId() }

  private duplicate(name: string): Conflict { return new Conflict(`you already have a channel named "${name}"`) }

  async create(id: string, ownerId: string, input: NewChannel): Promise<ChannelDoc> {
    const at = this.now()
    const doc: ChannelDoc = { _id: id, owner_id: ownerId, ...input, name_key: input.name.toLowerCase(), created_at: at, updated_at: at }
    await insertUnique(this.c, doc, () => this.duplicate(input.name))
    return doc
  }

  /** Null when there is no such channel of this owner (a malformed id included). */
  async get(ownerId: string, id: string): Promise<ChannelDoc | null> {
    if (!isId(id)) return null
    return this.c.findOne({ _id: id, owner_id: ownerId })
  }

  list(ownerId: string, req: PageRequest): Promise<Page<ChannelDoc>> {
    return paginate(this.c, req, { filter: { owner_id: ownerId }, sortFields: { created_at: 'created_at', name: 'name_key', updated_at: 'updated_at' }, searchFields: ['name', 'url'] }, (d) => d)
  }

  count(ownerId: string): Promise<number> {
    return this.c.countDocuments({ owner_id: ownerId })
  }

  /** The owner's enabled channels (at most the per-user limit, so no paging). */
  enabled(ownerId: string): Promise<ChannelDoc[]> {
    return this.c.find({ owner_id: ownerId, enabled: true }).toArray()
  }

  /** Null when there is no such channel of this owner. */
  async update(ownerId: string, id: string, changes: ChannelChanges): Promise<ChannelDoc | null> {
    if (!isId(id)) return null
    const set: Partial<ChannelDoc> = { ...changes, updated_at: this.now() }
    if (changes.name !== undefined) set.name_key = changes.name.toLowerCase()
    try {
      return await this.c.findOneAndUpdate({ _id: id, owner_id: ownerId }, { $set: set }, { returnDocument: 'after' })
    } catch (err) {
      if (isDuplicateKey(err)) throw this.duplicate(changes.name ?? '')
      throw err
    }
  }

  /** Whether a channel of this owner was removed. */
  async delete(ownerId: string, id: string): Promise<boolean> {
    if (!isId(id)) return false
    return (await this.c.deleteOne({ _id: id, owner_id: ownerId })).deletedCount === 1
  }
}
