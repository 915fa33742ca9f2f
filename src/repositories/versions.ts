// The `workflow_versions` collection: snapshots of a workflow's graph, numbered 1, 2, 3… per workflow.
// A number exists once its record does: it is taken by inserting the record as the highest one plus one,
// the unique (workflow_id, version) index settling races (the loser takes the next). So no crash can leave a
// hole in the numbers: there is no counter to advance first. The workflow's `current_version` follows the
// records (WorkflowRepository.raiseVersionCounter) and is set right at start-up (repairVersionCounters).
import { MongoServerError, type Collection, type Db } from 'mongodb'
import { indexSetups } from './indexes.ts'
import { newId } from './ids.ts'
import { paginate, type PageRequest, type Page } from './pagination.ts'
import type { GraphEdge, GraphNode } from '../services/workflow-graph.ts'
import { backfillGraphSummaries, graphSummary, summaryProjection, sortedTypes, type GraphSummary, type ListGraph } from './workflows.ts'

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
  await repairVersionCounters(db)
})

/**
 * Makes every workflow's `current_version` equal to its highest stored version (0 when it has none): after
 * a crash between storing a version and raising the counter, or counters left ahead of their records by
 * the older numbering (a counter bumped first, its record never written). Stored versions keep their
 * numbers. Each fix is conditional on the counter read, so a write landing meanwhile is not undone.
 * Answers how many counters it changed.
 */
export async function repairVersionCounters(db: Db): Promise<number> {
  const highest = new Map<string, number>()
  const grouped = db.collection<VersionDoc>('workflow_versions').aggregate<{ _id: string; max: number }>([{ $group: { _id: '$workflow_id', max: { $max: '$version' } } }])
  for await (const g of grouped) highest.set(g._id, g.max)
  const workflows = db.collection<{ _id: string; current_version: number }>('workflows')
  let fixed = 0
  for await (const w of workflows.find({}, { projection: { current_version: 1 } })) {
    const max = highest.get(w._id) ?? 0
    if (w.current_version === max) continue
    const res = await workflows.updateOne({ _id: w._id, current_version: w.current_version }, { $set: { current_version: max } })
    fixed += res.modifiedCount
  }
  return fixed
}

/** Attempts at taking a number before giving up; each failed attempt means another writer took one. */
const MAX_NUMBER_ATTEMPTS = 1000

const isDuplicateKey = (err: unknown) => err instanceof MongoServerError && err.code === 11000

export type VersionInput = Omit<VersionDoc, '_id' | 'created_at'>

export class VersionRepository {
  private readonly c: Collection<VersionDoc>
  constructor(db: Db, private readonly now: () => Date = () => new Date()) {
    this.c = db.collection<VersionDoc>('workflow_versions')
  }

  /**
   * Stores the workflow's next version: one more than its highest stored, taken by the insert itself, so the
   * record and its number are one write. `make` builds the record for a number (its default name has it).
   */
  async createNext(workflowId: string, make: (version: number) => Omit<VersionInput, 'version' | 'workflow_id'>): Promise<Version> {
    for (let attempt = 0; attempt < MAX_NUMBER_ATTEMPTS; attempt++) {
      const version = (await this.highest(workflowId)) + 1
      const doc: VersionDoc = { _id: newId(), ...make(version), workflow_id: workflowId, version, created_at: this.now() }
      Object.assign(doc, graphSummary(doc))
      try {
        await this.c.insertOne(doc)
        return toVersion(doc)
      } catch (err) {
        if (!isDuplicateKey(err)) throw err
      }
    }
    throw new Error(`no version number could be taken for workflow ${workflowId} in ${MAX_NUMBER_ATTEMPTS} attempts`)
  }

  /** The highest stored version number of a workflow, 0 for none (internal: callers have checked the owner). */
  async highest(workflowId: string): Promise<number> {
    const doc = await this.c.findOne({ workflow_id: workflowId }, { sort: { version: -1 }, projection: { version: 1 } })
    return doc?.version ?? 0
  }

  async get(ownerId: string, workflowId: string, version: number): Promise<Version | null> {
    const doc = await this.c.findOne({ owner_id: ownerId, workflow_id: workflowId, version })
    return doc && toVersion(doc)
  }

  /** Summaries, computed by the database; `graph` adds the nodes and edges. */
  async list(ownerId: string, workflowId: string, req: PageRequest, options: { graph?: ListGraph } = {}): Promise<Page<VersionSummary>> {
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
