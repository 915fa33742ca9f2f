// Drift detection (API.md §12): what runs applied (the baseline, recorded here as the run service's
// AppliedRecorder) compared with what is live, by the replica that watches the cluster.
//
// When: on every watch event of a followed object (the resource watcher hands the object over: no extra
// request, except for a Secret, whose data the watchers never keep: it is read once per change), after each run of the workflow (run.finished: one GET per object, since the run's own events were
// skipped), and every DRIFT_CHECK_INTERVAL_S on the clusters this replica owns. A workflow whose run holds
// the run lock is not judged: its objects are changing on purpose.
//
// Result: per (workflow, cluster, node) a `drift_states` document while drifted; the node's live status
// (`data._status`) shows `state: "drifted"`, `live_state` (what the watcher derives) and `drift:
// {detected_at, fields}`; `drift.detected` goes on the bus when a node's drifted fields change and
// `drift.resolved` when none is left, never on every event. A workflow with `auto_sync` is synced on
// detection, at most once per interval per cluster.
//
// Checks of one workflow on one cluster run one at a time (a chain per target); watch events arriving while
// one runs are coalesced per object (the latest object wins).
import type { EventBus } from '../../../events/bus.ts'
import { limiter } from '../../../kube/deploy-types.ts'
import type { AppliedRecorder, AppliedPair } from '../../run-service.ts'
import type { PrunedObject } from '../../../kube/deploy-types.ts'
import type { KubeObject } from '../../../manifests/types.ts'
import type { Redact } from '../../run-redaction.ts'
import { NotFound } from '../../../errors.ts'
import { baselineId, type BaselineDoc, type DriftBaselineRepository } from '../../../repositories/drift-baselines.ts'
import { driftStateId, type DriftedObject, type DriftStateDoc, type DriftStateRepository } from '../../../repositories/drift-states.ts'
import { baselineOf, compareObject, extraLabels, nodeFields, type DriftField, type Hasher, type ObjectDrift } from './compare.ts'
import { withDrift, type NodeDrift } from './node-status.ts'

export interface WatchedRef {
  owner_id: string; workflow_id: string; cluster_id: string; node_id: string
  api_version: string; kind: string; name: string; namespace: string | null
}

export interface ObjectReader { get(apiVersion: string, kind: string, namespace: string | null, name: string): Promise<KubeObject | null> }

interface Logger { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void }

export interface DriftServiceDeps {
  baselines: Pick<DriftBaselineRepository, 'replace' | 'forWorkflow' | 'targets' | 'deleteForWorkflow'>
  states: Pick<DriftStateRepository, 'all' | 'forWorkflow' | 'put' | 'remove' | 'deleteForWorkflow'>
  workflows: {
    get(ownerId: string, id: string): Promise<{ auto_sync?: boolean; nodes: Array<{ id: string; data?: unknown }> } | null>
    setNodeStatus(ownerId: string, id: string, nodeId: string, status: Record<string, unknown>): Promise<boolean>
    lockedForRuns(): Promise<Array<{ id: string }>>
    deployedIds(ownerId?: string): Promise<Set<string>>
  }
  bus: EventBus
  /** What other replicas announce (their runs); absent: one replica. */
  remoteBus?: EventBus
  ownership: { owns(clusterId: string): boolean; ownedClusters(): string[] | null }
  hasher: Hasher
  /** Reads the cluster as the workflow's owner (viewer access), each request bounded by CLUSTER_TIMEOUT_MS. */
  reader(ownerId: string, clusterId: string): Promise<ObjectReader>
  /** The node's status as the watchers derive it now; null when none of its objects is followed here. */
  derivedStatus(ownerId: string, workflowId: string, nodeId: string): Record<string, unknown> | null
  /** Re-applies what was deployed to the cluster (RunService.sync with trigger auto_sync). */
  sync?(ownerId: string, workflowId: string, clusterId: string): Promise<unknown>
  /** The finished run's trigger (manual, sync, auto_sync, rollback); null when it is gone. */
  runTrigger?(ownerId: string, workflowId: string, runId: string): Promise<string | null>
  /** Removes labels from a live object as the workflow's owner (deployer access): after a sync, those it did not set. */
  removeLabels?(ownerId: string, clusterId: string, ref: { apiVersion: string; kind: string; namespace: string | null; name: string }, keys: string[]): Promise<void>
  intervalMs: number
  /** Objects read at once per check. */
  concurrency: number
  log: Logger
}

export interface DriftReport {
  nodes: Array<{ node_id: string; objects: Array<{ cluster_id: string; kind: string; name: string; namespace: string | null; missing: boolean; fields: DriftField[] }> }>
  checked_at: string
}

const wfKey = (owner: string, workflow: string) => `${owner}\n${workflow}`
const targetKey = (owner: string, workflow: string, cluster: string) => `${owner}\n${workflow}\n${cluster}`
const nodeKey = (owner: string, workflow: string, node: string) => `${owner}\n${workflow}\n${node}`
const sameObject = (a: { kind: string; name: string; namespace: string | null }, b: { kind: string; name: string; namespace: string | null }) =>
  a.kind === b.kind && a.name === b.name && (a.namespace ?? null) === (b.namespace ?? null)
const errorCode = (err: unknown) => (err as { statusCode?: unknown })?.statusCode

export class DriftService implements AppliedRecorder {
  /** Per node, per cluster: its current drift (what the status overlay shows). */
  private readonly drifted = new Map<string, Map<string, { detected_at: Date; fields: string[] }>>()
  /** Runs in flight per workflow (here and, shared, elsewhere): their objects are not judged meanwhile. */
  private readonly running = new Map<string, Set<string>>()
  private readonly chains = new Map<string, Promise<void>>()
  /** Watch events waiting for their target's check: object key → the latest object (null: gone). */
  private readonly pending = new Map<string, Map<string, { ref: WatchedRef; object: KubeObject | null }>>()
  private readonly lastSync = new Map<string, number>()
  /** Work started by events and not on a chain yet (a run's end looking up its targets, auto_sync starting a run). */
  private readonly background = new Set<Promise<void>>()
  private offs: Array<() => void> = []
  private timer: NodeJS.Timeout | null = null
  private sweeping: Promise<void> | null = null
  private closed = false

  constructor(private readonly deps: DriftServiceDeps) {}

  async start(): Promise<void> {
    for (const s of await this.deps.states.all()) this.remember(s.owner_id, s.workflow_id, s.node_id, s.cluster_id, { detected_at: s.detected_at, fields: s.fields })
    const listen = (bus: EventBus) => [
      bus.on('run.started', (e) => this.runStarted(e.owner_id, e.workflow_id, e.run_id)),
      bus.on('run.finished', (e) => this.runFinished(e.owner_id, e.workflow_id, e.run_id)),
    ]
    this.offs = [
      ...listen(this.deps.bus),
      ...(this.deps.remoteBus ? listen(this.deps.remoteBus) : []),
      this.deps.bus.on('workflow.deleted', (e) => { void this.forget(e.owner_id, e.workflow_id) }),
    ]
    this.timer = setInterval(() => { void this.sweep() }, this.deps.intervalMs)
    this.timer.unref?.()
  }

  async close(): Promise<void> {
    this.closed = true
    for (const off of this.offs) off()
    this.offs = []
    if (this.timer) clearInterval(this.timer)
    this.timer = null
    await this.idle()
  }

  /** Resolves once every check queued so far has finished (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.chains.size || this.sweeping || this.background.size) await Promise.allSettled([...this.chains.values(), this.sweeping, ...this.background])
  }

  private track(work: Promise<void>): void {
    this.background.add(work)
    void work.finally(() => this.background.delete(work))
  }

  // The baseline

  /** AppliedRecorder: what a run applied becomes the workflow's baseline on that cluster. */
  async record(run: { owner_id: string; workflow_id: string; run_id: string; version: number; cluster_id: string }, objects: AppliedPair[], pruned: PrunedObject[], redact: Redact): Promise<void> {
    const at = new Date()
    const docs: BaselineDoc[] = []
    const kept: string[] = []
    for (const { node_id, rendered, applied } of objects) {
      const ref = { api_version: applied.api_version, kind: applied.kind, namespace: applied.namespace, name: applied.name }
      // Not applied this time: what the cluster holds is still what the earlier run left, and is judged so.
      if (applied.action === 'failed' || applied.action === 'skipped' || !applied.live) { kept.push(baselineId(run.owner_id, run.workflow_id, run.cluster_id, ref)); continue }
      docs.push({
        _id: baselineId(run.owner_id, run.workflow_id, run.cluster_id, ref), owner_id: run.owner_id, workflow_id: run.workflow_id, cluster_id: run.cluster_id,
        node_id, ...ref, run_id: run.run_id, version: run.version, recorded_at: at,
        ...baselineOf(rendered, applied.live, { redact, hasher: this.deps.hasher }),
      })
    }
    await this.deps.baselines.replace(run.owner_id, run.workflow_id, run.cluster_id, docs, kept, pruned.filter((p) => p.action === 'deleted'))
  }

  // The node status overlay (the watchers apply it to every status they store)

  /** The node's status with its current drift (or without any, once resolved). */
  overlay(ownerId: string, workflowId: string, nodeId: string, status: Record<string, unknown>): Record<string, unknown> {
    return withDrift(status, this.nodeDrift(ownerId, workflowId, nodeId))
  }

  private nodeDrift(ownerId: string, workflowId: string, nodeId: string): NodeDrift | null {
    const per = this.drifted.get(nodeKey(ownerId, workflowId, nodeId))
    if (!per?.size) return null
    const all = [...per.values()]
    const detected = Math.min(...all.map((d) => d.detected_at.getTime()))
    return { detected_at: new Date(detected).toISOString(), fields: [...new Set(all.flatMap((d) => d.fields))].sort() }
  }

  private remember(owner: string, workflow: string, node: string, cluster: string, drift: { detected_at: Date; fields: string[] } | null): void {
    const k = nodeKey(owner, workflow, node)
    let per = this.drifted.get(k)
    if (drift) {
      if (!per) { per = new Map(); this.drifted.set(k, per) }
      per.set(cluster, drift)
    } else if (per) {
      per.delete(cluster)
      if (!per.size) this.drifted.delete(k)
    }
  }

  // When checks run

  /** A watch event of a followed object (null: it left the cluster). */
  observed(ref: WatchedRef, object: KubeObject | null): void {
    if (this.closed || !this.deps.ownership.owns(ref.cluster_id) || this.isRunning(ref.owner_id, ref.workflow_id)) return
    const target = targetKey(ref.owner_id, ref.workflow_id, ref.cluster_id)
    let waiting = this.pending.get(target)
    if (!waiting) {
      const batch = new Map<string, { ref: WatchedRef; object: KubeObject | null }>()
      waiting = batch
      this.pending.set(target, batch)
      this.enqueue(target, async () => {
        this.pending.delete(target)
        if (this.isRunning(ref.owner_id, ref.workflow_id)) return
        await this.checkObserved(ref.owner_id, ref.workflow_id, ref.cluster_id, [...batch.values()])
      })
    }
    waiting.set(`${ref.kind}\n${ref.namespace ?? ''}\n${ref.name}`, { ref, object })
  }

  private runStarted(owner: string, workflow: string, runId: string): void {
    const k = wfKey(owner, workflow)
    let set = this.running.get(k)
    if (!set) { set = new Set(); this.running.set(k, set) }
    set.add(runId)
  }

  private runFinished(owner: string, workflow: string, runId: string): void {
    const k = wfKey(owner, workflow)
    const set = this.running.get(k)
    set?.delete(runId)
    if (set && !set.size) this.running.delete(k)
    if (this.closed || this.running.has(k)) return
    // The run's own watch events were skipped: judge what it left, on the clusters checked here.
    this.track(Promise.all([this.deps.baselines.forWorkflow(owner, workflow), this.isSync(owner, workflow, runId)]).then(([docs, sync]) => {
      for (const cluster of new Set(docs.map((d) => d.cluster_id))) {
        if (!this.deps.ownership.owns(cluster)) continue
        this.enqueue(targetKey(owner, workflow, cluster), async () => {
          if (sync) await this.removeForeignLabels(owner, cluster, docs.filter((d) => d.cluster_id === cluster))
          await this.checkTarget(owner, workflow, cluster)
        })
      }
      // Nodes drifted on a cluster whose baselines the run removed entirely.
      return this.deps.states.forWorkflow(owner, workflow).then((states) => {
        for (const cluster of new Set(states.map((s) => s.cluster_id))) {
          if (!docs.some((d) => d.cluster_id === cluster) && this.deps.ownership.owns(cluster)) this.enqueue(targetKey(owner, workflow, cluster), () => this.checkTarget(owner, workflow, cluster))
        }
      })
    }).catch((err: unknown) => this.logFailure({ workflow_id: workflow }, err, 'drift: the check after a run failed')))
  }

  private async isSync(owner: string, workflow: string, runId: string): Promise<boolean> {
    if (!this.deps.runTrigger || !this.deps.removeLabels) return false
    const trigger = await this.deps.runTrigger(owner, workflow, runId)
    return trigger === 'sync' || trigger === 'auto_sync'
  }

  /**
   * After a sync: the labels nobody in the graph set are taken off again (server-side apply left them, as it
   * leaves every field another manager owns). A failure is logged; the check that follows still reports them.
   */
  private async removeForeignLabels(owner: string, cluster: string, docs: BaselineDoc[]): Promise<void> {
    if (!docs.length) return
    const reader = await this.deps.reader(owner, cluster)
    const schedule = limiter(this.deps.concurrency)
    await Promise.all(docs.map((doc) => schedule(async () => {
      const keys = extraLabels(doc, await reader.get(doc.api_version, doc.kind, doc.namespace, doc.name))
      if (!keys.length) return
      await this.deps.removeLabels!(owner, cluster, { apiVersion: doc.api_version, kind: doc.kind, namespace: doc.namespace, name: doc.name }, keys)
        .catch((err: unknown) => this.logFailure({ workflow_id: doc.workflow_id, cluster_id: cluster }, err, 'drift: removing labels a sync does not set failed'))
    })))
  }

  private isRunning(owner: string, workflow: string): boolean {
    return this.running.has(wfKey(owner, workflow))
  }

  /** The periodic check: every deployed workflow with baselines on the clusters this replica owns. */
  sweep(): Promise<void> {
    if (this.sweeping || this.closed) return this.sweeping ?? Promise.resolve()
    this.sweeping = (async () => {
      try {
        const owned = this.deps.ownership.ownedClusters()
        const [targets, locked, deployed] = await Promise.all([this.deps.baselines.targets(owned), this.deps.workflows.lockedForRuns(), this.deps.workflows.deployedIds()])
        const busy = new Set(locked.map((l) => l.id))
        for (const t of targets) {
          if (this.closed) break
          // A run this replica heard start but never heard end (its replica died): the lock says it is over.
          if (!busy.has(t.workflow_id)) this.running.delete(wfKey(t.owner_id, t.workflow_id))
          if (!this.deps.ownership.owns(t.cluster_id) || busy.has(t.workflow_id) || !deployed.has(t.workflow_id) || this.isRunning(t.owner_id, t.workflow_id)) continue
          const k = targetKey(t.owner_id, t.workflow_id, t.cluster_id)
          this.enqueue(k, () => this.checkTarget(t.owner_id, t.workflow_id, t.cluster_id))
          // One target at a time: a sweep is background work, the clusters' answers are not hurried.
          await this.chains.get(k)
        }
      } catch (err) {
        this.logFailure({}, err, 'drift: the periodic check failed')
      } finally {
        this.sweeping = null
      }
    })()
    return this.sweeping
  }

  private enqueue(target: string, task: () => Promise<unknown>): void {
    const next = (this.chains.get(target) ?? Promise.resolve()).then(async () => { await task() }).catch((err: unknown) => {
      const [, workflow, cluster] = target.split('\n')
      this.logFailure({ workflow_id: workflow, cluster_id: cluster }, err, 'drift: a check failed')
    })
    this.chains.set(target, next)
    void next.finally(() => { if (this.chains.get(target) === next) this.chains.delete(target) })
  }

  private logFailure(where: object, err: unknown, msg: string): void {
    // The cluster's or the database's message says what failed; never a value compared.
    const e = err as { name?: unknown; statusCode?: unknown; message?: unknown }
    this.deps.log.warn({ ...where, err: { name: String(e?.name ?? 'Error'), statusCode: e?.statusCode, message: String(e?.message ?? err) } }, msg)
  }

  // Checks

  private async checkObserved(owner: string, workflow: string, cluster: string, seen: Array<{ ref: WatchedRef; object: KubeObject | null }>): Promise<void> {
    const docs = await this.deps.baselines.forWorkflow(owner, workflow, cluster)
    const results = new Map<string, ObjectDrift>()
    const secrets: BaselineDoc[] = []
    for (const { ref, object } of seen) {
      const doc = docs.find((d) => sameObject(d, ref))
      if (!doc) continue
      // The watchers never keep a Secret's data (watch-hub.ts scrubs it): a Secret that changed is read once.
      if (doc.kind === 'Secret' && object) secrets.push(doc)
      else results.set(doc._id, this.compare(doc, docs, object))
    }
    if (secrets.length) for (const [id, r] of await this.fresh(owner, cluster, secrets, docs)) results.set(id, r)
    if (results.size) await this.settle(owner, workflow, cluster, docs, results, false)
  }

  /** One GET per baseline object of the workflow on the cluster, compared; the stored state updated. */
  private async checkTarget(owner: string, workflow: string, cluster: string): Promise<Map<string, ObjectDrift>> {
    const docs = await this.deps.baselines.forWorkflow(owner, workflow, cluster)
    const results = await this.fresh(owner, cluster, docs)
    if (!this.isRunning(owner, workflow)) await this.settle(owner, workflow, cluster, docs, results, true)
    return results
  }

  /** Reads `docs` from the cluster and compares them (`all`: the target's baselines, for its autoscalers). */
  private async fresh(owner: string, cluster: string, docs: BaselineDoc[], all: BaselineDoc[] = docs): Promise<Map<string, ObjectDrift>> {
    const results = new Map<string, ObjectDrift>()
    if (!docs.length) return results
    const reader = await this.deps.reader(owner, cluster)
    const schedule = limiter(this.deps.concurrency)
    await Promise.all(docs.map((doc) => schedule(async () => {
      const live = await reader.get(doc.api_version, doc.kind, doc.namespace, doc.name)
      results.set(doc._id, this.compare(doc, all, live))
    })))
    return results
  }

  private compare(doc: BaselineDoc, all: BaselineDoc[], live: KubeObject | null): ObjectDrift {
    // An autoscaler of the workflow scales this workload: its replica count is the autoscaler's to set.
    const scaled = all.some((d) => d.scale_target && d.scale_target.kind === doc.kind && d.scale_target.name === doc.name && d.namespace === doc.namespace)
    return compareObject(doc, live, { hasher: this.deps.hasher, ...(scaled && { ignore: new Set(['spec.replicas']) }) })
  }

  /**
   * Stores what the checks found, node by node, and announces changes. `complete`: every baseline of the
   * target was checked, so a node not found drifted (or with no baseline left) is in sync.
   */
  private async settle(owner: string, workflow: string, cluster: string, docs: BaselineDoc[], results: Map<string, ObjectDrift>, complete: boolean): Promise<void> {
    const states = new Map((await this.deps.states.forWorkflow(owner, workflow, cluster)).map((s) => [s.node_id, s]))
    const nodes = new Set(docs.filter((d) => results.has(d._id)).map((d) => d.node_id))
    if (complete) for (const n of states.keys()) nodes.add(n)
    const changes: Array<{ node: string; prev: DriftStateDoc | null; objects: DriftedObject[] }> = []
    for (const node of nodes) {
      const prev = states.get(node) ?? null
      const objects: DriftedObject[] = []
      for (const d of docs) {
        if (d.node_id !== node) continue
        const r = results.get(d._id)
        if (r) {
          if (r.missing || r.fields.length) objects.push({ kind: d.kind, name: d.name, namespace: d.namespace, missing: r.missing, paths: r.fields.map((f) => f.path) })
        } else if (!complete) {
          const before = prev?.objects.find((o) => sameObject(o, d))
          if (before) objects.push(before)
        }
      }
      // Unchanged (in sync as before, or drifted just as before): nothing to store or announce.
      if (objects.length ? JSON.stringify(objects) !== JSON.stringify(prev?.objects) : prev) changes.push({ node, prev, objects })
      else await this.adopt(owner, workflow, cluster, node, prev)
    }
    if (!changes.length) return
    // The run lock is held (a run, or a delete removing the objects, here or on another replica): what it
    // changes is on purpose; its end (run.finished) brings a check. A workflow gone meanwhile has no drift.
    const [locks, exists] = await Promise.all([this.deps.workflows.lockedForRuns(), this.deps.workflows.get(owner, workflow)])
    if (!exists || locks.some((l) => l.id === workflow)) return
    for (const c of changes) await this.transition(owner, workflow, cluster, c.node, c.prev, c.objects)
  }

  /**
   * The stored drift is still right, but this replica may not know it: the cluster's lease came here from
   * another replica (or its drift was resolved there). The overlay learns it and the node shows it.
   */
  private async adopt(owner: string, workflow: string, cluster: string, node: string, prev: DriftStateDoc | null): Promise<void> {
    const known = this.drifted.get(nodeKey(owner, workflow, node))?.get(cluster)
    if (prev ? known && JSON.stringify(known.fields) === JSON.stringify(prev.fields) : !known) return
    this.remember(owner, workflow, node, cluster, prev && { detected_at: prev.detected_at, fields: prev.fields })
    await this.writeNodeStatus(owner, workflow, node)
  }

  private async transition(owner: string, workflow: string, cluster: string, node: string, prev: DriftStateDoc | null, objects: DriftedObject[]): Promise<void> {
    const fields = nodeFields(objects)
    const before = this.nodeDrift(owner, workflow, node)
    if (!fields.length) {
      if (!prev) return
      await this.deps.states.remove(owner, prev._id)
      this.remember(owner, workflow, node, cluster, null)
    } else {
      const now = new Date()
      const doc: DriftStateDoc = {
        _id: driftStateId(owner, workflow, cluster, node), owner_id: owner, workflow_id: workflow, cluster_id: cluster, node_id: node,
        detected_at: prev?.detected_at ?? now, fields, objects, updated_at: now,
      }
      await this.deps.states.put(doc)
      this.remember(owner, workflow, node, cluster, { detected_at: doc.detected_at, fields })
    }
    const after = this.nodeDrift(owner, workflow, node)
    if (JSON.stringify(before?.fields ?? null) === JSON.stringify(after?.fields ?? null)) return
    await this.writeNodeStatus(owner, workflow, node)
    if (after) {
      this.deps.bus.emit('drift.detected', { owner_id: owner, workflow_id: workflow, node_id: node, fields: after.fields })
      this.log('drift detected', { workflow_id: workflow, node_id: node, cluster_id: cluster, fields: after.fields.length })
      this.track(this.autoSync(owner, workflow, cluster))
    } else {
      this.deps.bus.emit('drift.resolved', { owner_id: owner, workflow_id: workflow, node_id: node })
      this.log('drift resolved', { workflow_id: workflow, node_id: node, cluster_id: cluster })
    }
  }

  private log(msg: string, obj: object): void { this.deps.log.info(obj, msg) }

  private async writeNodeStatus(owner: string, workflow: string, node: string): Promise<void> {
    let base = this.deps.derivedStatus(owner, workflow, node)
    if (!base) {
      const wf = await this.deps.workflows.get(owner, workflow)
      const data = wf?.nodes.find((n) => n.id === node)?.data as { _status?: unknown } | undefined
      base = data?._status && typeof data._status === 'object' ? data._status as Record<string, unknown> : { state: 'unknown', message: '' }
    }
    await this.deps.workflows.setNodeStatus(owner, workflow, node, this.overlay(owner, workflow, node, base))
  }

  private async autoSync(owner: string, workflow: string, cluster: string): Promise<void> {
    if (!this.deps.sync || this.closed) return
    const k = targetKey(owner, workflow, cluster)
    const last = this.lastSync.get(k)
    if (last !== undefined && Date.now() - last < this.deps.intervalMs) return
    try {
      const wf = await this.deps.workflows.get(owner, workflow)
      if (!wf?.auto_sync) return
      this.lastSync.set(k, Date.now())
      await this.deps.sync(owner, workflow, cluster)
      this.log('drift: auto_sync started a sync run', { workflow_id: workflow, cluster_id: cluster })
    } catch (err) {
      // A run already in progress will leave its own baseline; that is as good as a sync.
      if (errorCode(err) === 409) this.log('drift: auto_sync skipped, a run of the workflow is in progress', { workflow_id: workflow, cluster_id: cluster })
      else this.logFailure({ workflow_id: workflow, cluster_id: cluster }, err, 'drift: auto_sync failed')
    }
  }

  private async forget(owner: string, workflow: string): Promise<void> {
    for (const k of [...this.drifted.keys()]) if (k.startsWith(`${wfKey(owner, workflow)}\n`)) this.drifted.delete(k)
    try {
      await Promise.all([this.deps.baselines.deleteForWorkflow(owner, workflow), this.deps.states.deleteForWorkflow(owner, workflow)])
    } catch (err) {
      this.logFailure({ workflow_id: workflow }, err, 'drift: removing a deleted workflow\'s baselines failed')
    }
  }

  // The report

  /** GET /workflows/:id/drift: a fresh check of every object the workflow's runs applied; only drifted nodes. */
  async report(ownerId: string, workflowId: string): Promise<DriftReport> {
    const wf = await this.deps.workflows.get(ownerId, workflowId)
    if (!wf) throw new NotFound('workflow')
    const docs = await this.deps.baselines.forWorkflow(ownerId, workflowId)
    const clusters = [...new Set(docs.map((d) => d.cluster_id))]
    const found = new Map<string, ObjectDrift>()
    for (const cluster of clusters) {
      const mine = docs.filter((d) => d.cluster_id === cluster)
      const results = await this.fresh(ownerId, cluster, mine)
      for (const [id, r] of results) found.set(id, r)
      // Stored and announced by the replica that checks this cluster, in turn with its other checks.
      if (this.deps.ownership.owns(cluster) && !this.isRunning(ownerId, workflowId)) {
        const k = targetKey(ownerId, workflowId, cluster)
        this.enqueue(k, () => this.settle(ownerId, workflowId, cluster, mine, results, true))
        await this.chains.get(k)
      }
    }
    const nodes = new Map<string, DriftReport['nodes'][number]>()
    for (const d of docs) {
      const r = found.get(d._id)
      if (!r || (!r.missing && !r.fields.length)) continue
      let n = nodes.get(d.node_id)
      if (!n) { n = { node_id: d.node_id, objects: [] }; nodes.set(d.node_id, n) }
      n.objects.push({ cluster_id: d.cluster_id, kind: d.kind, name: d.name, namespace: d.namespace, missing: r.missing, fields: r.fields })
    }
    return { nodes: [...nodes.values()], checked_at: new Date().toISOString() }
  }
}
