// The `workflows` collection. Every read and write takes the owner: another user's id is simply not found.
import type { Collection, Db } from 'mongodb'
import { indexSetups } from './indexes.ts'
import { isId, newId } from './ids.ts'
import { paginate, type PageRequest, type Page } from './pagination.ts'
import type { GraphEdge, GraphNode } from '../services/workflow-graph.ts'

export type WorkflowStatus = 'draft' | 'published' | 'archived'

export interface WorkflowDoc {
  _id: string
  owner_id: string
  name: string
  description: string
  cluster_id: string | null
  nodes: GraphNode[]
  edges: GraphEdge[]
  metadata: Record<string, unknown>
  status: WorkflowStatus
  current_version: number
  run_count: number
  success_count: number
  failure_count: number
  last_run_at: Date | null
  created_at: Date
  updated_at: Date
}

export interface Workflow extends Omit<WorkflowDoc, '_id' | 'created_at' | 'updated_at' | 'last_run_at'> {
  id: string
  last_run_at: string | null
  created_at: string
  updated_at: string
}

export const toWorkflow = ({ _id, created_at, updated_at, last_run_at, ...rest }: WorkflowDoc): Workflow => ({
  id: _id, ...rest, last_run_at: last_run_at ? last_run_at.toISOString() : null, created_at: created_at.toISOString(), updated_at: updated_at.toISOString(),
})

export const WORKFLOW_SORT_FIELDS = { created_at: 'created_at', updated_at: 'updated_at', name: 'name', status: 'status', last_run_at: 'last_run_at' } as const

indexSetups.push(async (db) => {
  const c = db.collection('workflows')
  await c.createIndex({ owner_id: 1, updated_at: -1 })
  await c.createIndex({ owner_id: 1, created_at: -1 })
  await c.createIndex({ owner_id: 1, name: 1 })
  await c.createIndex({ owner_id: 1, status: 1 })
})

export type WorkflowInput = Pick<WorkflowDoc, 'name' | 'description' | 'cluster_id'> & Partial<Pick<WorkflowDoc, 'nodes' | 'edges' | 'metadata' | 'status'>>

export class WorkflowRepository {
  private readonly c: Collection<WorkflowDoc>
  constructor(db: Db, private readonly now: () => Date = () => new Date()) {
    this.c = db.collection<WorkflowDoc>('workflows')
  }

  async create(ownerId: string, input: WorkflowInput): Promise<Workflow> {
    const at = this.now()
    const doc: WorkflowDoc = {
      _id: newId(), owner_id: ownerId, name: input.name, description: input.description, cluster_id: input.cluster_id,
      nodes: input.nodes ?? [], edges: input.edges ?? [], metadata: input.metadata ?? {}, status: input.status ?? 'draft',
      current_version: 0, run_count: 0, success_count: 0, failure_count: 0, last_run_at: null, created_at: at, updated_at: at,
    }
    await this.c.insertOne(doc)
    return toWorkflow(doc)
  }

  async get(ownerId: string, id: string): Promise<Workflow | null> {
    if (!isId(id)) return null
    const doc = await this.c.findOne({ _id: id, owner_id: ownerId })
    return doc && toWorkflow(doc)
  }

  async list(ownerId: string, req: PageRequest, filter: { status?: WorkflowStatus } = {}): Promise<Page<Workflow>> {
    return paginate(this.c, req, {
      filter: { owner_id: ownerId, ...(filter.status && { status: filter.status }) },
      sortFields: WORKFLOW_SORT_FIELDS,
      searchFields: ['name', 'description'],
    }, toWorkflow)
  }

  /** Applies a partial update; null when the workflow is not the owner's. */
  async update(ownerId: string, id: string, fields: Partial<Pick<WorkflowDoc, 'name' | 'description' | 'cluster_id' | 'metadata' | 'nodes' | 'edges' | 'status'>>): Promise<Workflow | null> {
    if (!isId(id)) return null
    const doc = await this.c.findOneAndUpdate({ _id: id, owner_id: ownerId }, { $set: { ...fields, updated_at: this.now() } }, { returnDocument: 'after' })
    return doc && toWorkflow(doc)
  }

  /** Sets the status and returns the previous one, in one atomic step. */
  async setStatus(ownerId: string, id: string, status: WorkflowStatus): Promise<{ before: WorkflowStatus; workflow: Workflow } | null> {
    if (!isId(id)) return null
    // One timestamp for the write and the reply, so the reply is what is stored.
    const at = this.now()
    const before = await this.c.findOneAndUpdate({ _id: id, owner_id: ownerId }, { $set: { status, updated_at: at } }, { returnDocument: 'before' })
    if (!before) return null
    return { before: before.status, workflow: toWorkflow({ ...before, status, updated_at: at }) }
  }

  /**
   * Allocates the next version number atomically: concurrent callers each get a distinct, consecutive
   * number. Returns null when the workflow is not the owner's.
   */
  async allocateVersion(ownerId: string, id: string): Promise<{ version: number; workflow: Workflow } | null> {
    if (!isId(id)) return null
    const doc = await this.c.findOneAndUpdate({ _id: id, owner_id: ownerId }, { $inc: { current_version: 1 } }, { returnDocument: 'after' })
    return doc && { version: doc.current_version, workflow: toWorkflow(doc) }
  }

  /**
   * Replaces the graph and allocates the next version number in one atomic update, so the version recorded
   * for it holds exactly this graph even while saves land around it. Null when not the owner's.
   */
  async replaceGraphAsNewVersion(ownerId: string, id: string, graph: Pick<WorkflowDoc, 'nodes' | 'edges' | 'metadata'>): Promise<{ version: number; workflow: Workflow } | null> {
    if (!isId(id)) return null
    const doc = await this.c.findOneAndUpdate(
      { _id: id, owner_id: ownerId },
      { $set: { nodes: graph.nodes, edges: graph.edges, metadata: graph.metadata, updated_at: this.now() }, $inc: { current_version: 1 } },
      { returnDocument: 'after' },
    )
    return doc && { version: doc.current_version, workflow: toWorkflow(doc) }
  }

  async delete(ownerId: string, id: string): Promise<boolean> {
    if (!isId(id)) return false
    const res = await this.c.deleteOne({ _id: id, owner_id: ownerId })
    return res.deletedCount === 1
  }

  async recent(ownerId: string, limit: number): Promise<Workflow[]> {
    const docs = await this.c.find({ owner_id: ownerId }).sort({ updated_at: -1, _id: -1 }).limit(limit).toArray()
    return docs.map(toWorkflow)
  }
}
