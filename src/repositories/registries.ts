// The `registries` collection: global records, managed by admins and read by everyone signed in. Sealed
// credentials live in the document but never leave this module except to the registry service.
//
// "Exactly one default" is kept by the database: a unique index over the documents with
// `is_default: true` admits at most one, so claiming the flag is atomic and two racing switches cannot
// both win.
import type { Collection, Db, Filter } from 'mongodb'
import { indexSetups } from './indexes.ts'
import { newId } from './ids.ts'
import { paginate, type PageRequest, type Page } from './pagination.ts'
import { isDuplicateKey, insertUnique } from './errors.ts'
import { Conflict } from '../errors.ts'
import type { REGISTRY_TYPES } from '../../schemas/registry.ts'

export type RegistryType = typeof REGISTRY_TYPES[number]
export type RegistryStatus = 'unknown' | 'connected' | 'error'

export interface RegistryDoc {
  _id: string
  name: string
  /** The name lower-cased: what uniqueness is checked on, so "Hub" and "hub" cannot both exist. */
  name_key: string
  registry_type: RegistryType
  url: string
  /** The host images name it by (see parseImageReference); lookup matches on it. */
  host: string
  username: string | null
  /** `{username, secret}` sealed against "registries:<id>", or null for anonymous access. */
  credentials_sealed: string | null
  status: RegistryStatus
  status_message: string
  is_default: boolean
  last_checked_at: Date | null
  created_at: Date
  updated_at: Date
}

export interface Registry {
  id: string; name: string; registry_type: RegistryType; url: string; host: string; username: string | null
  has_credentials: boolean; status: RegistryStatus; status_message: string; is_default: boolean
  last_checked_at: string | null; created_at: string; updated_at: string
}

export function toRegistry(doc: RegistryDoc): Registry {
  return {
    id: doc._id, name: doc.name, registry_type: doc.registry_type, url: doc.url, host: doc.host, username: doc.username,
    has_credentials: doc.credentials_sealed !== null, status: doc.status, status_message: doc.status_message, is_default: doc.is_default,
    last_checked_at: doc.last_checked_at ? doc.last_checked_at.toISOString() : null,
    created_at: doc.created_at.toISOString(), updated_at: doc.updated_at.toISOString(),
  }
}

indexSetups.push(async (db) => {
  const c = db.collection('registries')
  await c.createIndex({ name_key: 1 }, { unique: true })
  await c.createIndex({ is_default: 1 }, { unique: true, partialFilterExpression: { is_default: true }, name: 'one_default' })
  await c.createIndex({ host: 1 })
})

export type NewRegistry = Pick<RegistryDoc, 'name' | 'registry_type' | 'url' | 'host' | 'username' | 'credentials_sealed'>
export type RegistryChanges = Partial<Omit<RegistryDoc, '_id' | 'name_key' | 'is_default' | 'created_at' | 'updated_at'>>

const SWITCH_ATTEMPTS = 5

export class RegistryRepository {
  private readonly c: Collection<RegistryDoc>
  constructor(db: Db, private readonly now: () => Date = () => new Date()) {
    this.c = db.collection<RegistryDoc>('registries')
  }

  /** A new record id, so credentials can be sealed against it before the insert. */
  newId(): string { return newId() }

  private duplicate(name: string): Conflict { return new Conflict(`a registry named "${name}" exists`) }

  async create(id: string, input: NewRegistry): Promise<RegistryDoc> {
    const at = this.now()
    const doc: RegistryDoc = {
      _id: id, ...input, name_key: input.name.toLowerCase(), status: 'unknown', status_message: 'not checked yet',
      is_default: false, last_checked_at: null, created_at: at, updated_at: at,
    }
    await insertUnique(this.c, doc, () => this.duplicate(input.name))
    return doc
  }

  findById(id: string): Promise<RegistryDoc | null> {
    return this.c.findOne({ _id: id })
  }

  /** The registry serving a host: the default when several do, else the oldest. */
  async findByHost(host: string): Promise<RegistryDoc | null> {
    const [doc] = await this.c.find({ host }).sort({ is_default: -1, created_at: 1, _id: 1 }).limit(1).toArray()
    return doc ?? null
  }

  list(req: PageRequest, filter: { registry_type?: RegistryType } = {}): Promise<Page<Registry>> {
    return paginate(this.c, req, {
      filter: filter.registry_type ? { registry_type: filter.registry_type } : {},
      sortFields: { created_at: 'created_at', name: 'name_key', registry_type: 'registry_type', status: 'status', updated_at: 'updated_at' },
      searchFields: ['name', 'url', 'host'],
    }, toRegistry)
  }

  search(filter: Filter<RegistryDoc>, limit: number): Promise<RegistryDoc[]> {
    return this.c.find(filter).sort({ name_key: 1 }).limit(limit).toArray()
  }

  async update(id: string, fields: RegistryChanges): Promise<RegistryDoc | null> {
    const set: Partial<RegistryDoc> = { ...fields, updated_at: this.now() }
    if (fields.name !== undefined) set.name_key = fields.name.toLowerCase()
    try {
      return await this.c.findOneAndUpdate({ _id: id }, { $set: set }, { returnDocument: 'after' })
    } catch (err) {
      if (isDuplicateKey(err) && fields.name !== undefined) throw this.duplicate(fields.name)
      throw err
    }
  }

  /** The outcome of a connection test; not an edit, so updated_at stays. */
  async recordStatus(id: string, status: RegistryStatus, message: string, at: Date): Promise<void> {
    await this.c.updateOne({ _id: id }, { $set: { status, status_message: message, last_checked_at: at } })
  }

  async delete(id: string): Promise<RegistryDoc | null> {
    return this.c.findOneAndDelete({ _id: id })
  }

  /** Makes the registry the default only if there is none; false when another one holds the flag. */
  async claimDefault(id: string): Promise<boolean> {
    try {
      return (await this.c.updateOne({ _id: id }, { $set: { is_default: true } })).matchedCount === 1
    } catch (err) {
      if (isDuplicateKey(err)) return false
      throw err
    }
  }

  /** Makes the registry the default and no other; null when it does not exist. */
  async setDefault(id: string): Promise<RegistryDoc | null> {
    for (let attempt = 0; attempt < SWITCH_ATTEMPTS; attempt++) {
      await this.c.updateMany({ is_default: true, _id: { $ne: id } }, { $set: { is_default: false } })
      try {
        return await this.c.findOneAndUpdate({ _id: id }, { $set: { is_default: true } }, { returnDocument: 'after' })
      } catch (err) {
        // Another switch claimed the flag between the two steps; take it from that one in turn.
        if (!isDuplicateKey(err)) throw err
      }
    }
    throw new Conflict('the default registry is being changed concurrently; try again')
  }

  /** When no registry is the default (the default was deleted), the oldest becomes it. */
  async ensureDefault(): Promise<void> {
    if (await this.c.findOne({ is_default: true })) return
    const [oldest] = await this.c.find({}).sort({ created_at: 1, _id: 1 }).limit(1).toArray()
    if (oldest) await this.claimDefault(oldest._id)
  }

  /** Every registry, for key rotation (system work, not a user's read). */
  async *all(): AsyncGenerator<RegistryDoc> {
    yield* this.c.find({}).sort({ _id: 1 })
  }
}
