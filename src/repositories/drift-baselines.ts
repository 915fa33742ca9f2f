// The `drift_baselines` collection: per object a run applied, what drift detection compares the live object
// with (compare.ts: leaf paths and values, secrets only as digests). One document per (owner, workflow,
// cluster, kind, namespace, name); a run replaces its workflow's documents on that cluster, and objects its
// prune deleted lose theirs. Every read takes the owner.
import { createHash } from 'node:crypto'
import type { Collection, Db } from 'mongodb'
import { indexSetups } from './indexes.ts'
import type { ObjectBaseline } from '../services/lifecycle/drift/compare.ts'

export interface ObjectRef { api_version: string; kind: string; namespace: string | null; name: string }

export interface BaselineDoc extends ObjectBaseline, ObjectRef {
  _id: string
  owner_id: string
  workflow_id: string
  cluster_id: string
  node_id: string
  run_id: string
  version: number
  recorded_at: Date
}

/** Deterministic: the same object of the same workflow on the same cluster is one document whatever run wrote it. */
export function baselineId(ownerId: string, workflowId: string, clusterId: string, ref: Pick<ObjectRef, 'kind' | 'namespace' | 'name'>): string {
  return createHash('sha256').update(JSON.stringify([ownerId, workflowId, clusterId, ref.kind, ref.namespace ?? '', ref.name])).digest('base64url')
}

indexSetups.push(async (db) => {
  const c = db.collection('drift_baselines')
  await c.createIndex({ owner_id: 1, workflow_id: 1, cluster_id: 1 })
  await c.createIndex({ cluster_id: 1 })
})

export class DriftBaselineRepository {
  private readonly c: Collection<BaselineDoc>
  constructor(db: Db) { this.c = db.collection<BaselineDoc>('drift_baselines') }

  /**
   * What a run left on the cluster: `docs` (the objects it applied) and `kept` (ids of objects it tried but
   * failed or skipped: the cluster still has them as before, so their earlier baselines stay) become the
   * workflow's baselines there; the others go (left the graph). A run that reached no object at all (the
   * cluster did not answer) changes nothing but removing what its prune deleted.
   */
  async replace(ownerId: string, workflowId: string, clusterId: string, docs: BaselineDoc[], kept: string[], pruned: Array<Pick<ObjectRef, 'kind' | 'namespace' | 'name'>>): Promise<void> {
    if (docs.length) await this.c.bulkWrite(docs.map((d) => ({ replaceOne: { filter: { _id: d._id, owner_id: ownerId }, replacement: d, upsert: true } })), { ordered: false })
    if (docs.length || kept.length) {
      await this.c.deleteMany({ owner_id: ownerId, workflow_id: workflowId, cluster_id: clusterId, _id: { $nin: [...docs.map((d) => d._id), ...kept] } })
    }
    if (pruned.length) await this.c.deleteMany({ owner_id: ownerId, _id: { $in: pruned.map((p) => baselineId(ownerId, workflowId, clusterId, p)) } })
  }

  /** The workflow's baselines (on one cluster, or all). */
  async forWorkflow(ownerId: string, workflowId: string, clusterId?: string): Promise<BaselineDoc[]> {
    return this.c.find({ owner_id: ownerId, workflow_id: workflowId, ...(clusterId !== undefined && { cluster_id: clusterId }) }).sort({ _id: 1 }).toArray()
  }

  /** Every (owner, workflow, cluster) with baselines, on these clusters (null: all). */
  async targets(clusterIds: string[] | null): Promise<Array<{ owner_id: string; workflow_id: string; cluster_id: string }>> {
    const docs = await this.c.find(clusterIds ? { cluster_id: { $in: clusterIds } } : {}, { projection: { owner_id: 1, workflow_id: 1, cluster_id: 1 } }).toArray()
    const seen = new Map<string, { owner_id: string; workflow_id: string; cluster_id: string }>()
    for (const d of docs) seen.set(`${d.owner_id}\n${d.workflow_id}\n${d.cluster_id}`, { owner_id: d.owner_id, workflow_id: d.workflow_id, cluster_id: d.cluster_id })
    return [...seen.values()]
  }

  async deleteForWorkflow(ownerId: string, workflowId: string): Promise<void> {
    await this.c.deleteMany({ owner_id: ownerId, workflow_id: workflowId })
  }
}
