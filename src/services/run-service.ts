// Runs: a workflow's graph put on a cluster. The request does the checks (access, rendering) and records
// the run; the apply happens in the background, recorded as it goes, so neither a client disconnect nor a
// crash leaves anyone guessing. Run-time secret and env values go to the cluster and nowhere else.
import { Heartbeat, staleBefore } from './heartbeat.ts'
import { coalescingWriter, type CoalescingWriter } from './coalescing-writer.ts'
import type { KubeConfig } from '@kubernetes/client-node'
import { BadRequest, Conflict, NotFound, Unavailable, UpstreamError, AppError } from '../errors.ts'
import { ObjectId } from 'mongodb'
import type { EventBus } from '../events/bus.ts'
import type { WorkflowRepository, Workflow } from '../repositories/workflows.ts'
import type { VersionRepository } from '../repositories/versions.ts'
import { newRunId, type RunRepository, type Run, type RunDoc, type RunNodeResult, type RunOutcome, type RunTrigger } from '../repositories/runs.ts'
import type { GraphEdge, GraphNode } from './workflow-graph.ts'
import type { WorkflowService } from './workflow-service.ts'
import type { Cluster } from '../repositories/clusters.ts'
import { oncePerRender, renderWorkflow } from '../manifests/index.ts'
import type { KubeObject, PluginForRender, RenderedObject } from '../manifests/types.ts'
import type { AppliedObject, DeployOptions, DeployResult, PrunedObject } from '../kube/deploy.ts'
import { describeClusterError } from '../kube/upstream-errors.ts'
import { redactor, redactDeep, triggerValues, type Redact } from './run-redaction.ts'
import { ClusterLimiters, type Schedule } from './run-limiter.ts'
import { RunLog } from './run-log.ts'
import { errorForLog } from '../log-redaction.ts'
import { awaitReady, WORKLOAD_KINDS, type LiveFollower } from './run-readiness.ts'

export interface RunRequest {
  cluster?: string
  namespace?: string
  dry_run?: boolean
  force?: boolean
  prune?: boolean
  /** Take over existing objects of another workflow (yours) or, as the cluster's owner, anyone's. */
  adopt?: boolean
  trigger_data?: { secrets?: Record<string, Record<string, string>>; envVars?: Record<string, Record<string, string>> }
}

/** What a run needs of a plugin: rendering, and the words to name its operator when its CRD is missing. */
export type RunPlugin = PluginForRender & { display_name: string; description: string }

export interface ApplyEngine {
  deploy(kc: KubeConfig, objects: RenderedObject[], opts: DeployOptions): Promise<DeployResult>
  removeWorkflowObjects(kc: KubeConfig, opts: { workflowId: string; namespaces: string[]; schedule?: Schedule; log?: (line: string) => void }): Promise<PrunedObject[]>
}

export interface TrackedResources {
  recordApplied(ownerId: string, run: { workflow_id: string; cluster_id: string; cluster: string }, objects: AppliedObject[]): Promise<void>
  markDeleted(ownerId: string, clusterId: string, objects: Array<{ kind: string; name: string; namespace: string | null }>): Promise<void>
  namespacesFor(ownerId: string, workflowId: string, clusterId: string): Promise<string[]>
}

interface Logger { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void; error(obj: object, msg?: string): void }

export interface RunServiceDeps {
  workflows: WorkflowRepository
  workflowService: WorkflowService
  versions: VersionRepository
  runs: RunRepository
  clusters: { kubeConfigFor(userId: string, ref: string, need: 'deployer'): Promise<{ kc: KubeConfig; cluster: Cluster }> }
  plugin: (ref: string) => Promise<RunPlugin | null>
  engine: ApplyEngine
  resources: TrackedResources
  /** The watchers: a run's objects are followed from their apply, and its readiness wait reads their state. */
  live: LiveFollower
  bus: EventBus
  log: Logger
  clusterConcurrency: number
  readyTimeoutMs: number
  /** How often this process marks its runs alive; a run silent for three periods is taken as abandoned. */
  heartbeatMs: number
  requestTimeoutMs?: number
  /** renderWorkflow, on a worker thread for a large graph (src/workers/render.ts); renderWorkflow itself when absent. */
  render?: typeof renderWorkflow
  /** Other replicas share the database: a run lock with no run record may be theirs, just taken (see releaseOrphanLocks). */
  shared?: boolean
  /** Drift detection's baseline: told what each run applied (API.md §12). */
  applied?: AppliedRecorder
}

export interface StartedRun { run: Run; done: Promise<Run> }

/** What sync (and auto-sync) take of a run request: the target, run-time values, and whether to only preview. */
export type SyncRequest = Pick<RunRequest, 'cluster' | 'namespace' | 'trigger_data' | 'dry_run'>

/**
 * The graph a run deploys. `current`: the workflow's graph, recorded as a new version once the run holds the
 * lock (a normal run). `version`: a recorded version's graph, no version recorded, unless `onLocked` (called
 * under the run lock, before the run is recorded) answers the version the run is of instead (a rollback's
 * restore). `deployed`: the version last deployed to the run's cluster (sync), resolved again under the lock.
 */
export type RunSource =
  | { graph: 'current' }
  | { graph: 'version'; version: number; onLocked?: (runId: string) => Promise<number> }
  | { graph: 'deployed' }

export interface RunOptions { trigger: RunTrigger; rollbackOf?: number | null; source: RunSource }

type Graph = { nodes: GraphNode[]; edges: GraphEdge[] }

/** One object a run applied (or failed or skipped: `applied.action`): what it rendered (secrets revealed: never store as is) and what the server answered. */
export interface AppliedPair { node_id: string; rendered: KubeObject; applied: AppliedObject }

/**
 * Told what a finished (non-dry) run left on its cluster: drift detection's baseline (API.md §12). Called
 * once per run after the apply, with the objects it applied and those its prune deleted.
 */
export interface AppliedRecorder {
  record(run: { owner_id: string; workflow_id: string; run_id: string; version: number; cluster_id: string }, objects: AppliedPair[], pruned: PrunedObject[], redact: Redact): Promise<void>
}

const RECENT_RUNS_FOR_NAMESPACES = 20
const INTERRUPTED = 'interrupted: the service stopped before this run finished; check the cluster and run again'
/**
 * Shared mode: how old a run lock with no unfinished run behind it must be before it is taken for a dead
 * replica's. A replica records its run moments after locking, but a delete with its objects holds the lock
 * (holder `delete-<id>`) for as long as its clusters take; the age is read from the holder's id (an ObjectId,
 * stamped by the locking replica's clock, so the margin also covers clock skew).
 */
const ORPHAN_LOCK_AGE_MS = 10 * 60_000
/** Shared mode: orphan locks are looked for about once a minute, not at every heartbeat (the query scans workflows). */
const ORPHAN_LOCK_CHECK_MS = 60_000

/** A run's plan, everything the background part needs. */
interface Plan {
  ownerId: string; workflow: Workflow; runId: string; version: number; cluster: Cluster; kc: KubeConfig
  objects: RenderedObject[]; plugins: Map<string, RunPlugin>; redact: Redact; request: RunRequest; startedAt: Date
}

export class RunService {
  private readonly limiters: ClusterLimiters
  private readonly inFlight = new Map<string, { ownerId: string; workflowId: string; dryRun: boolean; done: Promise<Run> }>()
  private closing = false
  private announceClosing!: () => void
  /** Settles when shutdown begins: replies waiting for a run answer 202 at once instead of holding the server open. */
  private readonly closingSignal = new Promise<void>((resolve) => { this.announceClosing = resolve })
  /** Tells this process's runs from those of a dead process or of another replica on the same database. */
  private readonly instanceId = newRunId()
  private readonly heartbeat: Heartbeat

  constructor(private readonly deps: RunServiceDeps) {
    this.heartbeat = new Heartbeat({
      periodMs: this.deps.heartbeatMs,
      beat: (at) => this.deps.runs.heartbeat([...this.inFlight.keys()], at),
      sweep: () => this.sweep(),
      onError: (err) => this.deps.log.warn({ err: errorForLog(err) }, 'run heartbeat failed'),
    })
    this.limiters = new ClusterLimiters(deps.clusterConcurrency)
  }

  /** Checks, records and starts a run of the workflow's current graph; `done` settles with the finished run (never rejects). */
  start(ownerId: string, workflowId: string, request: RunRequest): Promise<StartedRun> {
    return this.startFrom(ownerId, workflowId, request, { trigger: 'manual', source: { graph: 'current' } })
  }

  /**
   * Re-applies what was last deployed to the cluster (the version of the latest finished non-dry run there):
   * a run of that version, recording none, in the namespace that run used unless `request` names one.
   * 409 when nothing was deployed there. Otherwise as `start` (checks, lock, prune, readiness wait), with
   * `force`: fields someone changed on the cluster (kubectl, another manager) are what sync takes back.
   */
  sync(ownerId: string, workflowId: string, request: SyncRequest, trigger: 'sync' | 'auto_sync'): Promise<StartedRun> {
    const { cluster, namespace, trigger_data, dry_run } = request
    return this.startFrom(ownerId, workflowId, { cluster, namespace, trigger_data, dry_run, force: true }, { trigger, source: { graph: 'deployed' } })
  }

  /** As `start`, of the graph `options.source` names, the run recorded with its trigger (and the version a rollback restored). */
  async startFrom(ownerId: string, workflowId: string, request: RunRequest, options: RunOptions): Promise<StartedRun> {
    if (this.closing) throw new Unavailable('the service is shutting down; run again in a moment')
    let workflow = await this.deps.workflowService.get(ownerId, workflowId)
    const ref = request.cluster ?? workflow.cluster_id
    if (!ref) throw new BadRequest('no cluster to run on: give `cluster`, or set the workflow\'s cluster_id')
    const { kc, cluster } = await this.deps.clusters.kubeConfigFor(ownerId, ref, 'deployer')
    const source = options.source
    const deployed = source.graph === 'deployed' ? await this.deployedVersion(ownerId, workflowId, cluster) : null
    // Sync re-applies into the namespace the deployment went to: another one would prune it away.
    const asked = request
    if (deployed) request = withDeployedNamespace(asked, deployed)
    const redact = redactor(triggerValues(request.trigger_data?.secrets, request.trigger_data?.envVars))
    const plugins = new Map<string, RunPlugin>()
    let version = source.graph === 'version' ? source.version : deployed ? deployed.version : workflow.current_version
    let objects = await this.render(deployed ?? (source.graph === 'version' ? await this.deps.workflowService.getVersion(ownerId, workflowId, version) : workflow), workflowId, request, plugins, redact)

    const runId = newRunId()
    const dryRun = request.dry_run === true
    if (!dryRun) {
      const locked = await this.deps.workflows.lockForRun(ownerId, workflowId, runId)
      if (!locked) throw new NotFound('workflow')
      if ('locked' in locked) throw new Conflict(locked.locked ? `a run of this workflow is already running (${locked.locked}); wait for it to finish` : 'a run of this workflow is already running; wait for it to finish')
      try {
        if (source.graph === 'current') {
          // A save between the checks and the lock: the version (and so the run) is of the graph the lock saw.
          if (locked.workflow.updated_at !== workflow.updated_at) objects = await this.render(locked.workflow, workflowId, request, plugins, redact)
          version = (await this.deps.workflowService.recordRunVersion(ownerId, workflowId, locked.workflow, runId)).version
        } else if (source.graph === 'deployed') {
          // A run finished between the checks and the lock: sync what it deployed.
          const now = await this.deployedVersion(ownerId, workflowId, cluster)
          if (now.version !== version || now.namespace !== deployed!.namespace) {
            request = withDeployedNamespace(asked, now)
            version = now.version
            objects = await this.render(now, workflowId, request, plugins, redact)
          }
        } else if (source.onLocked) {
          version = await source.onLocked(runId)
        }
        workflow = locked.workflow
      } catch (err) {
        await this.deps.workflows.unlockRun(workflowId, runId)
        throw err
      }
    }
    const startedAt = new Date()
    let run: Run
    try {
      run = await this.deps.runs.create({
        owner_id: ownerId, workflow_id: workflowId, version, cluster: cluster.name, cluster_id: cluster.id,
        namespace: request.namespace ?? null, status: 'running', dry_run: dryRun, started_at: startedAt, finished_at: null,
        duration_ms: null, triggered_by: ownerId, nodes: [], logs: [], error: null, trigger: options.trigger, rollback_of: options.rollbackOf ?? null,
        instance_id: this.instanceId, heartbeat_at: startedAt,
      }, runId)
    } catch (err) {
      if (!dryRun) await this.deps.workflows.unlockRun(workflowId, runId)
      throw err
    }
    this.deps.bus.emit('run.started', { owner_id: ownerId, workflow_id: workflowId, run_id: runId })
    const plan: Plan = { ownerId, workflow, runId, version, cluster, kc, objects, plugins, redact, request, startedAt }
    if (!dryRun) this.deps.live.hold(ownerId, workflowId)
    const done = this.execute(plan).finally(() => { if (!dryRun) this.deps.live.release(ownerId, workflowId) }).catch((err: unknown) => {
      // Recording the outcome failed (the database went away, e.g. at shutdown): the next start recovers it.
      this.deps.log.error({ run_id: runId, err: errorForLog(err, redact) }, 'the run\'s outcome could not be recorded')
      return { ...run, status: 'failed' as const, error: 'the run\'s outcome could not be recorded' }
    })
    this.inFlight.set(runId, { ownerId, workflowId, dryRun, done })
    void done.finally(() => this.inFlight.delete(runId))
    return { run, done }
  }

  /** The finished run if it finishes within `ms`, otherwise null (also as soon as shutdown begins). */
  async waitFor(done: Promise<Run>, ms: number): Promise<Run | null> {
    let timer: NodeJS.Timeout | undefined
    try {
      return await Promise.race([done, this.closingSignal.then(() => null), new Promise<null>((resolve) => { timer = setTimeout(() => resolve(null), ms) })])
    } finally {
      clearTimeout(timer)
    }
  }

  /** Shutdown has begun: no new runs, and nobody waits on one. */
  stopAccepting(): void {
    this.closing = true
    this.announceClosing()
  }

  async get(ownerId: string, workflowId: string, runId: string): Promise<Run> {
    await this.deps.workflowService.get(ownerId, workflowId)
    const run = await this.deps.runs.get(ownerId, workflowId, runId)
    if (!run) throw new NotFound('run')
    return run
  }

  /**
   * The version last deployed to the cluster (drift's baseline), its graph, and the namespace that run used;
   * 409 when no finished non-dry run went there.
   */
  private async deployedVersion(ownerId: string, workflowId: string, cluster: Cluster): Promise<Graph & { version: number; namespace: string | null }> {
    const last = await this.deps.runs.lastDeployedTo(ownerId, workflowId, cluster.id)
    if (!last) throw new Conflict(`nothing deployed on that cluster to sync: run the workflow on "${cluster.name}" first`)
    const v = await this.deps.versions.get(ownerId, workflowId, last.version)
    if (!v) throw new Conflict(`version ${last.version}, last deployed on "${cluster.name}", is no longer recorded: run the workflow instead`)
    return { nodes: v.nodes, edges: v.edges, version: last.version, namespace: last.namespace }
  }

  /** Renders `graph` for the cluster (secrets revealed); any node error refuses the run before anything is recorded. */
  private async render(graph: Graph, workflowId: string, request: RunRequest, plugins: Map<string, RunPlugin>, redact: Redact): Promise<RenderedObject[]> {
    const plugin = oncePerRender(this.deps.plugin)
    const result = await (this.deps.render ?? renderWorkflow)({ nodes: graph.nodes, edges: graph.edges }, {
      workflowId, namespace: request.namespace, plugins: plugin, revealSecrets: true,
      secrets: request.trigger_data?.secrets, envVars: request.trigger_data?.envVars,
    })
    const errors = result.diagnostics.filter((d) => d.severity === 'error')
    if (errors.length) {
      const byNode = new Map<string, string[]>()
      for (const d of errors) byNode.set(d.node_id, [...(byNode.get(d.node_id) ?? []), d.message])
      throw new BadRequest(redact(`the workflow cannot run until these nodes are fixed: ${[...byNode].map(([id, m]) => `node ${id}: ${m.join('; ')}`).join(' | ')}`))
    }
    if (!result.objects.length) throw new BadRequest('the workflow has no nodes to run')
    for (const node of graph.nodes) {
      const ref = node.type === 'plugin' ? (node.data as { pluginId?: unknown } | undefined)?.pluginId : undefined
      if (typeof ref === 'string') { const p = await plugin(ref); if (p) plugins.set(node.id, p) }
    }
    return result.objects
  }

  /** The background part: apply (each object recorded and followed as it lands), wait for workloads, record. A failure of the apply is the run's; only recording can reject. */
  private async execute(plan: Plan): Promise<Run> {
    const { ownerId, workflow, runId, cluster, kc, redact, request } = plan
    const dryRun = request.dry_run === true
    const log = new RunLog(redact)
    const progress = new Map<string, RunNodeResult>()
    const saver = this.progressSaver(runId, () => [...progress.values()], log)
    const tracker = new AppliedTracker(this.deps, plan, log, (err) => this.deps.log.error({ run_id: runId, err: errorForLog(err, redact) }, 'recording tracked resources failed'))
    let result: DeployResult | null = null
    let nodes: RunNodeResult[] = []
    let error: string | null = null
    try {
      log.add(`${dryRun ? 'Dry run' : 'Run'} of "${workflow.name}" version ${plan.version} on cluster ${cluster.name}${request.namespace ? `, namespace ${request.namespace}` : ''}: ${plan.objects.length} objects`)
      const knownNamespaces = dryRun ? [] : await this.knownNamespaces(ownerId, workflow.id, cluster.id)
      result = await this.deps.engine.deploy(kc, plan.objects, {
        workflowId: workflow.id, force: request.force === true, dryRun, prune: request.prune !== false, knownNamespaces,
        adopt: request.adopt === true, mayAdopt: (other) => this.mayAdopt(ownerId, cluster, other),
        schedule: this.limiters.for(cluster.id), redact,
        missingApiMessage: (object, nodeId) => missingApiMessage(object, plan.plugins.get(nodeId)),
        onObject: (applied) => {
          const node = toNodeResult(applied, redact)
          // The engine logs each object itself; this records it for a crash to keep and the bus to carry.
          progress.set(`${applied.node_id}/${applied.kind}/${applied.namespace}/${applied.name}`, node)
          this.deps.bus.emit('run.object', { owner_id: ownerId, workflow_id: workflow.id, run_id: runId, result: withoutLive(applied, redact) })
          saver.touch()
          if (!dryRun) tracker.applied(applied)
        },
        log: (line) => log.add(line),
        ...(!dryRun && { awaitReady: (applied) => this.awaitWave(plan, tracker, applied, log) }),
        ...(this.deps.requestTimeoutMs && { requestTimeoutMs: this.deps.requestTimeoutMs }),
      })
      nodes = result.objects.map((o) => toNodeResult(o, redact))
      if (result.error) error = redact(result.error)
      if (!dryRun) {
        await tracker.flush(result.pruned)
        await this.recordApplied(plan, result)
        if (!result.error) await this.awaitWorkloads(plan, result.objects, nodes, log)
      }
    } catch (err) {
      error = redact(`the run stopped: ${describe(err)}`)
      log.add(error)
      this.deps.log.error({ run_id: runId, err: errorForLog(err, redact) }, 'run failed unexpectedly')
      // What was applied before the failure is in the cluster: its records must say so.
      if (!dryRun) await tracker.flush(result?.pruned ?? [])
    }
    await saver.flush()

    const failedNodes = nodes.filter((n) => n.action === 'failed')
    const failedPrunes = result?.pruned.filter((p) => p.action === 'failed') ?? []
    if (!error && failedNodes.length) error = `${failedNodes.length} of ${nodes.length} objects failed: ${failedNodes.slice(0, 5).map((n) => `${n.kind} ${n.name}`).join(', ')}${failedNodes.length > 5 ? ', …' : ''}`
    if (!error && failedPrunes.length) error = `${failedPrunes.length} objects that left the graph could not be deleted: ${failedPrunes.slice(0, 5).map((p) => `${p.kind} ${p.name}`).join(', ')}`
    const status = error ? 'failed' : 'completed'
    log.add(`${dryRun ? 'Dry run' : 'Run'} ${status}${error ? `: ${error}` : ''}`)
    const applied_count = result?.objects.filter((o) => o.action === 'created' || o.action === 'configured' || o.action === 'unchanged').length ?? 0
    return this.finish(plan, { status, nodes, logs: log.lines(), error, ...(!dryRun && { applied_count }) })
  }

  /** Hands what the run applied to drift detection; a failure there is logged, the run's outcome stands. */
  private async recordApplied(plan: Plan, result: DeployResult): Promise<void> {
    if (!this.deps.applied) return
    const rendered = new Map(plan.objects.map((r) => [`${r.node_id}/${r.object.kind}/${r.object.metadata?.name}`, r.object]))
    const objects: AppliedPair[] = []
    // Failed and skipped objects too: the recorder keeps their earlier baseline (the cluster still has that object as it was).
    for (const applied of result.objects) {
      const object = rendered.get(`${applied.node_id}/${applied.kind}/${applied.name}`)
      if (object) objects.push({ node_id: applied.node_id, rendered: object, applied })
    }
    const run = { owner_id: plan.ownerId, workflow_id: plan.workflow.id, run_id: plan.runId, version: plan.version, cluster_id: plan.cluster.id }
    await this.deps.applied.record(run, objects, result.pruned, plan.redact)
      .catch((err) => this.deps.log.error({ run_id: plan.runId, err: errorForLog(err, plan.redact) }, 'recording what the run applied (drift baseline) failed'))
  }

  /** Waits for the applied workloads, reading the watchers' state; a workload that does not get ready fails its node. */
  private async awaitWorkloads(plan: Plan, objects: AppliedObject[], nodes: RunNodeResult[], log: RunLog): Promise<void> {
    const waiting = objects.map((o, i) => ({ o, i })).filter(({ o }) => WORKLOAD_KINDS.has(o.kind) && o.action !== 'failed' && o.action !== 'skipped')
    if (!waiting.length) return
    log.add(`waiting up to ${Math.round(this.deps.readyTimeoutMs / 100) / 10}s for ${waiting.length} workloads to become ready`)
    await Promise.all(waiting.map(async ({ o, i }) => {
      const outcome = await this.readiness(plan, o)
      const node = nodes[i]
      if (outcome.ready) { log.add(`${o.kind} ${o.name} is ready`); return }
      nodes[i] = { ...node, action: 'failed', message: log.redact(`${node.action}, but ${outcome.message}`) }
      log.add(`${o.kind} ${o.name}: ${nodes[i].message}`)
    }))
  }

  private readiness(plan: Plan, o: AppliedObject) {
    return awaitReady(this.deps.live, plan.ownerId, plan.cluster.id, { kind: o.kind, name: o.name, namespace: o.namespace, resourceVersion: o.resource_version }, this.deps.readyTimeoutMs)
  }

  /**
   * Before dependents are applied: waits (up to the ready timeout) for the workloads they depend on. One that
   * never gets ready does not hold the run; its node fails in the final wait and the dependents are applied.
   */
  private async awaitWave(plan: Plan, tracker: AppliedTracker, applied: AppliedObject[], log: RunLog): Promise<void> {
    const workloads = applied.filter((o) => WORKLOAD_KINDS.has(o.kind))
    if (!workloads.length) return
    await tracker.flush([])
    log.add(`waiting for ${workloads.map((o) => `${o.kind} ${o.name}`).join(', ')} before applying what depends on ${workloads.length === 1 ? 'it' : 'them'}`)
    await Promise.all(workloads.map(async (o) => {
      const outcome = await this.readiness(plan, o)
      log.add(outcome.ready ? `${o.kind} ${o.name} is ready` : `${o.kind} ${o.name} is not ready (${outcome.message}); applying its dependents anyway`)
    }))
  }

  /**
   * Adopting an object: the cluster's owner may take any; another user only objects of their own workflows.
   * An object this service did not make (other === null) has no owner on record, so only the cluster's owner.
   */
  private async mayAdopt(userId: string, cluster: Cluster, other: string | null): Promise<boolean> {
    if (cluster.owner_id === userId) return true
    if (other === null) return false
    return (await this.deps.workflows.get(userId, other)) !== null
  }

  private async knownNamespaces(ownerId: string, workflowId: string, clusterId: string): Promise<string[]> {
    const [tracked, deployments] = await Promise.all([
      this.deps.resources.namespacesFor(ownerId, workflowId, clusterId).catch(() => [] as string[]),
      // Tracked resources cover older history; the latest runs cover what tracking may have missed.
      this.deps.runs.deployments(ownerId, workflowId, { recent: RECENT_RUNS_FOR_NAMESPACES }),
    ])
    const fromRuns = deployments.find((d) => d.cluster_id === clusterId)?.namespaces ?? []
    return [...new Set([...tracked, ...fromRuns])].sort()
  }

  private async finish(plan: Plan, outcome: Pick<RunDoc, 'status' | 'nodes' | 'logs' | 'error' | 'applied_count'>): Promise<Run> {
    const { ownerId, workflow, runId } = plan
    const dryRun = plan.request.dry_run === true
    const finishedAt = new Date()
    const status = outcome.status as 'completed' | 'failed'
    const finished = await this.deps.runs.finish(runId, { ...outcome, finished_at: finishedAt, duration_ms: finishedAt.getTime() - plan.startedAt.getTime() })
    if (!finished) {
      // Marked interrupted meanwhile (a shutdown gave up on it): that record stands.
      return (await this.deps.runs.get(ownerId, workflow.id, runId))!
    }
    if (!dryRun) await this.settle(ownerId, workflow.id, runId, plan.version, status, finishedAt)
    this.deps.bus.emit('run.finished', { owner_id: ownerId, workflow_id: workflow.id, run_id: runId, status })
    return finished
  }

  /** The version's run_status, the workflow's counters, and the lock released. */
  private async settle(ownerId: string, workflowId: string, runId: string, version: number, status: 'completed' | 'failed', at: Date): Promise<void> {
    await Promise.all([
      this.deps.versions.update(ownerId, workflowId, version, { run_status: status }),
      this.deps.workflows.countRun(ownerId, workflowId, status, at),
    ]).catch((err) => this.deps.log.error({ run_id: runId, err: errorForLog(err) }, 'recording the run\'s outcome failed'))
    await this.deps.workflows.unlockRun(workflowId, runId)
  }

  /** Writes a run's progress at most one write at a time, the newest state last. */
  private progressSaver(runId: string, nodes: () => RunNodeResult[], log: RunLog): CoalescingWriter {
    return coalescingWriter(() => this.deps.runs.progress(runId, { nodes: nodes(), logs: log.lines() }))
  }

  // Start-up and shutdown

  /**
   * At start-up: runs left unfinished by a process that no longer says it is alive are failed as interrupted,
   * and run locks whose run is not running are released. Then, every heartbeat period, this process marks its
   * runs alive and fails those another process abandoned (it died after this one started).
   */
  async recover(): Promise<number> {
    const count = await this.sweep()
    await this.releaseOrphanLocks()
    this.heartbeat.start()
    return count
  }

  private sweeps = 0

  /** Fails the runs other processes abandoned; answers how many this process failed (another replica may fail some first). */
  private async sweep(): Promise<number> {
    const abandoned = await this.deps.runs.abandoned(this.instanceId, staleBefore(this.deps.heartbeatMs))
    let failed = 0
    // Conditional on the run being as read: replicas sweeping together never both fail (and notify) one run.
    for (const doc of abandoned) if (await this.interrupt(doc, INTERRUPTED, (outcome) => this.deps.runs.settleAbandoned(doc, outcome))) failed++
    // Replicas live long: a lock a dead one left between locking and recording its run is freed while they run, not at their next start.
    if (this.deps.shared && ++this.sweeps % Math.max(1, Math.round(ORPHAN_LOCK_CHECK_MS / this.deps.heartbeatMs)) === 0) await this.releaseOrphanLocks()
    return failed
  }

  /**
   * Releases run locks whose run is not running. Alone on the database every such lock is a dead process's;
   * in shared mode one may be another replica's run about to be recorded or its delete in progress, so only
   * those older than ORPHAN_LOCK_AGE_MS are released. The release is conditional on the same holder.
   */
  private async releaseOrphanLocks(): Promise<void> {
    const locks = await this.deps.workflows.lockedForRuns()
    if (!locks.length) return
    const unfinished = new Set((await this.deps.runs.unfinished()).map((d) => d._id))
    for (const { id, run_id } of locks) {
      if (this.inFlight.has(run_id) || unfinished.has(run_id)) continue
      if (this.deps.shared && Date.now() - lockTakenAt(run_id) < ORPHAN_LOCK_AGE_MS) continue
      await this.deps.workflows.unlockRun(id, run_id)
      this.deps.log.warn({ workflow_id: id, run_id }, 'released the run lock of a run that is not running')
    }
  }

  /** Records the run as failed with `error` (by `record`: by default, if it is still unfinished); false when another process ended it first. */
  private async interrupt(doc: RunDoc, error: string, record = (outcome: RunOutcome) => this.deps.runs.finish(doc._id, outcome)): Promise<boolean> {
    const at = new Date()
    const logs = [...(doc.logs ?? []), `Run failed: ${error}`]
    const finished = await record({ status: 'failed', nodes: doc.nodes ?? [], logs, error, finished_at: at, duration_ms: at.getTime() - doc.started_at.getTime() })
    if (!finished) return false
    if (!doc.dry_run) await this.settle(doc.owner_id, doc.workflow_id, doc._id, doc.version, 'failed', at)
    this.deps.bus.emit('run.finished', { owner_id: doc.owner_id, workflow_id: doc.workflow_id, run_id: doc._id, status: 'failed' })
    this.deps.log.warn({ run_id: doc._id, workflow_id: doc.workflow_id }, `run ${doc._id} was ${doc.status} when the service stopped: marked failed (interrupted)`)
    return true
  }

  /** Refuses new runs, gives those in flight `graceMs` to finish, then records the rest as interrupted. */
  async close(graceMs: number): Promise<void> {
    this.stopAccepting()
    this.heartbeat.stop()
    if (!this.inFlight.size) return
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      Promise.allSettled([...this.inFlight.values()].map((r) => r.done)),
      new Promise((resolve) => { timer = setTimeout(resolve, graceMs) }),
    ])
    clearTimeout(timer)
    const left = await this.deps.runs.unfinished()
    for (const doc of left) if (this.inFlight.has(doc._id)) await this.interrupt(doc, 'interrupted: the service shut down before this run finished; check the cluster and run again')
  }

  // Deleting a workflow with its objects

  /** Removes the workflow's objects from every cluster it was deployed to, then deletes it; any failure keeps it. */
  async deleteWithResources(ownerId: string, workflowId: string): Promise<void> {
    await this.deps.workflowService.get(ownerId, workflowId)
    const holder = `delete-${newRunId()}`
    const locked = await this.deps.workflows.lockForRun(ownerId, workflowId, holder)
    if (!locked) throw new NotFound('workflow')
    if ('locked' in locked) throw new Conflict('a run of this workflow is running; delete it when the run has finished')
    try {
      for (const d of await this.deps.runs.deployments(ownerId, workflowId)) {
        let connection: { kc: KubeConfig; cluster: Cluster }
        try {
          connection = await this.deps.clusters.kubeConfigFor(ownerId, d.cluster_id, 'deployer')
        } catch (err) {
          if (err instanceof NotFound) throw new Conflict(`the workflow was deployed to cluster "${d.cluster}", which you can no longer reach; delete without delete_resources to keep its objects`)
          throw err
        }
        const tracked = await this.deps.resources.namespacesFor(ownerId, workflowId, d.cluster_id).catch(() => [] as string[])
        const namespaces = [...new Set([...d.namespaces, ...tracked])].sort()
        let removed: PrunedObject[]
        try {
          removed = await this.deps.engine.removeWorkflowObjects(connection.kc, { workflowId, namespaces, schedule: this.limiters.for(d.cluster_id) })
        } catch (err) {
          throw new UpstreamError(`cluster "${d.cluster}": ${describe(err)}; the workflow is kept`)
        }
        const deleted = removed.filter((p) => p.action === 'deleted').map(({ kind, name, namespace }) => ({ kind, name, namespace }))
        if (deleted.length) {
          await this.deps.resources.markDeleted(ownerId, d.cluster_id, deleted)
          this.deps.bus.emit('resources.changed', { owner_id: ownerId })
        }
        const failed = removed.filter((p) => p.action === 'failed')
        if (failed.length) throw new UpstreamError(`cluster "${d.cluster}": ${failed.length} objects could not be deleted (${failed.slice(0, 3).map((p) => `${p.kind} ${p.name}: ${p.message}`).join('; ')}); the workflow is kept`)
      }
    } catch (err) {
      await this.deps.workflows.unlockRun(workflowId, holder)
      throw err
    }
    await this.deps.workflowService.delete(ownerId, workflowId)
  }
}

/** A sync's request: in the namespace the deployment used, unless it names one. */
function withDeployedNamespace(request: RunRequest, deployed: { namespace: string | null }): RunRequest {
  return request.namespace === undefined && deployed.namespace ? { ...request, namespace: deployed.namespace } : request
}

/** When a run lock was taken, from its holder (a run id, or `delete-<id>`): ObjectIds carry their creation second. 0 when unreadable. */
function lockTakenAt(holder: string): number {
  const hex = /([0-9a-f]{24})$/.exec(holder)?.[1]
  return hex ? ObjectId.createFromHexString(hex).getTimestamp().getTime() : 0
}

function describe(err: unknown): string {
  if (err instanceof AppError) return err.message
  return describeClusterError(err)
}

function toNodeResult(o: AppliedObject, redact: Redact): RunNodeResult {
  return {
    node_id: o.node_id, kind: o.kind, name: o.name, namespace: o.namespace, action: o.action, message: redact(o.message ?? ''),
    ...(o.diff && { diff: redactDeep(o.diff, redact) }),
  }
}

function withoutLive({ live: _live, ...rest }: AppliedObject, redact: Redact) {
  return { ...rest, message: redact(rest.message ?? ''), ...(rest.diff && { diff: redactDeep(rest.diff, redact) }) }
}

/** Names what to install, from the plugin's own words ("Requires X ...") when it has them. */
export function missingApiMessage(object: KubeObject, plugin: RunPlugin | undefined): string {
  const api = `${object.kind} (${object.apiVersion})`
  if (!plugin) return `${api} is not served by this cluster: install the operator or CRD that provides it, then run again`
  const requires = /\bRequires ([^;]+?)(?:;|\.\s|\.$|$)/.exec(plugin.description)?.[1]
  const what = requires ?? `the operator behind the "${plugin.display_name}" plugin`
  return `${api} is not served by this cluster: install ${what} (plugin "${plugin.display_name}"), then run again`
}

/**
 * Tracked resources follow what the run applies, as it applies it: each flush records the objects applied
 * since the last one (and what was pruned), then has the watchers follow them, so their statuses are
 * published while the run waits. A failure here is logged; the run's outcome stands.
 */
class AppliedTracker {
  private pending: AppliedObject[] = []
  private warned = false

  constructor(
    private readonly deps: Pick<RunServiceDeps, 'resources' | 'live' | 'bus'>,
    private readonly plan: Plan,
    private readonly log: RunLog,
    private readonly onError: (err: unknown) => void,
  ) {}

  applied(o: AppliedObject): void {
    if (o.action !== 'failed' && o.action !== 'skipped') this.pending.push(o)
  }

  async flush(pruned: PrunedObject[]): Promise<void> {
    const { ownerId, workflow, cluster } = this.plan
    const objects = this.pending
    this.pending = []
    const deleted = pruned.filter((p) => p.action === 'deleted').map(({ kind, name, namespace }) => ({ kind, name, namespace }))
    if (!objects.length && !deleted.length) return
    try {
      if (objects.length) await this.deps.resources.recordApplied(ownerId, { workflow_id: workflow.id, cluster_id: cluster.id, cluster: cluster.name }, objects)
      if (deleted.length) await this.deps.resources.markDeleted(ownerId, cluster.id, deleted)
      await this.deps.live.follow(ownerId, workflow.id)
    } catch (err) {
      if (!this.warned) this.log.add('the tracked resources could not be updated; POST /v1/api/resources/sync repairs them')
      this.warned = true
      this.onError(err)
    }
  }
}
