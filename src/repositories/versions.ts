// The `workflow_versions` collection: snapshots of a workflow's graph, numbered 1, 2, 3… per workflow.
// Numbers come from WorkflowRepository.allocateVersion; the unique index is the last line of defence.
import type { Collection, Db } from 'mongodb'
import { indexSetups } from './indexes.ts'
import { newId } from './ids.ts'
import { paginate, type PageRequest, type Page } from './pagination.ts'
import type { GraphEdge, GraphNode } from '../services/workflow-graph.ts'
import { backfillGraphSummaries, graphSummary, summaryProjection, sortedTypes, type GraphSummary } from './workflows.ts'

export interface VersionDoc {
  _id: string
  workflow_id: string
  owner_id: string
  version: number
  name: string
  tag: string
  description: string
  nodes: GraphNode[]
  edges: GraphEdge[]
  metadata: Record<string, unknown>
  is_automatic: boolean
  restored_from: number | null
  run_id: string | null
  run_status: string | null
  created_by: string
  created_at: Date
  /** Stored with the snapshot (see graphSummary) so lists read it. Never shown by GET. */
  node_count?: number
  edge_count?: number
  node_types?: string[]
}

export interface Version extends Omit<VersionDoc, '_id' | 'owner_id' | 'created_at' | keyof GraphSummary> { id: string; created_at: string }

export const toVersion = ({ _id, owner_id: _owner, created_at, node_count: _nc, edge_count: _ec, node_types: _nt, ...rest }: VersionDoc): Version => ({ id: _id, ...rest, created_at: created_at.toISOString() })

/** A version as lists show it: counts and node types instead of the graph, which `graph` adds back. */
export interface VersionSummary extends Omit<Version, 'nodes' | 'edges'>, GraphSummary, Partial<Pick<Version, 'nodes' | 'edges'>> {}

const VERSION_SCALAR_FIELDS = [
  '_id', 'workflow_id', 'version', 'name', 'tag', 'description', 'metadata', 'is_automatic', 'restored_from',
  'run_id', 'run_status', 'created_by', 'created_at',
] as const satisfies readonly (keyof VersionDoc)[]

type SummaryDoc = Omit<VersionDoc, 'nodes' | 'edges' | 'owner_id'> & GraphSummary & Partial<Pick<VersionDoc, 'nodes' | 'edges'>>

const toVersionSummary = ({ _id, created_at, node_types, ...rest }: SummaryDoc): VersionSummary => ({
  id: _id, ...rest, node_types: sortedTypes(node_types), created_at: created_at.toISOString(),
})

indexSetups.push(async (db) => {
  const c = db.collection('workflow_versions')
  await c.createIndex({ workflow_id: 1, version: 1 }, { unique: true })
  await c.createIndex({ owner_id: 1, workflow_id: 1, created_at: -1 })
  await backfillGraphSummaries(db, 'workflow_versions')
})

export type VersionInput = Omit<VersionDoc, '_id' | 'created_at'>

export class VersionRepository {
  private readonly c: Collection<VersionDoc>
  constructor(db: Db, private readonly now: () => Date = () => new Date()) {
    this.c = db.collection<VersionDoc>('workflow_versions')
  }

  async create(input: VersionInput): Promise<Version> {
    const doc: VersionDoc = { _id: newId(), ...input, ...graphSummary(input), created_at: this.now() }
    await this.c.insertOne(doc)
    return toVersion(doc)
  }

  async get(ownerId: string, workflowId: string, version: number): Promise<Version | null> {
    const doc = await this.c.findOne({ owner_id: ownerId, workflow_id: workflowId, version })
    return doc && toVersion(doc)
  }

  /** Summaries, computed by the database; `graph` adds the nodes and edges. */
  async list(ownerId: string, workflowId: string, req: PageRequest, options: { graph?: boolean } = {}): Promise<Page<VersionSummary>> {
    return paginate(this.c, req, {
      filter: { owner_id: ownerId, workflow_id: workflowId },
      sortFields: { created_at: 'created_at', version: 'version', name: 'name' },
      searchFields: ['name', 'tag', 'description'],
      projection: summaryProjection(VERSION_SCALAR_FIELDS, options.graph ?? false),
    }, (doc) => toVersionSummary(doc as unknown as SummaryDoc))
  }

  async update(ownerId: string, workflowId: string, version: number, fields: Partial<Pick<VersionDoc, 'name' | 'tag' | 'description' | 'run_id' | 'run_status'>>): Promise<Version | null> {
    const doc = await this.c.findOneAndUpdate({ owner_id: ownerId, workflow_id: workflowId, version }, { $set: fields }, { returnDocument: 'after' })
    return doc && toVersion(doc)
  }

  async deleteForWorkflow(ownerId: string, workflowId: string): Promise<void> {
    await this.c.deleteMany({ owner_id: ownerId, workflow_id: workflowId })
  }
}
