// The `workflows` collection. Every read and write takes the owner: another user's id is simply not found.
import { isDeepStrictEqual } from 'node:util'
import type { Collection, Db } from 'mongodb'
import { indexSetups } from './indexes.ts'
import { isId, newId } from './ids.ts'
import { paginate, type PageRequest, type Page } from './pagination.ts'
import { ReadCache, type ReadCacheOptions } from './read-cache.ts'
import { PageCache } from './page-cache.ts'
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
  /** Re-apply on drift (API.md §12). Absent on records made before it existed: read as false. */
  auto_sync?: boolean
  /** The run holding the workflow's run lock; absent or null when none runs. Never shown. */
  running_run_id?: string | null
  /** The graph's summary, written with the graph so lists read it instead of computing it. Never shown by GET. */
  node_count?: number
  edge_count?: number
  node_types?: string[]
}

export interface Workflow extends Omit<WorkflowDoc, '_id' | 'created_at' | 'updated_at' | 'last_run_at' | 'running_run_id' | 'auto_sync' | keyof GraphSummary> {
  id: string
  auto_sync: boolean
  last_run_at: string | null
  created_at: string
  updated_at: string
}

export const toWorkflow = ({ _id, created_at, updated_at, last_run_at, running_run_id: _lock, node_count: _nc, edge_count: _ec, node_types: _nt, ...rest }: WorkflowDoc): Workflow => ({
  id: _id, ...rest, auto_sync: rest.auto_sync === true, last_run_at: last_run_at ? last_run_at.toISOString() : null, created_at: created_at.toISOString(), updated_at: updated_at.toISOString(),
})

/** A workflow as lists show it: counts and node types instead of the graph, which `graph` adds back. */
export interface WorkflowSummary extends Omit<Workflow, 'nodes' | 'edges'>, GraphSummary, Partial<Pick<Workflow, 'nodes' | 'edges'>> {}

export interface GraphSummary { node_count: number; edge_count: number; node_types: string[] }

/** The summary stored beside a graph whenever the graph is written (workflows and versions alike). */
export function graphSummary(graph: { nodes?: ReadonlyArray<{ type?: unknown }>; edges?: readonly unknown[] }): Partial<GraphSummary> {
  return {
    ...(graph.nodes && { node_count: graph.nodes.length, node_types: sortedTypes([...new Set(graph.nodes.map((n) => n.type))]) }),
    ...(graph.edges && { edge_count: graph.edges.length }),
  }
}

/**
 * The same summary as a pipeline update computes it, for documents written before it was stored (a
 * start-up backfill). `$setUnion` makes the types unique in any order; reads sort them (portable to
 * MongoDB before 5.2). Not-array graphs count as empty rather than failing the whole backfill.
 */
export const GRAPH_SUMMARY_EXPRESSIONS = {
  node_count: { $cond: [{ $isArray: '$nodes' }, { $size: '$nodes' }, 0] },
  edge_count: { $cond: [{ $isArray: '$edges' }, { $size: '$edges' }, 0] },
  node_types: { $cond: [{ $isArray: '$nodes' }, { $setUnion: [{ $ifNull: ['$nodes.type', []] }, []] }, []] },
} as const

/** Stores the summary on every document of `collection` that lacks it. */
export async function backfillGraphSummaries(db: Db, collection: string): Promise<void> {
  await db.collection(collection).updateMany({ node_count: { $exists: false } }, [{ $set: GRAPH_SUMMARY_EXPRESSIONS }])
}

/**
 * How much of the graph a list carries: none (false), all of it (true), or each node's and edge's `id` only
 * ('ids': a client that shows `nodes.length` gets real entries without every canvas being read out).
 */
export type ListGraph = boolean | 'ids'

/** A list's find projection: the scalar fields and the stored summary; `graph` adds the nodes and edges. */
export function summaryProjection(fields: readonly string[], graph: ListGraph): Record<string, unknown> {
  return {
    ...Object.fromEntries(fields.map((f) => [f, 1])), node_count: 1, edge_count: 1, node_types: 1,
    ...(graph === true && { nodes: 1, edges: 1 }), ...(graph === 'ids' && { 'nodes.id': 1, 'edges.id': 1 }),
  }
}

/** Node types as the projection computed them: strings only, sorted. */
export const sortedTypes = (types: unknown): string[] => (Array.isArray(types) ? types.filter((t): t is string => typeof t === 'string').sort() : [])

const WORKFLOW_SCALAR_FIELDS = [
  '_id', 'owner_id', 'name', 'description', 'cluster_id', 'metadata', 'status', 'current_version',
  'run_count', 'success_count', 'failure_count', 'last_run_at', 'created_at', 'updated_at', 'auto_sync',
] as const satisfies readonly (keyof WorkflowDoc)[]

type SummaryDoc = Omit<WorkflowDoc, 'nodes' | 'edges'> & GraphSummary & Partial<Pick<WorkflowDoc, 'nodes' | 'edges'>>

const toWorkflowSummary = ({ _id, created_at, updated_at, last_run_at, node_types, ...rest }: SummaryDoc): WorkflowSummary => ({
  id: _id, ...rest, auto_sync: rest.auto_sync === true, node_types: sortedTypes(node_types),
  last_run_at: last_run_at ? last_run_at.toISOString() : null, created_at: created_at.toISOString(), updated_at: updated_at.toISOString(),
})

export const WORKFLOW_SORT_FIELDS = { created_at: 'created_at', updated_at: 'updated_at', name: 'name', status: 'status', last_run_at: 'last_run_at' } as const

indexSetups.push(async (db) => {
  const c = db.collection('workflows')
  await c.createIndex({ owner_id: 1, updated_at: -1 })
  await c.createIndex({ owner_id: 1, created_at: -1 })
  await c.createIndex({ owner_id: 1, name: 1 })
  await c.createIndex({ owner_id: 1, status: 1 })
  await backfillGraphSummaries(db, 'workflows')
})

/** List pages the page cache keeps: up to 100 summaries of ~0.5 KB each, ~5 MB at most; with each page's reply and its serialized form (for the pages routes read shared), ~15 MB. */
const LIST_PAGE_CACHE_ENTRIES = 100

export type WorkflowInput = Pick<WorkflowDoc, 'name' | 'description' | 'cluster_id'> & Partial<Pick<WorkflowDoc, 'nodes' | 'edges' | 'metadata' | 'status' | 'auto_sync'>>

export interface WorkflowRepositoryOptions {
  /**
   * Cache reads by id in memory. Correct only while this process is the database's sole client (the
   * embedded server): writes by another process or replica would never drop its entries.
   */
  cache?: ReadCacheOptions
}

// Every method that writes the collection drops the id from the read cache when it is done (in `finally`:
// a write that failed may still have been applied). A new write method must do the same.
export class WorkflowRepository {
  private readonly c: Collection<WorkflowDoc>
  private readonly cache: ReadCache<Workflow> | null
  // Summary list pages (not include=graph ones, which can be large), under the same condition as `cache`.
  private readonly pages: PageCache<Page<WorkflowSummary>> | null
  constructor(db: Db, private readonly now: () => Date = () => new Date(), options: WorkflowRepositoryOptions = {}) {
    this.c = db.collection<WorkflowDoc>('workflows')
    this.cache = options.cache ? new ReadCache<Workflow>(options.cache) : null
    this.pages = options.cache ? new PageCache<Page<WorkflowSummary>>({ maxEntries: LIST_PAGE_CACHE_ENTRIES }) : null
  }

  /**
   * Runs a write to `id`, then drops `id` from the read cache and every cached list page; `listed: false` keeps
   * the pages, for a write of nothing a summary shows.
   */
  private async writing<R>(id: string, write: () => Promise<R>, { listed = true }: { listed?: boolean } = {}): Promise<R> {
    try {
      return await write()
    } finally {
      this.cache?.drop(id)
      if (listed) this.pages?.dropAll()
    }
  }

  async create(ownerId: string, input: WorkflowInput): Promise<Workflow> {
    const at = this.now()
    const doc: WorkflowDoc = {
      _id: newId(), owner_id: ownerId, name: input.name, description: input.description, cluster_id: input.cluster_id,
      nodes: input.nodes ?? [], edges: input.edges ?? [], metadata: input.metadata ?? {}, status: input.status ?? 'draft',
      current_version: 0, run_count: 0, success_count: 0, failure_count: 0, last_run_at: null, created_at: at, updated_at: at,
      auto_sync: input.auto_sync ?? false,
    }
    Object.assign(doc, graphSummary(doc))
    await this.writing(doc._id, () => this.c.insertOne(doc))
    return toWorkflow(doc)
  }

  async get(ownerId: string, id: string): Promise<Workflow | null> {
    if (!isId(id)) return null
    if (!this.cache) return this.load(ownerId, id)
    const hit = this.cache.get(id, ownerId)
    if (hit !== undefined) return hit
    return this.cache.read(id, () => this.load(ownerId, id))
  }

  private async load(ownerId: string, id: string): Promise<Workflow | null> {
    const doc = await this.c.findOne({ _id: id, owner_id: ownerId })
    return doc && toWorkflow(doc)
  }

  /**
   * As `get`, for callers that only read the result (a reply): with the cache on it is the cached snapshot
   * itself, deep-frozen and shared by every such caller, so it must not be changed (trying throws). Saves the
   * copy `get` makes, and lets the reply's serialized form be kept with it (see src/reply-serializer.ts).
   */
  async getShared(ownerId: string, id: string): Promise<Readonly<Workflow> | null> {
    if (!isId(id)) return null
    if (!this.cache) return this.load(ownerId, id)
    const hit = this.cache.getShared(id, ownerId)
    if (hit !== undefined) return hit
    return this.cache.read(id, () => this.load(ownerId, id), { shared: true })
  }

  /** Summaries, computed by the database; `graph` adds the nodes and edges. */
  async list(ownerId: string, req: PageRequest, filter: { status?: WorkflowStatus } = {}, options: { graph?: ListGraph } = {}): Promise<Page<WorkflowSummary>> {
    const load = () => this.listPage(ownerId, req, filter, options)
    if (!this.pages || options.graph) return load()
    const key = this.pageKey(ownerId, req, filter)
    return this.pages.get(key) ?? this.pages.read(key, load)
  }

  /**
   * As `list` (summaries only), for callers that only read the result (a reply): with the page cache on it is
   * the cached page itself, deep-frozen and shared, so it must not be changed (trying throws).
   */
  async listShared(ownerId: string, req: PageRequest, filter: { status?: WorkflowStatus } = {}): Promise<Readonly<Page<WorkflowSummary>>> {
    const load = () => this.listPage(ownerId, req, filter, {})
    if (!this.pages) return load()
    const key = this.pageKey(ownerId, req, filter)
    return this.pages.getShared(key) ?? this.pages.read(key, load, { shared: true })
  }

  // Every input of the query, and nothing else, so two requests share a page exactly when their answers agree.
  private pageKey(ownerId: string, req: PageRequest, filter: { status?: WorkflowStatus }): string {
    return JSON.stringify([ownerId, req.page, req.limit, req.sort, req.order, req.search, filter.status])
  }

  private listPage(ownerId: string, req: PageRequest, filter: { status?: WorkflowStatus }, options: { graph?: ListGraph }): Promise<Page<WorkflowSummary>> {
    return paginate(this.c, req, {
      filter: { owner_id: ownerId, ...(filter.status && { status: filter.status }) },
      sortFields: WORKFLOW_SORT_FIELDS,
      searchFields: ['name', 'description'],
      projection: summaryProjection(WORKFLOW_SCALAR_FIELDS, options.graph ?? false),
    }, (doc) => toWorkflowSummary(doc as unknown as SummaryDoc))
  }

  /** Applies a partial update; null when the workflow is not the owner's. */
  async update(ownerId: string, id: string, fields: Partial<Pick<WorkflowDoc, 'name' | 'description' | 'cluster_id' | 'metadata' | 'nodes' | 'edges' | 'status' | 'auto_sync'>>): Promise<Workflow | null> {
    if (!isId(id)) return null
    const doc = await this.writing(id, () => this.c.findOneAndUpdate({ _id: id, owner_id: ownerId }, { $set: { ...fields, ...graphSummary(fields), updated_at: this.now() } }, { returnDocument: 'after' }))
    return doc && toWorkflow(doc)
  }

  /**
   * Writes a graph (nodes, edges, metadata) whose nodes carry the live status stored now: `withLive` gets
   * the stored nodes (`id` and `data._status` only) and answers the nodes to write. A watcher's status
   * landing between that read and the write is put back afterwards, node by node and only where the
   * stored value is still the one this save wrote, so a newer status is never lost to a save that began
   * before it. Null when the workflow is not the owner's.
   */
  async saveGraph(
    ownerId: string, id: string,
    fields: Pick<WorkflowDoc, 'edges'> & Partial<Pick<WorkflowDoc, 'metadata'>>,
    withLive: (stored: readonly GraphNode[]) => GraphNode[] | Promise<GraphNode[]>,
  ): Promise<Workflow | null> {
    if (!isId(id)) return null
    const stored = await this.c.findOne({ _id: id, owner_id: ownerId }, { projection: { 'nodes.id': 1, 'nodes.data._status': 1 } })
    if (!stored) return null
    const nodes = await withLive(Array.isArray(stored.nodes) ? stored.nodes : [])
    const set = { ...fields, nodes, ...graphSummary({ nodes, edges: fields.edges }), updated_at: this.now() }
    return this.writing(id, async () => {
      const before = await this.c.findOneAndUpdate({ _id: id, owner_id: ownerId }, { $set: set }, { returnDocument: 'before' })
      if (!before) return null
      const readStatus = liveStatusById(stored.nodes)
      const nowStatus = liveStatusById(before.nodes)
      const saved = nodes.map((node) => {
        const newer = nowStatus.get(node.id)
        if (newer === undefined || isDeepStrictEqual(newer, readStatus.get(node.id))) return node
        return { ...node, data: { ...(node.data as Record<string, unknown>), _status: newer } }
      })
      for (let i = 0; i < nodes.length; i++) {
        if (saved[i] === nodes[i]) continue
        const wrote = (nodes[i]!.data as { _status?: unknown } | undefined)?._status
        await this.c.updateOne(
          { _id: id, owner_id: ownerId },
          { $set: { 'nodes.$[n].data._status': (saved[i]!.data as { _status: unknown })._status } },
          { arrayFilters: [{ 'n.id': nodes[i]!.id, 'n.data._status': wrote === undefined ? { $exists: false } : wrote }] },
        )
      }
      return toWorkflow({ ...before, ...set, nodes: saved })
    })
  }

  /** Sets the status and returns the previous one, in one atomic step. */
  async setStatus(ownerId: string, id: string, status: WorkflowStatus): Promise<{ before: WorkflowStatus; workflow: Workflow } | null> {
    if (!isId(id)) return null
    // One timestamp for the write and the reply, so the reply is what is stored.
    const at = this.now()
    const before = await this.writing(id, () => this.c.findOneAndUpdate({ _id: id, owner_id: ownerId }, { $set: { status, updated_at: at } }, { returnDocument: 'before' }))
    if (!before) return null
    return { before: before.status, workflow: toWorkflow({ ...before, status, updated_at: at }) }
  }

  /**
   * Raises `current_version` to `version` (never lowers it), once the version record is stored: the
   * record is the number's one source (VersionRepository.createNext), the counter follows it. A crash
   * between the two leaves the counter one behind, which the start-up repair sets right (repairVersionCounters).
   */
  async raiseVersionCounter(ownerId: string, id: string, version: number): Promise<void> {
    if (!isId(id)) return
    await this.writing(id, () => this.c.updateOne({ _id: id, owner_id: ownerId }, { $max: { current_version: version } }))
  }

  /**
   * Takes the workflow's run lock for `runId`: two runs can never both hold it. Answers the workflow as the
   * lock saw it (the graph the run renders and records as its version); `locked` names the run holding it
   * when taken; null when the workflow is not the owner's.
   */
  async lockForRun(ownerId: string, id: string, runId: string): Promise<{ workflow: Workflow } | { locked: string } | null> {
    if (!isId(id)) return null
    // Deleting a workflow with its objects takes the lock too, so no run starts meanwhile.
    const doc = await this.writing(id, () => this.c.findOneAndUpdate(
      { _id: id, owner_id: ownerId, $or: [{ running_run_id: null }, { running_run_id: { $exists: false } }] },
      { $set: { running_run_id: runId } },
      { returnDocument: 'after' },
      // The lock is never shown, so list pages stay cached.
    ), { listed: false })
    if (doc) return { workflow: toWorkflow(doc) }
    const held = await this.c.findOne({ _id: id, owner_id: ownerId }, { projection: { running_run_id: 1 } })
    // Released between the two reads: the caller may simply try again, but a 409 naming no run is honest too.
    return held ? { locked: held.running_run_id ?? '' } : null
  }

  /** Releases the lock if `runId` still holds it. */
  async unlockRun(id: string, runId: string): Promise<void> {
    await this.writing(id, () => this.c.updateOne({ _id: id, running_run_id: runId }, { $set: { running_run_id: null } }))
  }

  /** Counts a finished (non-dry) run in the workflow's counters. */
  async countRun(ownerId: string, id: string, status: 'completed' | 'failed', at: Date): Promise<void> {
    await this.writing(id, () => this.c.updateOne(
      { _id: id, owner_id: ownerId },
      { $inc: { run_count: 1, [status === 'completed' ? 'success_count' : 'failure_count']: 1 }, $set: { last_run_at: at } },
    ))
  }

  /** Workflows whose run lock is held, with the holder: start-up recovery releases those of dead runs. */
  async lockedForRuns(): Promise<Array<{ id: string; run_id: string }>> {
    const docs = await this.c.find({ running_run_id: { $type: 'string' } }, { projection: { running_run_id: 1 } }).toArray()
    return docs.map((d) => ({ id: d._id, run_id: d.running_run_id as string }))
  }

  /**
   * Sets one node's live status (`data._status`) and nothing else: no other field is rewritten and
   * `updated_at` is left alone, so a save or a fix prepared meanwhile is not mistaken for a conflicting edit.
   * Answers whether a node with that id was there.
   */
  async setNodeStatus(ownerId: string, id: string, nodeId: string, status: Record<string, unknown>): Promise<boolean> {
    if (!isId(id)) return false
    const res = await this.writing(id, () => this.c.updateOne(
      { _id: id, owner_id: ownerId, 'nodes.id': nodeId },
      { $set: { 'nodes.$[n].data._status': status } },
      { arrayFilters: [{ 'n.id': nodeId }] },
      // A summary shows neither node data nor updated_at, so the watchers' writes leave list pages cached.
    ), { listed: false })
    return res.matchedCount === 1
  }

  async delete(ownerId: string, id: string): Promise<boolean> {
    if (!isId(id)) return false
    const res = await this.writing(id, () => this.c.deleteOne({ _id: id, owner_id: ownerId }))
    return res.deletedCount === 1
  }

  /** The ids of the owner's workflows. */
  async idsOf(ownerId: string): Promise<Set<string>> {
    return new Set((await this.c.find({ owner_id: ownerId }, { projection: { _id: 1 } }).toArray()).map((d) => String(d._id)))
  }

  /** Ids of deployed workflows (a real run finished) that are not archived: those whose resources are watched. */
  async deployedIds(ownerId?: string): Promise<Set<string>> {
    const filter = { ...(ownerId !== undefined && { owner_id: ownerId }), status: { $ne: 'archived' as const }, run_count: { $gt: 0 } }
    return new Set((await this.c.find(filter, { projection: { _id: 1 } }).toArray()).map((d) => String(d._id)))
  }

  async recent(ownerId: string, limit: number): Promise<Workflow[]> {
    const docs = await this.c.find({ owner_id: ownerId }).sort({ updated_at: -1, _id: -1 }).limit(limit).toArray()
    return docs.map(toWorkflow)
  }
}

/** Each node's stored `data._status`, by node id (nodes without one left out). */
function liveStatusById(nodes: readonly GraphNode[] | undefined): Map<string, unknown> {
  const out = new Map<string, unknown>()
  for (const n of Array.isArray(nodes) ? nodes : []) {
    const data = (n as { data?: unknown }).data
    if (typeof data === 'object' && data !== null && '_status' in data) out.set(n.id, (data as { _status: unknown })._status)
  }
  return out
}
