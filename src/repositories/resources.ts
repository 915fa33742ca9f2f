// The `resources` collection: tracked resources, one per (owner, cluster, namespace, kind, name). Every query
// takes the owner, so another user's record is simply not found. Runs and syncs write the observed fields;
// the user fields (favourite, tags, notes) are only ever changed by PATCH and survive every observation.
//
// Pods of followed workloads are records too (kind Pod, `parent_id` the workload's record), written by the
// watchers (src/services/pod-records.ts). Lists, search and counts leave them out unless asked (API.md §10).
// A parent marked deleted takes its pods with it; a deleted pod record expires after DELETED_POD_RETENTION_S
// (a TTL index on `expires_at`): every rollout replaces its pods by new names, so keeping them all would
// grow the collection without bound, while the hour lets a reader see what went away.
import type { AnyBulkWriteOperation, Collection, Db, Filter } from 'mongodb'
import { indexSetups } from './indexes.ts'
import { newId, isId } from './ids.ts'
import { isDuplicateKey } from './errors.ts'
import { paginate, searchFilter, type Page, type PageRequest } from './pagination.ts'
import type { Counters, ResourceStatus } from '../kube/status/index.ts'

export interface ResourceKey { namespace: string | null; kind: string; name: string }

/** What a run or a sync observes of an object; the record's other fields are the user's or bookkeeping. */
export interface ObservedResource extends ResourceKey {
  workflow_id: string; node_id: string; cluster: string; api_version: string; uid: string | null
  status: ResourceStatus; status_message: string; ready: string | null; counters: Counters; labels: Record<string, string>
  /** The workload's record id for a pod it runs; null (or absent on older records) for everything else. */
  parent_id?: string | null
  /** A Pod's container names. */
  containers?: string[]
}

export interface ResourceDoc extends ObservedResource {
  _id: string
  owner_id: string
  cluster_id: string
  is_favorite: boolean
  user_tags: string[]
  user_notes: string
  created_at: Date
  updated_at: Date
  last_seen_at: Date | null
  /** Set on a deleted pod record only: the TTL index removes it then. */
  expires_at?: Date
  /**
   * The highest cluster-lease epoch a watcher wrote the record with (API.md §11): a write carrying a lower
   * one comes from a replica that lost the cluster without knowing it yet, and is refused.
   */
  watch_epoch?: number
}

export interface TrackedResource extends Omit<ResourceDoc, '_id' | 'created_at' | 'updated_at' | 'last_seen_at' | 'expires_at' | 'parent_id' | 'watch_epoch'> {
  id: string; parent_id: string | null; created_at: string; updated_at: string; last_seen_at: string | null
}

export interface ResourceFilter {
  cluster?: string; namespace?: string; kind?: string; workflow_id?: string; status?: ResourceStatus; parent_id?: string
  /** Leave Kubernetes' own objects out (SYSTEM_OBJECTS); the KubeOrch UI adapter's `hideSystem`, not a /v1/api filter. */
  hide_system?: boolean
}
export interface UserFields { is_favorite?: boolean; user_tags?: string[]; user_notes?: string }
export interface ObserveCounts { created: number; updated: number; deleted: number }
/** What an observation is about to write over an existing record's status fields (the pod watchers publish it). */
export type ObservedStatus = Pick<ResourceDoc, 'status' | 'status_message' | 'ready' | 'counters'>

export const toResource = ({ _id, created_at, updated_at, last_seen_at, expires_at: _expires, parent_id, watch_epoch: _epoch, ...rest }: ResourceDoc): TrackedResource => ({
  id: _id, ...rest, parent_id: parent_id ?? null, created_at: created_at.toISOString(), updated_at: updated_at.toISOString(), last_seen_at: last_seen_at ? last_seen_at.toISOString() : null,
})

indexSetups.push(async (db) => {
  const c = db.collection('resources')
  await c.createIndex({ owner_id: 1, cluster_id: 1, namespace: 1, kind: 1, name: 1 }, { unique: true })
  await c.createIndex({ owner_id: 1, workflow_id: 1, cluster_id: 1 })
  await c.createIndex({ owner_id: 1, status: 1 })
  await c.createIndex({ owner_id: 1, kind: 1 })
  await c.createIndex({ owner_id: 1, updated_at: -1 })
  await c.createIndex({ owner_id: 1, parent_id: 1 })
  await c.createIndex({ expires_at: 1 }, { expireAfterSeconds: 0 })
})

/** How long a deleted pod record stays readable (see the head comment). */
export const DELETED_POD_RETENTION_S = 3600


/**
 * Kubernetes' own objects: anything in a namespace of its reserved `kube-` prefix (kube-system, kube-public,
 * kube-node-lease, kube-flannel, ...), those namespaces themselves, and the two objects it puts in every
 * namespace or cluster (the kube-root-ca.crt ConfigMap, the `kubernetes` Service in default).
 */
const SYSTEM_OBJECTS: Filter<ResourceDoc>[] = [
  { namespace: { $regex: '^kube-' } },
  { kind: 'Namespace', name: { $regex: '^kube-' } },
  { kind: 'ConfigMap', name: 'kube-root-ca.crt' },
  { kind: 'Service', namespace: 'default', name: 'kubernetes' },
]

const keyOf = (k: ResourceKey): string => JSON.stringify([k.namespace, k.kind, k.name])
const sorted = (o: Record<string, unknown>): string => JSON.stringify(Object.keys(o).sort().map((k) => [k, o[k]]))

/** Whether an observation changes what the record says (timestamps aside). */
function differs(doc: ResourceDoc, o: ObservedResource): boolean {
  return doc.status !== o.status || doc.status_message !== o.status_message || doc.ready !== o.ready || doc.uid !== o.uid
    || doc.api_version !== o.api_version || doc.workflow_id !== o.workflow_id || doc.node_id !== o.node_id || doc.cluster !== o.cluster
    || sorted(doc.labels) !== sorted(o.labels) || sorted(doc.counters) !== sorted(o.counters)
    || (doc.parent_id ?? null) !== (o.parent_id ?? null) || JSON.stringify(doc.containers ?? null) !== JSON.stringify(o.containers ?? null)
}

const DELETED = { status: 'deleted' as const, status_message: 'no longer in the cluster', ready: null }

/** Records a write with this epoch may change: none written with a higher one. Null: unfenced (one replica). */
function fence(epoch: number | null | undefined): Filter<ResourceDoc> {
  return epoch == null ? {} : { $or: [{ watch_epoch: { $exists: false } }, { watch_epoch: { $lte: epoch } }] }
}
const stamp = (epoch: number | null | undefined) => (epoch == null ? {} : { watch_epoch: epoch })

/** What a fenced write answers when a newer lease holder has written the record. */
export const STALE = 'stale' as const

export class ResourceRepository {
  private readonly c: Collection<ResourceDoc>
  constructor(db: Db, private readonly now: () => Date = () => new Date()) {
    this.c = db.collection<ResourceDoc>('resources')
  }

  /**
   * Writes what a run or a sync saw on one cluster: new objects become records, known ones are updated
   * (user fields untouched). With `missingAreDeleted` (a sync's listing), records of the cluster that were
   * not observed, and that the listing covered (the predicate), are marked deleted, and so are the pods of
   * a workload marked deleted. One read, then one bulk write. `scope` narrows the read (and so what can be
   * missing) to part of the cluster; `onlyChanged` writes only records whose shown fields changed (the pod
   * watchers: a crash loop must not write every pod at every event). `epoch`: the writer's cluster lease
   * (fencing token); records a newer holder wrote are left as they are (not counted, not `rewritten`).
   */
  async observe(ownerId: string, clusterId: string, observed: ObservedResource[], opts: { missingAreDeleted?: (doc: ResourceDoc) => boolean; keepWatchedStatus?: (o: ResourceKey) => boolean; scope?: Filter<ResourceDoc>; onlyChanged?: boolean; rewritten?: (doc: ResourceDoc, next: ObservedStatus) => void; epoch?: number | null } = {}): Promise<ObserveCounts> {
    const { epoch } = opts
    const newer = (doc: ResourceDoc | undefined) => epoch != null && doc?.watch_epoch !== undefined && doc.watch_epoch > epoch
    const at = this.now()
    const existing = new Map((await this.c.find({ ...opts.scope, owner_id: ownerId, cluster_id: clusterId }).toArray()).map((d) => [keyOf(d), d]))
    const counts: ObserveCounts = { created: 0, updated: 0, deleted: 0 }
    const ops: AnyBulkWriteOperation<ResourceDoc>[] = []
    const seen = new Set<string>()
    for (let o of observed) {
      const key = keyOf(o)
      if (seen.has(key)) continue
      seen.add(key)
      const doc = existing.get(key)
      if (newer(doc)) continue
      // A run re-applying an object unchanged: its status is the watchers' (derived with its pods), not the
      // apply answer's (the object alone), which would flip a crash-looping workload to pending and back.
      if (opts.keepWatchedStatus?.(o) && doc && doc.status !== 'deleted' && doc.uid !== null && doc.uid === o.uid) {
        o = { ...o, status: doc.status, status_message: doc.status_message, ready: doc.ready, counters: doc.counters }
      }
      const changed = !doc || differs(doc, o)
      if (!doc) counts.created++
      else if (changed) counts.updated++
      if (!changed && opts.onlyChanged) continue
      if (doc && changed) opts.rewritten?.(doc, o)
      const { namespace, kind, name, containers, parent_id, ...fields } = o
      // A pod back in the cluster (or re-parented) is no longer due to expire.
      const revived = doc?.expires_at !== undefined && o.status !== 'deleted'
      ops.push({
        updateOne: {
          // Fenced against a newer holder that wrote between the read and this write (an insert needs no fence).
          filter: { owner_id: ownerId, cluster_id: clusterId, namespace, kind, name, ...(doc && fence(epoch)) },
          update: {
            $set: { ...fields, parent_id: parent_id ?? null, ...(containers && { containers }), last_seen_at: at, ...(changed && { updated_at: at }), ...stamp(epoch) },
            ...(revived && { $unset: { expires_at: '' } }),
            $setOnInsert: { _id: newId(), is_favorite: false, user_tags: [], user_notes: '', created_at: at },
          },
          upsert: !doc || epoch == null,
        },
      })
    }
    const deletedParents: string[] = []
    if (opts.missingAreDeleted) {
      for (const [key, doc] of existing) {
        if (seen.has(key) || doc.status === 'deleted' || newer(doc) || !opts.missingAreDeleted(doc)) continue
        counts.deleted++
        opts.rewritten?.(doc, { ...DELETED, counters: doc.counters })
        if (doc.parent_id) ops.push({ updateOne: { filter: { _id: doc._id, owner_id: ownerId, ...fence(epoch) }, update: { $set: { ...this.deletedPod(at), ...stamp(epoch) } } } })
        else {
          ops.push({ updateOne: { filter: { _id: doc._id, owner_id: ownerId, ...fence(epoch) }, update: { $set: { ...DELETED, updated_at: at, ...stamp(epoch) } } } })
          deletedParents.push(doc._id)
        }
      }
    }
    if (ops.length) await this.bulk(ops)
    await this.deletePodsOf(ownerId, deletedParents, at)
    return counts
  }

  private deletedPod(at: Date) {
    return { ...DELETED, updated_at: at, expires_at: new Date(at.getTime() + DELETED_POD_RETENTION_S * 1000) }
  }

  /** The pods of workloads marked deleted go with them (they are gone, or on their way out). */
  private async deletePodsOf(ownerId: string, parentIds: string[], at: Date): Promise<void> {
    if (!parentIds.length) return
    await this.c.updateMany({ owner_id: ownerId, parent_id: { $in: parentIds }, status: { $ne: 'deleted' } }, { $set: this.deletedPod(at) })
  }

  /** A concurrent writer may insert the same key between the read and the upsert: the retry then updates it. */
  private async bulk(ops: AnyBulkWriteOperation<ResourceDoc>[]): Promise<void> {
    try {
      await this.c.bulkWrite(ops, { ordered: false })
    } catch (err) {
      if (!isDuplicateKey(err) && !(err as { writeErrors?: unknown[] }).writeErrors) throw err
      await this.c.bulkWrite(ops, { ordered: false })
    }
  }

  /** Marks the named objects of a cluster deleted (a prune, a removed workflow); answers how many changed. */
  async markDeleted(ownerId: string, clusterId: string, keys: ResourceKey[]): Promise<number> {
    if (!keys.length) return 0
    const at = this.now()
    const where: Filter<ResourceDoc> = { owner_id: ownerId, cluster_id: clusterId, status: { $ne: 'deleted' }, $or: keys.map(({ namespace, kind, name }) => ({ namespace, kind, name })) }
    const ids = (await this.c.find(where, { projection: { _id: 1 } }).toArray()).map((d) => d._id)
    if (!ids.length) return 0
    const res = await this.c.updateMany({ _id: { $in: ids }, owner_id: ownerId, status: { $ne: 'deleted' } }, { $set: { ...DELETED, updated_at: at } })
    await this.deletePodsOf(ownerId, ids, at)
    return res.modifiedCount
  }

  /**
   * Removes the pod records of workloads no longer followed (their workflow archived or deleted, the cluster
   * out of reach): nothing would keep them current. Either those of the named parents, or every one whose
   * parent is not among `followed`. Pods already marked deleted are left to expire.
   */
  async removePods(ownerId: string | undefined, which: { parents: string[] } | { followedParents: string[]; clusterIds?: string[] }): Promise<number> {
    if ('parents' in which && !which.parents.length) return 0
    const parent = 'parents' in which ? { $in: which.parents } : { $type: 'string' as const, $nin: which.followedParents }
    // Among replicas, only the clusters this one watches: the others' pods are their holders' to keep.
    const clusters = 'clusterIds' in which && which.clusterIds ? { cluster_id: { $in: which.clusterIds } } : {}
    const res = await this.c.deleteMany({ ...(ownerId !== undefined && { owner_id: ownerId }), ...clusters, kind: 'Pod', parent_id: parent, status: { $ne: 'deleted' } })
    return res.deletedCount
  }

  /** The ids of the owner's pod records by name, in one namespace of one cluster (the pods route). */
  async podIds(ownerId: string, clusterId: string, namespace: string, names: string[]): Promise<Map<string, string>> {
    if (!names.length) return new Map()
    const docs = await this.c.find({ owner_id: ownerId, cluster_id: clusterId, namespace, kind: 'Pod', name: { $in: names } }, { projection: { _id: 1, name: 1 } }).toArray()
    return new Map(docs.map((d) => [d.name, d._id]))
  }

  async list(ownerId: string, req: PageRequest, filter: ResourceFilter = {}): Promise<Page<TrackedResource>> {
    const where: Filter<ResourceDoc> = { owner_id: ownerId }
    // A workload's pods are listed when asked for: by kind, or by their parent (API.md §10).
    if (filter.parent_id) where.parent_id = filter.parent_id
    else if (filter.kind !== 'Pod') where.parent_id = null
    if (filter.namespace) where.namespace = filter.namespace
    if (filter.kind) where.kind = filter.kind
    if (filter.workflow_id) where.workflow_id = filter.workflow_id
    if (filter.status) where.status = filter.status
    if (filter.hide_system) where.$nor = SYSTEM_OBJECTS
    // Names are never id-shaped, so a cluster reference is one or the other.
    if (filter.cluster) Object.assign(where, isId(filter.cluster) ? { cluster_id: filter.cluster } : { cluster: filter.cluster })
    return paginate(this.c, req, {
      filter: where,
      // `cluster` (by name) is sortable for the KubeOrch UI's cluster column; /v1/api's schema does not offer it.
      sortFields: { created_at: 'created_at', updated_at: 'updated_at', name: 'name', kind: 'kind', namespace: 'namespace', status: 'status', last_seen_at: 'last_seen_at', cluster: 'cluster' },
      searchFields: ['name'],
    }, toResource)
  }

  async get(ownerId: string, id: string): Promise<ResourceDoc | null> {
    if (!isId(id)) return null
    return this.c.findOne({ _id: id, owner_id: ownerId })
  }

  async updateUserFields(ownerId: string, id: string, fields: UserFields): Promise<ResourceDoc | null> {
    if (!isId(id)) return null
    return this.c.findOneAndUpdate({ _id: id, owner_id: ownerId }, { $set: { ...fields, updated_at: this.now() } }, { returnDocument: 'after' })
  }

  /** Every record of the owner on a cluster (a sync compares against these). */
  async forCluster(ownerId: string, clusterId: string): Promise<ResourceDoc[]> {
    return this.c.find({ owner_id: ownerId, cluster_id: clusterId }).toArray()
  }

  /** Namespaces holding the workflow's resources that are still in the cluster. */
  async namespacesFor(ownerId: string, workflowId: string, clusterId: string): Promise<string[]> {
    const values = await this.c.distinct('namespace', { owner_id: ownerId, workflow_id: workflowId, cluster_id: clusterId, status: { $ne: 'deleted' } })
    return (values.filter((v) => typeof v === 'string') as string[]).sort()
  }

  async findForNode(ownerId: string, workflowId: string, nodeId: string): Promise<TrackedResource[]> {
    // The node's own objects: its workloads' pods speak through their workload's status.
    const docs = await this.c.find({ owner_id: ownerId, workflow_id: workflowId, node_id: nodeId, parent_id: null }).sort({ created_at: 1, _id: 1 }).toArray()
    return docs.map(toResource)
  }

  /** Records still in their cluster (not deleted), of one owner or of all: what the watchers follow (a workload's pods follow it). */
  async watchable(ownerId?: string): Promise<ResourceDoc[]> {
    return this.c.find({ ...(ownerId !== undefined && { owner_id: ownerId }), status: { $ne: 'deleted' }, parent_id: null }).toArray()
  }

  /**
   * A watcher saw the object's status change: only the observed status fields move (user fields untouched).
   * With the watcher's lease epoch the write is fenced: STALE when a newer holder of the cluster wrote the
   * record, which then keeps the newer holder's status. Null: no such record.
   */
  async setStatus(ownerId: string, id: string, s: { status: ResourceStatus; status_message: string; ready: string | null; counters: Counters }, epoch: number | null = null): Promise<Date | null | typeof STALE> {
    const at = this.now()
    const res = await this.c.updateOne({ _id: id, owner_id: ownerId, ...fence(epoch) }, { $set: { ...s, updated_at: at, last_seen_at: at, ...stamp(epoch) } })
    if (res.matchedCount === 1) return at
    if (epoch != null && await this.c.countDocuments({ _id: id, owner_id: ownerId }, { limit: 1 }) > 0) return STALE
    return null
  }

  /** How many of the owner's records each cluster has, per status; workloads' pods are left out, as lists leave them out (API.md §10). */
  async countByClusterAndStatus(ownerId: string): Promise<Array<{ cluster_id: string; status: ResourceStatus; count: number }>> {
    const rows = await this.c.aggregate<{ _id: { cluster_id: string; status: ResourceStatus }; count: number }>([
      { $match: { owner_id: ownerId, parent_id: null } },
      { $group: { _id: { cluster_id: '$cluster_id', status: '$status' }, count: { $sum: 1 } } },
    ]).toArray()
    return rows.map((r) => ({ cluster_id: r._id.cluster_id, status: r._id.status, count: r.count }))
  }

  async search(ownerId: string, q: string, limit: number): Promise<ResourceDoc[]> {
    return this.c.find({ owner_id: ownerId, parent_id: null, ...searchFilter<ResourceDoc>(q, ['name']) }).sort({ updated_at: -1, _id: -1 }).limit(limit).toArray()
  }
}
