// The `clusters` collection. A user reaches a cluster they own or one shared with them; every read takes
// the caller and returns the access they have, so a cluster nobody shared is simply not found. Sealed
// credentials live in the document but never leave this module except to the cluster service.
import type { Collection, Db, Filter } from 'mongodb'
import { indexSetups } from './indexes.ts'
import { newId } from './ids.ts'
import { paginate, type PageRequest, type Page } from './pagination.ts'
import { insertUnique, isDuplicateKey } from './errors.ts'
import { Conflict } from '../errors.ts'
import type { AuthType } from '../kube/credentials.ts'

export type ShareRole = 'viewer' | 'deployer' | 'admin'
export type Access = 'owner' | ShareRole
export type ClusterStatus = 'unknown' | 'connected' | 'error'

export interface ClusterMetadataDoc { version: string | null; platform: string | null; node_count: number | null; namespaces: string[] }

export interface ClusterDoc {
  _id: string
  owner_id: string
  name: string
  display_name: string
  description: string
  server: string
  auth_type: AuthType
  credentials_sealed: string
  status: ClusterStatus
  status_message: string
  last_checked_at: Date | null
  /** Users whose default this cluster is (the owner, or users it is shared with). */
  default_of: string[]
  labels: Record<string, string>
  metadata: ClusterMetadataDoc
  shared_with: Array<{ user_id: string; role: ShareRole }>
  created_at: Date
  updated_at: Date
}

/** A share as replies show it: who (their current email and name; null once the account is gone) and the role. */
export interface ShareEntry { user_id: string; email: string | null; name: string | null; role: ShareRole }

export interface Cluster {
  id: string; name: string; display_name: string; description: string; server: string; auth_type: AuthType
  status: ClusterStatus; status_message: string; last_checked_at: string | null; is_default: boolean
  labels: Record<string, string>; metadata: ClusterMetadataDoc; owner_id: string; access: Access
  shared_with: ShareEntry[]; created_at: string; updated_at: string
}

/** The stored record with the caller's access; what the service works with. */
export interface ClusterRecord { doc: ClusterDoc; access: Access }

export function accessOf(doc: ClusterDoc, userId: string): Access | null {
  if (doc.owner_id === userId) return 'owner'
  return doc.shared_with.find((s) => s.user_id === userId)?.role ?? null
}

export function toCluster(doc: ClusterDoc, userId: string): Cluster {
  const { _id, credentials_sealed: _sealed, default_of, created_at, updated_at, last_checked_at, ...rest } = doc
  return {
    id: _id, ...rest, is_default: default_of.includes(userId), access: accessOf(doc, userId) ?? 'viewer',
    // Only those who may share see with whom it is shared.
    // Email and name are filled in by the cluster service, which reads the users.
    shared_with: ['owner', 'admin'].includes(accessOf(doc, userId) ?? '') ? doc.shared_with.map((s) => ({ user_id: s.user_id, email: null, name: null, role: s.role })) : [],
    last_checked_at: last_checked_at ? last_checked_at.toISOString() : null, created_at: created_at.toISOString(), updated_at: updated_at.toISOString(),
  }
}

const reachable = (userId: string): Filter<ClusterDoc> => ({ $or: [{ owner_id: userId }, { 'shared_with.user_id': userId }] })

indexSetups.push(async (db) => {
  const c = db.collection('clusters')
  await c.createIndex({ owner_id: 1, name: 1 }, { unique: true })
  await c.createIndex({ 'shared_with.user_id': 1, name: 1 })
  // "At most one default per user" is kept by the database, as for registries: a unique index over the
  // `default_of` lists admits each user id in one cluster only, so claiming a default is one atomic write and
  // two clusters added at once cannot both become it. Only lists holding a user id are indexed (every empty
  // list would otherwise share one key). It replaces the plain index of earlier versions (same key).
  if (await c.indexExists('default_of_1').catch(() => false)) await c.dropIndex('default_of_1')
  await c.createIndex({ default_of: 1 }, { unique: true, partialFilterExpression: { 'default_of.0': { $exists: true } }, name: 'one_default_per_user' })
})

/** Tries of a default switch that keeps losing to concurrent switches before it gives up with a 409. */
const SWITCH_ATTEMPTS = 5

export type NewCluster = Omit<ClusterDoc, '_id' | 'created_at' | 'updated_at' | 'status' | 'status_message' | 'last_checked_at' | 'metadata' | 'shared_with' | 'default_of'>

export class ClusterRepository {
  private readonly c: Collection<ClusterDoc>
  constructor(db: Db, private readonly now: () => Date = () => new Date()) {
    this.c = db.collection<ClusterDoc>('clusters')
  }

  /** A new record id, so credentials can be sealed against it before the insert. */
  newId(): string { return newId() }

  async create(id: string, input: NewCluster): Promise<ClusterDoc> {
    const at = this.now()
    const doc: ClusterDoc = {
      _id: id, ...input, status: 'unknown', status_message: 'not checked yet', last_checked_at: null, default_of: [],
      metadata: { version: null, platform: null, node_count: null, namespaces: [] }, shared_with: [], created_at: at, updated_at: at,
    }
    await insertUnique(this.c, doc, () => new Conflict(`a cluster named "${input.name}" exists`))
    return doc
  }

  /** By name: the caller's own cluster first, else one shared with them. */
  async findByName(userId: string, name: string): Promise<ClusterRecord | null> {
    const own = await this.c.findOne({ owner_id: userId, name })
    if (own) return { doc: own, access: 'owner' }
    const shared = await this.c.findOne({ 'shared_with.user_id': userId, name })
    return shared && { doc: shared, access: accessOf(shared, userId)! }
  }

  /**
   * By id or name: cluster paths and references such as a workflow's cluster_id. Names are never shaped
   * like ids (the service refuses such names), so the two cannot be confused.
   */
  async findByRef(userId: string, ref: string): Promise<ClusterRecord | null> {
    const byId = await this.c.findOne({ _id: ref, ...reachable(userId) })
    if (byId) return { doc: byId, access: accessOf(byId, userId)! }
    return this.findByName(userId, ref)
  }

  async findDefault(userId: string): Promise<ClusterRecord | null> {
    const doc = await this.c.findOne({ default_of: userId, ...reachable(userId) })
    return doc && { doc, access: accessOf(doc, userId)! }
  }

  async list(userId: string, req: PageRequest, filter: { status?: ClusterStatus } = {}): Promise<Page<Cluster>> {
    return paginate(this.c, req, {
      filter: { ...reachable(userId), ...(filter.status && { status: filter.status }) },
      sortFields: { created_at: 'created_at', name: 'name', status: 'status', updated_at: 'updated_at' },
      searchFields: ['name', 'display_name', 'description', 'server'],
    }, (doc) => toCluster(doc, userId))
  }

  async search(userId: string, filter: Filter<ClusterDoc>, limit: number): Promise<ClusterDoc[]> {
    return this.c.find({ $and: [reachable(userId), filter] }).sort({ name: 1 }).limit(limit).toArray()
  }

  async update(id: string, fields: Partial<Omit<ClusterDoc, '_id' | 'owner_id' | 'created_at'>>): Promise<ClusterDoc | null> {
    return this.c.findOneAndUpdate({ _id: id }, { $set: { ...fields, updated_at: this.now() } }, { returnDocument: 'after' })
  }

  /** Makes the cluster the user's default, and no other; null when it does not exist. */
  async setDefault(userId: string, id: string): Promise<ClusterDoc | null> {
    for (let attempt = 0; attempt < SWITCH_ATTEMPTS; attempt++) {
      await this.c.updateMany({ default_of: userId, _id: { $ne: id } }, { $pull: { default_of: userId } })
      try {
        return await this.c.findOneAndUpdate({ _id: id }, { $addToSet: { default_of: userId } }, { returnDocument: 'after' })
      } catch (err) {
        // Another switch (or a first cluster's claim) took the default between the two steps; take it back.
        if (!isDuplicateKey(err)) throw err
      }
    }
    throw new Conflict('the default cluster is being changed concurrently; try again')
  }

  /** Makes the cluster the user's default only if they have none; null when another one is (or it is gone). */
  async claimDefault(userId: string, id: string): Promise<ClusterDoc | null> {
    try {
      return await this.c.findOneAndUpdate({ _id: id }, { $addToSet: { default_of: userId } }, { returnDocument: 'after' })
    } catch (err) {
      if (isDuplicateKey(err)) return null
      throw err
    }
  }

  /** When the user has no default (theirs was deleted or unshared), the oldest cluster they reach becomes it. */
  async ensureDefault(userId: string): Promise<void> {
    if (await this.c.findOne({ default_of: userId })) return
    const [oldest] = await this.c.find(reachable(userId)).sort({ created_at: 1, _id: 1 }).limit(1).toArray()
    if (oldest) await this.claimDefault(userId, oldest._id)
  }

  async share(id: string, userId: string, role: ShareRole): Promise<ClusterDoc | null> {
    await this.c.updateOne({ _id: id }, { $pull: { shared_with: { user_id: userId } } })
    return this.c.findOneAndUpdate({ _id: id }, { $push: { shared_with: { user_id: userId, role } }, $set: { updated_at: this.now() } }, { returnDocument: 'after' })
  }

  /**
   * Ends the user's share (and their default pointing here); the record as it was before (its `default_of`
   * says whether it was their default), or null when the cluster has no share for them.
   */
  async unshare(id: string, userId: string): Promise<ClusterDoc | null> {
    return this.c.findOneAndUpdate(
      { _id: id, 'shared_with.user_id': userId },
      { $pull: { shared_with: { user_id: userId }, default_of: userId }, $set: { updated_at: this.now() } },
      { returnDocument: 'before' },
    )
  }

  /** The deleted record (its `default_of` says whose default just went), or null when it was already gone. */
  async delete(id: string): Promise<ClusterDoc | null> {
    return this.c.findOneAndDelete({ _id: id })
  }

  /** Every cluster, for the health monitor and key rotation (system work, not a user's read). */
  async *all(): AsyncGenerator<ClusterDoc> {
    yield* this.c.find({}).sort({ _id: 1 })
  }
}
