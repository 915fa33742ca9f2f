// Workflows and their versions: what users edit on the canvas all day. Every call takes the caller's id
// and the repositories scope each query to it, so another user's workflow is indistinguishable from a
// missing one.
import { NotFound, BadRequest } from '../errors.ts'
import type { EventBus } from '../events/bus.ts'
import type { WorkflowRepository, Workflow, WorkflowStatus, WorkflowSummary, ListGraph } from '../repositories/workflows.ts'
import type { VersionRepository, Version, VersionSummary } from '../repositories/versions.ts'
import type { RunRepository, Run, RunStatus } from '../repositories/runs.ts'
import type { PageRequest, Page } from '../repositories/pagination.ts'
import { assertNoSecretValues, assertValidGraph, pluginRefs, type GraphEdge, type GraphNode, type PluginFields } from './workflow-graph.ts'
import { diffGraphs, type GraphDiff } from './graph-diff.ts'
import { stripLiveStatus, withLiveStatusOf } from './live-status.ts'

export interface WorkflowServiceDeps {
  workflows: WorkflowRepository
  versions: VersionRepository
  runs: RunRepository
  bus: EventBus
  /** Whether the user may deploy to the cluster named by id or name. */
  canDeployTo: (userId: string, clusterRef: string) => Promise<boolean>
  /** The plugins named by any of `refs` (ids or names), enabled or not, in one lookup. */
  pluginsByRef: (refs: string[]) => Promise<PluginFields[]>
}

export interface CreateWorkflow { name: string; description?: string; cluster_id?: string | null; metadata?: Record<string, unknown> }
export interface UpdateWorkflow { name?: string; description?: string; cluster_id?: string | null; metadata?: Record<string, unknown>; auto_sync?: boolean }
export interface SaveGraph { nodes: GraphNode[]; edges: GraphEdge[]; metadata?: Record<string, unknown> }
export interface VersionMeta { name?: string; tag?: string; description?: string }

export class WorkflowService {
  constructor(private readonly deps: WorkflowServiceDeps) {}

  private async checkCluster(ownerId: string, ref: string | null | undefined): Promise<void> {
    if (ref && !(await this.deps.canDeployTo(ownerId, ref))) throw new BadRequest('cluster_id names no cluster you may deploy to')
  }

  async create(ownerId: string, input: CreateWorkflow): Promise<Workflow> {
    await this.checkCluster(ownerId, input.cluster_id)
    const wf = await this.deps.workflows.create(ownerId, {
      name: input.name, description: input.description ?? '', cluster_id: input.cluster_id ?? null, metadata: input.metadata ?? {},
    })
    this.deps.bus.emit('workflow.created', { owner_id: ownerId, workflow_id: wf.id })
    return wf
  }

  /** Summaries; `graph` adds each workflow's nodes and edges (`'ids'`: their ids only). */
  list(ownerId: string, req: PageRequest, filter: { status?: WorkflowStatus } = {}, options: { graph?: ListGraph } = {}): Promise<Page<WorkflowSummary>> {
    return this.deps.workflows.list(ownerId, req, filter, options)
  }

  /** As `list` (summaries only), for a caller that only reads the result (a reply): it may be shared and deep-frozen. */
  listShared(ownerId: string, req: PageRequest, filter: { status?: WorkflowStatus } = {}): Promise<Readonly<Page<WorkflowSummary>>> {
    return this.deps.workflows.listShared(ownerId, req, filter)
  }

  async get(ownerId: string, id: string): Promise<Workflow> {
    const wf = await this.deps.workflows.get(ownerId, id)
    if (!wf) throw new NotFound('workflow')
    return wf
  }

  /** As `get`, for a caller that only reads the result (a reply): it may be shared and deep-frozen. */
  async getShared(ownerId: string, id: string): Promise<Readonly<Workflow>> {
    const wf = await this.deps.workflows.getShared(ownerId, id)
    if (!wf) throw new NotFound('workflow')
    return wf
  }

  async update(ownerId: string, id: string, fields: UpdateWorkflow): Promise<Workflow> {
    await this.checkCluster(ownerId, fields.cluster_id)
    return this.write(ownerId, id, fields)
  }

  private async write(ownerId: string, id: string, fields: UpdateWorkflow & Partial<SaveGraph>): Promise<Workflow> {
    return this.written(ownerId, id, await this.deps.workflows.update(ownerId, id, fields))
  }

  /** Writes the graph (nodes keeping their stored live status) and says so on the bus. */
  private async writeGraph(ownerId: string, id: string, graph: SaveGraph): Promise<Workflow> {
    const fields = { edges: graph.edges, ...(graph.metadata && { metadata: graph.metadata }) }
    return this.written(ownerId, id, await this.deps.workflows.saveGraph(ownerId, id, fields, (stored) => withLiveStatusOf(graph.nodes, stored)))
  }

  /** What a write answered: the workflow, announced on the bus, or NotFound when it is not the owner's. */
  private written(ownerId: string, id: string, wf: Workflow | null): Workflow {
    if (!wf) throw new NotFound('workflow')
    this.deps.bus.emit('workflow.updated', { owner_id: ownerId, workflow_id: id })
    return wf
  }

  /**
   * Saves the canvas graph; no version is created. Refused when a plugin node holds a secret field's value.
   * Every node keeps the live status stored for its id (the watchers', drift included); whatever the client
   * sends under those keys is a copy it read earlier, possibly stale or in another vocabulary, and is dropped.
   */
  async save(ownerId: string, id: string, graph: SaveGraph): Promise<Workflow> {
    assertValidGraph(graph.nodes, graph.edges)
    await this.assertNoSecrets(graph.nodes)
    return this.writeGraph(ownerId, id, graph)
  }

  /**
   * Plugin secret fields are supplied at run time only. Save refuses them; a graph stored before that check
   * (an old version, or a workflow saved then) must not bring one back through restore or clone either.
   */
  private async assertNoSecrets(nodes: GraphNode[], context?: string): Promise<void> {
    const refs = pluginRefs(nodes)
    if (!refs.length) return
    try {
      assertNoSecretValues(nodes, await this.deps.pluginsByRef(refs))
    } catch (err) {
      if (context && err instanceof BadRequest) throw new BadRequest(`${context}: ${err.message}`)
      throw err
    }
  }

  async setStatus(ownerId: string, id: string, status: WorkflowStatus): Promise<Workflow> {
    const res = await this.deps.workflows.setStatus(ownerId, id, status)
    if (!res) throw new NotFound('workflow')
    if (res.before !== status) {
      this.deps.bus.emit('workflow.status_changed', { owner_id: ownerId, workflow_id: id, from: res.before, to: status })
      if (status === 'archived') this.deps.bus.emit('workflow.archived', { owner_id: ownerId, workflow_id: id })
    }
    return res.workflow
  }

  async clone(ownerId: string, id: string, name?: string): Promise<Workflow> {
    const source = await this.get(ownerId, id)
    await this.assertNoSecrets(source.nodes, 'this workflow cannot be cloned until the value is removed (save it without it)')
    const copy = await this.deps.workflows.create(ownerId, {
      name: name ?? `${source.name} (copy)`.slice(0, 200), description: source.description, cluster_id: source.cluster_id,
      // Never deployed: the source's live status describes the source's objects, not the copy's.
      nodes: stripLiveStatus(source.nodes), edges: source.edges, metadata: source.metadata, status: 'draft',
    })
    this.deps.bus.emit('workflow.created', { owner_id: ownerId, workflow_id: copy.id })
    return copy
  }

  /** Deletes the workflow with its versions and run history; resources it deployed stay in the cluster. */
  async delete(ownerId: string, id: string): Promise<void> {
    if (!(await this.deps.workflows.delete(ownerId, id))) throw new NotFound('workflow')
    await Promise.all([this.deps.versions.deleteForWorkflow(ownerId, id), this.deps.runs.deleteForWorkflow(ownerId, id)])
    this.deps.bus.emit('workflow.deleted', { owner_id: ownerId, workflow_id: id })
  }

  recent(ownerId: string, limit: number): Promise<Workflow[]> {
    return this.deps.workflows.recent(ownerId, limit)
  }

  async listRuns(ownerId: string, id: string, req: PageRequest, filter: { status?: RunStatus } = {}): Promise<Page<Run>> {
    await this.getShared(ownerId, id) // only whether it is the owner's
    return this.deps.runs.list(ownerId, id, req, filter)
  }

  // Versions

  /** Snapshots the workflow's current graph as the next version. */
  async createVersion(ownerId: string, id: string, meta: VersionMeta & { is_automatic?: boolean; restored_from?: number | null; run_id?: string | null }): Promise<Version> {
    return this.recordVersion(ownerId, id, await this.get(ownerId, id), meta)
  }

  /** Records the graph a run's lock saw (WorkflowRepository.lockForRun) as the next version, naming the run. */
  recordRunVersion(ownerId: string, id: string, workflow: Pick<Workflow, 'nodes' | 'edges' | 'metadata'>, runId: string): Promise<Version> {
    return this.recordVersion(ownerId, id, workflow, { is_automatic: true, run_id: runId, description: 'recorded by a run' })
  }

  /**
   * Stores `graph` as the next version (its number taken by the insert: VersionRepository.createNext), then
   * raises the workflow's counter to it. Live status is the cluster's, so no version holds it.
   */
  private async recordVersion(ownerId: string, id: string, graph: Pick<Workflow, 'nodes' | 'edges' | 'metadata'>, meta: VersionMeta & { is_automatic?: boolean; restored_from?: number | null; run_id?: string | null }): Promise<Version> {
    const nodes = stripLiveStatus(graph.nodes)
    const created = await this.deps.versions.createNext(id, (version) => ({
      owner_id: ownerId, name: meta.name ?? `Version ${version}`, tag: meta.tag ?? '', description: meta.description ?? '',
      nodes, edges: graph.edges, metadata: graph.metadata, is_automatic: meta.is_automatic ?? false,
      restored_from: meta.restored_from ?? null, run_id: meta.run_id ?? null, run_status: null, created_by: ownerId,
    }))
    await this.deps.workflows.raiseVersionCounter(ownerId, id, created.version)
    this.deps.bus.emit('version.created', { owner_id: ownerId, workflow_id: id, version: created.version })
    return created
  }

  /** Summaries; `graph` adds each version's nodes and edges. */
  async listVersions(ownerId: string, id: string, req: PageRequest, options: { graph?: ListGraph } = {}): Promise<Page<VersionSummary>> {
    await this.getShared(ownerId, id) // only whether it is the owner's
    return this.deps.versions.list(ownerId, id, req, options)
  }

  async getVersion(ownerId: string, id: string, version: number): Promise<Version> {
    const v = await this.deps.versions.get(ownerId, id, version)
    if (!v) throw new NotFound('version')
    return v
  }

  async updateVersion(ownerId: string, id: string, version: number, meta: VersionMeta): Promise<Version> {
    const v = await this.deps.versions.update(ownerId, id, version, meta)
    if (!v) throw new NotFound('version')
    return v
  }

  /** The version, if it may be restored (404 when missing; 400 when it was saved with a secret value). */
  async restorableVersion(ownerId: string, id: string, version: number): Promise<Version> {
    const source = await this.getVersion(ownerId, id, version)
    await this.assertNoSecrets(source.nodes, `version ${version} cannot be restored: it was saved with a secret value`)
    return source
  }

  /** Copies a version's graph back into the workflow and records that as a new version (naming `runId`, the rollback run that deploys it). */
  async restoreVersion(ownerId: string, id: string, version: number, options: { runId?: string } = {}): Promise<{ version: Version; workflow: Workflow }> {
    const source = await this.restorableVersion(ownerId, id, version)
    // A version's own `_status` (stored before versions left it out) is stale; the workflow's current one
    // still describes the objects on the cluster.
    const restored = await this.writeGraph(ownerId, id, source)
    // The version records the source's graph itself, not a read of the workflow: a save landing meanwhile
    // changes the workflow, never what this version holds.
    const recorded = await this.recordVersion(ownerId, id, source, { name: `Restored from version ${version}`, restored_from: version, is_automatic: true, run_id: options.runId ?? null })
    return { version: recorded, workflow: { ...restored, current_version: Math.max(restored.current_version, recorded.version) } }
  }

  /** From the workflow's current graph to the version's: what restoring it would change. */
  /** From the workflow's graph to `target`, a version the caller has already read. */
  async changesTo(ownerId: string, id: string, target: Version): Promise<GraphDiff & { to_version: number }> {
    const current = await this.get(ownerId, id)
    // The workflow's live status describes the cluster, not the graph: it is no change.
    return { to_version: target.version, ...diffGraphs({ nodes: stripLiveStatus(current.nodes), edges: current.edges }, target) }
  }

  async compareVersions(ownerId: string, id: string, v1: number, v2: number): Promise<GraphDiff & { from_version: number; to_version: number }> {
    if (!Number.isInteger(v1) || !Number.isInteger(v2)) throw new BadRequest('v1 and v2 must be version numbers')
    const [from, to] = await Promise.all([this.getVersion(ownerId, id, v1), this.getVersion(ownerId, id, v2)])
    return { from_version: v1, to_version: v2, ...diffGraphs(from, to) }
  }
}
