// The `drift_states` collection: the current drift of a node's objects on one cluster, present only while
// the node is drifted there. The replica checking the cluster writes it; GET /drift, the node status overlay
// and the other replicas read it. Paths only, never values (a value may be a secret's).
import { createHash } from 'node:crypto'
import type { Collection, Db } from 'mongodb'
import { indexSetups } from './indexes.ts'

export interface DriftedObject { kind: string; name: string; namespace: string | null; missing: boolean; paths: string[] }

export interface DriftStateDoc {
  _id: string
  owner_id: string
  workflow_id: string
  cluster_id: string
  node_id: string
  /** When the node was first seen drifted (kept while the drifted fields change). */
  detected_at: Date
  /** The node's drifted paths (compare.ts nodeFields). */
  fields: string[]
  objects: DriftedObject[]
  updated_at: Date
}

export function driftStateId(ownerId: string, workflowId: string, clusterId: string, nodeId: string): string {
  return createHash('sha256').update(JSON.stringify([ownerId, workflowId, clusterId, nodeId])).digest('base64url')
}

indexSetups.push(async (db) => {
  const c = db.collection('drift_states')
  await c.createIndex({ owner_id: 1, workflow_id: 1 })
})

export class DriftStateRepository {
  private readonly c: Collection<DriftStateDoc>
  constructor(db: Db) { this.c = db.collection<DriftStateDoc>('drift_states') }

  async all(): Promise<DriftStateDoc[]> {
    return this.c.find({}).toArray()
  }

  async forWorkflow(ownerId: string, workflowId: string, clusterId?: string): Promise<DriftStateDoc[]> {
    return this.c.find({ owner_id: ownerId, workflow_id: workflowId, ...(clusterId !== undefined && { cluster_id: clusterId }) }).toArray()
  }

  async put(doc: DriftStateDoc): Promise<void> {
    await this.c.replaceOne({ _id: doc._id, owner_id: doc.owner_id }, doc, { upsert: true })
  }

  async remove(ownerId: string, id: string): Promise<void> {
    await this.c.deleteOne({ _id: id, owner_id: ownerId })
  }

  async deleteForWorkflow(ownerId: string, workflowId: string): Promise<void> {
    await this.c.deleteMany({ owner_id: ownerId, workflow_id: workflowId })
  }
}
