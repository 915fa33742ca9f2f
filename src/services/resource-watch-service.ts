// Live status of tracked resources (spec "Events", delivery rules 4–6). Every tracked resource of a deployed,
// non-archived workflow is followed through the watch hub (one watch per cluster, kind and namespace);
// workloads also follow their namespace's pods, so a crash-looping pod turns its Deployment `failed` with the
// pod's reason. On each event the status is derived again; only when it changed is it stored (the tracked
// resource, and the node's `data._status` in the workflow by a targeted update) and published once as
// `resource.status`. The first status derived for a node's objects is stored on the node even when it matches
// the record (a ConfigMap is `running` from the start and never changes): once per node, see storeFirst.
//
// What counts as a change: the status, the ready count ("1/3" → "2/3": the canvas shows it, and a scale to
// zero is a running → running move otherwise invisible), or the condition the message describes (a stale
// "waiting for the controller" must not outlive the rollout it described). Numbers that merely tick in a
// message (a crash back-off's seconds, a growing restart count) are not a new condition (messageKey): they
// would turn one crash loop into an event every few seconds.
//
// Which set is followed is reconciled from the database: at start, after every run (`run.finished`) and
// whenever tracked resources change (`resources.changed`); archive and delete stop a workflow's watchers at
// once; `close()` stops them all. Watches use the resource owner's access to the cluster (viewer suffices).
//
// A run's objects are followed from the moment they are applied (`follow`), not from the end of the run: the
// run's readiness wait (`awaitStatus`) reads the same derived state the streams publish, so a crash-looping
// workload fails the run as soon as its pod says so, and subscribers see every transition while it runs.
//
// Among replicas (API.md §11) a cluster is watched by the holder of its lease (ClusterOwnership): only its
// resources are followed, and their writes carry the lease's epoch, refused by records a newer holder wrote.
// Losing a cluster stops its watches, except the objects of runs in flight here, which a run's readiness wait
// still needs: those feed the waits only (no status write, no event, no pod record). Gaining one lists it
// again. The holder learns of runs, archives and cluster changes on other replicas from `remoteBus`.
//
// The same pod streams make the workloads' pods tracked resources of their own (pod-records.ts). Those are
// not announced as `resource.status`: the workload's status already carries what its pods mean for the
// node, its stream and its notifications, and a crash-looping pod must not add to them. They are announced
// as `pod.status`, which only the pod record's own resource stream carries.
import type { KubeConfig } from '@kubernetes/client-node'
import type { EventBus } from '../events/bus.ts'
import { WatchHub, type StreamKey, type WatchEventType, type ReconnectInfo } from '../kube/watch-hub.ts'
import type { BackoffOptions } from '../kube/watch-backoff.ts'
import { deriveStatus, messageKey, type DerivedStatus, type ResourceStatus } from '../kube/status/index.ts'
import { matchesSelector, podSelectorOf } from '../kube/status/selector.ts'
import { MANAGED_BY, MANAGED_BY_LABEL } from '../manifests/metadata.ts'
import type { KubeObject } from '../manifests/types.ts'
import type { ResourceDoc, ResourceRepository } from '../repositories/resources.ts'
import type { Counters } from '../kube/status/types.ts'
import { SingleOwnership, type ClusterOwnership } from '../kube/cluster-ownership.ts'
import { STALE } from '../repositories/resources.ts'
import { PodRecords, POD_PARENT_KINDS, type ScopeView } from './pod-records.ts'

const WORKLOAD_KINDS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job'])
/** Worst first: the state a node shows when it holds several resources. */
const SEVERITY: ResourceStatus[] = ['failed', 'warning', 'pending', 'unknown', 'running', 'completed', 'deleted']
/** At most one connection-log line per cluster in this window; the rest are counted into the next. */
const RECONNECT_LOG_WINDOW_MS = 60_000
/** How long (and how many) statuses derived by a finished local run on another replica's cluster are kept for its closing sync. */
const UNFOLLOWED_MEMORY_MS = 60_000
const UNFOLLOWED_MEMORY_MAX = 10_000
/** How long a resource seen deleted is kept from being revived by a reconcile that read its record too early. */
const GONE_MEMORY_MS = 10 * 60_000

export interface ResourceWatchDeps {
  resources: Pick<ResourceRepository, 'watchable' | 'setStatus' | 'observe' | 'removePods'>
  workflows: { setNodeStatus(ownerId: string, id: string, nodeId: string, status: Record<string, unknown>): Promise<boolean> }
  /** Ids of workflows whose resources are followed: deployed (run at least once) and not archived (of one owner, or all). */
  activeWorkflowIds(ownerId?: string): Promise<Set<string>>
  bus: EventBus
  /** What other replicas announced (run.started/finished, resources.changed, archives, cluster changes); absent: one replica. */
  remoteBus?: EventBus
  /** Which clusters this replica watches; absent: every one, unfenced (one replica). */
  ownership?: ClusterOwnership
  /** The cluster's credentials as the resource owner reaches them (viewer access suffices). */
  kubeConfigFor(ownerId: string, clusterId: string): Promise<KubeConfig>
  /** The cluster's connection log. */
  clusterLog(clusterId: string, success: boolean, message: string): Promise<void>
  backoff: BackoffOptions
  /** How often a cluster whose watches wait in backoff is probed; 0: never (the backoff alone decides). */
  probeIntervalMs?: number
  requestTimeoutMs?: number
  log?: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void }
  random?: () => number
  /** Drift detection (services/lifecycle/drift): told each followed object as its events arrive; marks the node statuses stored. */
  drift?: DriftHooks
}

export interface DriftHooks {
  /** The object as a watch event (or a listing) shows it on a cluster this replica holds; null: not there. */
  observed(ref: { owner_id: string; workflow_id: string; cluster_id: string; node_id: string; api_version: string; kind: string; name: string; namespace: string | null }, object: KubeObject | null): void
  /** The node's status with its drift, if any (idempotent: applied again at each write). */
  overlay(ownerId: string, workflowId: string, nodeId: string, status: Record<string, unknown>): Record<string, unknown>
}

interface Watched {
  id: string; owner_id: string; workflow_id: string; node_id: string; cluster_id: string; cluster: string
  api_version: string; kind: string; name: string; namespace: string | null
  status: ResourceStatus; message: string; ready: string | null; counters: Counters
  key: StreamKey
  off: Array<() => void>
  /** Writes and events of this resource, in order. */
  chain: Promise<void>
  pending: number
  lastWriteAt: number
  /** Its status has been derived at least once since it is followed. */
  seen: boolean
  /**
   * On a cluster another replica holds (a run's wait follows it here): the status last derived here, which
   * is neither stored nor announced. Kept apart from `status`, which is what this replica last stored.
   */
  live?: LiveStatus
}

/** What a run's wait is told: the object's latest derived status, or that it is not (or no longer) followed. */
export interface AwaitedStatus { settled: boolean; followed: boolean; last: DerivedStatus | null }
export interface LiveStatus { status: ResourceStatus; status_message: string; ready: string | null; counters: Counters }
export interface ObjectRef { kind: string; name: string; namespace: string | null }

interface Waiter { accept(d: DerivedStatus, resourceVersion: string | undefined): boolean; finish(settled: boolean): void; last: DerivedStatus | null }

/**
 * Whether the cached object is at least the version a run applied: until the apply's own event arrives the
 * cache may still hold the previous spec, whose "running" says nothing about the new one. Resource versions
 * are opaque to clients, so only equality is certain; every API server we know of (etcd's revision, the
 * simulator's counter) uses increasing integers, which is what the comparison relies on otherwise.
 */
export function atLeastVersion(seen: string | undefined, applied: string | null): boolean {
  if (!applied || seen === applied) return true
  if (!seen) return false
  return /^\d+$/.test(seen) && /^\d+$/.test(applied) && BigInt(seen) >= BigInt(applied)
}

const podKey = (cluster: string, namespace: string): StreamKey => ({ cluster, apiVersion: 'v1', kind: 'Pod', namespace })
const nsKey = (cluster: string, namespace: string | null) => `${cluster}\n${namespace ?? ''}`
const wfKey = (owner: string, workflow: string) => `${owner}\n${workflow}`

export class ResourceWatchService {
  readonly hub: WatchHub
  /** The followed workloads' pods as records. */
  readonly pods: PodRecords
  private readonly watched = new Map<string, Watched>()
  /** Workloads per (cluster, namespace), re-derived on their pods' events. */
  private readonly workloads = new Map<string, Set<Watched>>()
  private readonly podSubs = new Map<string, () => void>()
  /** Resources this service saw deleted, and when: a reconcile reading the record before the write landed must not revive them. */
  private readonly gone = new Map<string, number>()
  /** Workflows whose `workflow.synced` is due once all their streams have listed. */
  private readonly syncDue = new Set<string>()
  private readonly syncBatch = new Set<string>()
  /** Nodes (owner, workflow, node) that render an object other than a Namespace. */
  private readonly nodesWithOwnObjects = new Set<string>()
  private readonly reconciling = new Map<string, { running: Promise<void>; again: boolean }>()
  private readonly reconnectLog = new Map<string, { at: number; suppressed: number }>()
  /** Workflows with a run applying now (owner\nworkflow → runs): followed before their first run has finished. */
  private readonly running = new Map<string, number>()
  /** Runs in flight on other replicas (run id → owner\nworkflow): their workflows count as deployed here too. */
  private readonly remoteRuns = new Map<string, string>()
  /** Which clusters this replica watches (tests and the debug view read it). */
  readonly ownership: ClusterOwnership
  /** Runs waiting for a followed resource's status, by resource id. */
  private readonly waiters = new Map<string, Set<Waiter>>()
  /** Resource id → what a local run's wait last derived, kept a moment after the run's objects are unfollowed. */
  private readonly unfollowedRuns = new Map<string, { at: number; status: LiveStatus }>()
  private offBus: Array<() => void> = []
  private closed = false

  constructor(private readonly deps: ResourceWatchDeps) {
    const ownership = this.ownership = deps.ownership ?? new SingleOwnership()
    this.pods = new PodRecords({ resources: deps.resources, log: deps.log, bus: deps.bus, owns: (c) => ownership.owns(c), epoch: (c) => ownership.epoch(c) })
    this.hub = new WatchHub({
      labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY}`,
      backoff: deps.backoff,
      connect: (cluster) => this.connect(cluster),
      onReconnect: (info) => this.logReconnect(info),
      requestTimeoutMs: deps.requestTimeoutMs,
      random: deps.random,
      ...(deps.probeIntervalMs !== undefined && { probeIntervalMs: deps.probeIntervalMs }),
    })
  }

  /** Follows every deployed, non-archived workflow's resources and keeps following what runs change. */
  async start(): Promise<void> {
    const { bus, remoteBus } = this.deps
    // What changes the followed set, whether it happened here or (shared mode) on another replica.
    const listen = (source: EventBus) => [
      source.on('resources.changed', (e) => this.schedule(e.owner_id)),
      source.on('workflow.archived', (e) => this.stopWorkflow(e.owner_id, e.workflow_id)),
      source.on('workflow.deleted', (e) => this.stopWorkflow(e.owner_id, e.workflow_id)),
      source.on('workflow.status_changed', (e) => { if (e.from === 'archived') this.schedule(e.owner_id) }),
      // A cluster deleted (or no longer shared): its watchers stop rather than retry forever.
      source.on('cluster.changed', (e) => { void this.recheckCluster(e.cluster_id) }),
      // The health check found the cluster answering again: its waiting watches need not sit out their backoff.
      source.on('cluster.status', (e) => { if (e.to === 'connected') this.hub.clusterAnswered(e.cluster_id) }),
    ]
    this.offBus = [
      ...listen(bus),
      bus.on('run.finished', (e) => this.schedule(e.owner_id)),
      this.ownership.onGained((c) => this.gained(c)),
      this.ownership.onLost((c) => this.lost(c)),
    ]
    if (remoteBus) {
      this.offBus.push(
        ...listen(remoteBus),
        // A run elsewhere on a cluster held here: its objects are followed from its first apply, as a local run's.
        remoteBus.on('run.started', (e) => { this.remoteRuns.set(e.run_id, wfKey(e.owner_id, e.workflow_id)); void this.schedule(e.owner_id) }),
        remoteBus.on('run.finished', (e) => { this.remoteRuns.delete(e.run_id); void this.schedule(e.owner_id) }),
      )
    }
    await this.reconcile()
  }

  /** The cluster's lease came to this replica: list what it holds there again, and store what is seen now. */
  private gained(clusterId: string): void {
    this.pods.forget(clusterId)
    void this.schedule(undefined).then(() => {
      for (const w of [...this.watched.values()]) {
        if (w.cluster_id !== clusterId) continue
        // Followed meanwhile for a run's wait only: its first status as holder is stored as a first one.
        this.evaluate(w)
        if (POD_PARENT_KINDS.has(w.kind) && w.namespace) this.touchPods(w.cluster_id, w.namespace)
      }
    })
  }

  /** Another replica holds the cluster now: stop watching it, except what a run here still waits on. */
  private lost(clusterId: string): void {
    this.pods.forget(clusterId)
    for (const w of [...this.watched.values()]) {
      if (w.cluster_id !== clusterId || this.running.has(wfKey(w.owner_id, w.workflow_id))) continue
      this.unwatch(w, 'closing')
    }
  }

  /** How a resource stops being followed: its pod records are the holder's to keep or remove. */
  private dropWhy(w: Watched): 'unfollowed' | 'closing' {
    return this.ownership.owns(w.cluster_id) ? 'unfollowed' : 'closing'
  }

  /** Stops every watcher (spec rule 6: on shutdown). */
  async close(): Promise<void> {
    this.closed = true
    // Shutdown is not news about the pods: their records stay as they are for the next start to reconcile.
    this.pods.close()
    for (const off of this.offBus) off()
    this.offBus = []
    for (const w of [...this.watched.values()]) this.unwatch(w, 'closing')
    for (const set of [...this.waiters.values()]) for (const x of [...set]) x.finish(false)
    this.hub.close()
    await Promise.allSettled([...this.reconciling.values()].map((r) => r.running))
  }

  /** Resources followed now. */
  watchedCount(): number { return this.watched.size }

  /**
   * The status this replica last derived for a resource it follows, or null. In shared mode the replica that
   * ran a workflow follows its objects for the run's wait while another replica (the cluster's holder)
   * writes their records, which may not have landed yet when the run finishes.
   */
  liveStatus(resourceId: string): LiveStatus | null {
    const w = this.watched.get(resourceId)
    if (w?.seen) return { status: w.status, status_message: w.message, ready: w.ready, counters: w.counters }
    if (w?.live) return w.live
    // The run's reconcile may unfollow them before its closing sync reads them.
    const last = this.unfollowedRuns.get(resourceId)
    return last && Date.now() - last.at < UNFOLLOWED_MEMORY_MS ? last.status : null
  }

  /** Resolves when every queued store/publish has been done (tests, shutdown). */
  async idle(): Promise<void> {
    await Promise.allSettled([...this.watched.values()].map((w) => w.chain))
    await this.pods.idle()
  }

  // Which resources are followed

  /** Coalesces reconciles per owner (or of all: undefined): one running, at most one more queued. Settles after a reconcile that began after the call. */
  private schedule(ownerId: string | undefined): Promise<void> {
    if (this.closed) return Promise.resolve()
    const key = ownerId ?? '\n'
    const r = this.reconciling.get(key)
    if (r) { r.again = true; return r.running }
    const entry = { running: Promise.resolve(), again: false }
    entry.running = (async () => {
      do {
        entry.again = false
        try { await this.reconcile(ownerId) } catch (err) { this.deps.log?.error({ err: { message: String((err as Error)?.message ?? err) } }, 'watch: reconciling the watched resources failed') }
      } while (entry.again && !this.closed)
      this.reconciling.delete(key)
    })()
    this.reconciling.set(key, entry)
    return entry.running
  }

  // Runs

  /**
   * A run of the workflow has applied (some of) its objects and recorded them: follow them now (settles once
   * they are followed). The run holds the workflow (`hold`) meanwhile, so it counts as deployed even before
   * its first run has finished.
   */
  async follow(ownerId: string, workflowId: string): Promise<void> {
    this.hold(ownerId, workflowId)
    try {
      await this.schedule(ownerId)
    } finally {
      this.release(ownerId, workflowId)
    }
  }

  /** Counts the workflow as deployed until the matching `release` (a run holds it while it applies and waits). */
  hold(ownerId: string, workflowId: string): void {
    const k = wfKey(ownerId, workflowId)
    this.running.set(k, (this.running.get(k) ?? 0) + 1)
  }

  /** The run that held the workflow has finished; `run.finished` reconciles what stays followed. */
  release(ownerId: string, workflowId: string): void {
    const k = wfKey(ownerId, workflowId)
    const n = (this.running.get(k) ?? 0) - 1
    if (n > 0) this.running.set(k, n)
    else this.running.delete(k)
  }

  /**
   * Waits until the followed object's derived status satisfies `settled` (true), or `timeoutMs` passes, or
   * the object stops being followed (false). `last` is the latest status derived meanwhile: the reason.
   */
  awaitStatus(ownerId: string, clusterId: string, ref: ObjectRef & { resourceVersion: string | null }, settled: (d: DerivedStatus) => boolean, timeoutMs: number): Promise<AwaitedStatus> {
    const w = [...this.watched.values()].find((x) => x.owner_id === ownerId && x.cluster_id === clusterId && x.kind === ref.kind && x.name === ref.name && x.namespace === ref.namespace)
    if (!w || this.closed) return Promise.resolve({ settled: false, followed: false, last: null })
    return new Promise((resolve) => {
      let set = this.waiters.get(w.id)
      if (!set) { set = new Set(); this.waiters.set(w.id, set) }
      const waiters = set
      const timer = setTimeout(() => waiter.finish(false), timeoutMs)
      timer.unref?.()
      const waiter: Waiter = {
        last: null,
        accept: (d, rv) => {
          if (d.status !== 'deleted' && !atLeastVersion(rv, ref.resourceVersion)) return false
          waiter.last = d
          if (!settled(d)) return false
          waiter.finish(true)
          return true
        },
        finish: (ok) => {
          clearTimeout(timer)
          if (!waiters.delete(waiter)) return
          if (waiters.size === 0 && this.waiters.get(w.id) === waiters) this.waiters.delete(w.id)
          resolve({ settled: ok, followed: this.watched.get(w.id) === w, last: waiter.last })
        },
      }
      waiters.add(waiter)
      // The streams may already know it (a re-run of a followed workflow): judge from their caches now.
      this.evaluate(w)
    })
  }

  private notify(w: Watched, d: DerivedStatus, resourceVersion?: string): void {
    const set = this.waiters.get(w.id)
    if (!set) return
    for (const x of [...set]) x.accept(d, resourceVersion)
  }

  /** Follows exactly the non-deleted tracked resources of active workflows (of one owner, or of all). */
  async reconcile(ownerId?: string): Promise<void> {
    if (this.closed) return
    const [docs, active] = await Promise.all([this.deps.resources.watchable(ownerId), this.deps.activeWorkflowIds(ownerId)])
    if (this.closed) return
    for (const k of [...this.running.keys(), ...this.remoteRuns.values()]) {
      const [owner, workflow] = k.split('\n')
      if (ownerId === undefined || owner === ownerId) active.add(workflow)
    }
    const now = Date.now()
    for (const [id, at] of this.gone) if (now - at > GONE_MEMORY_MS) this.gone.delete(id)
    const wanted = new Map<string, ResourceDoc>()
    for (const d of docs) {
      if (!active.has(d.workflow_id)) continue
      // Another replica's cluster: followed here only while a run here waits on it.
      if (!this.ownership.owns(d.cluster_id) && !this.running.has(wfKey(d.owner_id, d.workflow_id))) continue
      const goneAt = this.gone.get(d._id)
      if (goneAt !== undefined && d.updated_at.getTime() <= goneAt) continue
      wanted.set(d._id, d)
    }
    for (const w of [...this.watched.values()]) {
      if ((ownerId === undefined || w.owner_id === ownerId) && !wanted.has(w.id)) this.unwatch(w, this.dropWhy(w))
    }
    // Pod records whose workload is not followed (its workflow archived or deleted while this process was
    // down, its record gone): nothing keeps them current. Those marked deleted are left to expire.
    const parents = [...wanted.values()].filter((d) => POD_PARENT_KINDS.has(d.kind)).map((d) => d._id)
    await this.deps.resources.removePods(ownerId, { followedParents: parents, clusterIds: this.ownership.ownedClusters() ?? undefined }).catch((err: unknown) => {
      this.deps.log?.error({ err: { message: String((err as Error)?.message ?? err) } }, 'watch: removing the pod records of unfollowed workloads failed')
    })
    const touched = new Set<string>()
    for (const d of wanted.values()) {
      const w = this.watched.get(d._id)
      if (!w) { this.watch(d); touched.add(wfKey(d.owner_id, d.workflow_id)); continue }
      // A run or a sync wrote the record since: that is now the stored state to compare against.
      if (w.pending === 0 && d.updated_at.getTime() > w.lastWriteAt && (d.status !== w.status || d.ready !== w.ready)) {
        Object.assign(w, { status: d.status, message: d.status_message, ready: d.ready, counters: d.counters, lastWriteAt: d.updated_at.getTime() })
        this.evaluate(w)
      }
    }
    for (const k of touched) { this.syncDue.add(k); this.maybeSynced(k) }
  }

  private watch(d: ResourceDoc): void {
    this.gone.delete(d._id)
    const key: StreamKey = { cluster: d.cluster_id, apiVersion: d.api_version, kind: d.kind, namespace: d.namespace }
    const w: Watched = {
      id: d._id, owner_id: d.owner_id, workflow_id: d.workflow_id, node_id: d.node_id, cluster_id: d.cluster_id, cluster: d.cluster,
      api_version: d.api_version, kind: d.kind, name: d.name, namespace: d.namespace,
      status: d.status, message: d.status_message, ready: d.ready, counters: d.counters ?? {},
      key, off: [], chain: Promise.resolve(), pending: 0, lastWriteAt: d.updated_at.getTime(), seen: false,
    }
    this.watched.set(w.id, w)
    if (w.kind !== 'Namespace') this.nodesWithOwnObjects.add(`${wfKey(w.owner_id, w.workflow_id)}\n${w.node_id}`)
    if (POD_PARENT_KINDS.has(w.kind) && w.namespace) {
      const k = nsKey(w.cluster_id, w.namespace)
      const ns = w.namespace
      let set = this.workloads.get(k)
      if (!set) { set = new Set(); this.workloads.set(k, set) }
      set.add(w)
      if (!this.podSubs.has(k)) {
        this.podSubs.set(k, this.hub.subscribe(podKey(w.cluster_id, ns), {
          name: '*',
          event: () => {
            for (const x of this.workloads.get(k) ?? []) this.evaluate(x)
            this.touchPods(w.cluster_id, ns)
          },
          synced: () => {
            for (const x of this.workloads.get(k) ?? []) {
              this.evaluate(x)
              if (this.syncDue.has(wfKey(x.owner_id, x.workflow_id))) this.syncLater(wfKey(x.owner_id, x.workflow_id))
            }
            this.touchPods(w.cluster_id, ns)
          },
        }))
      }
    }
    w.off.push(this.hub.subscribe(key, {
      name: w.name,
      event: (type, obj) => this.onEvent(w, type, obj),
      synced: () => this.onSynced(w),
    }))
    // Joined a stream that had already listed: judge from its cache now.
    if (this.hub.isSynced(key) && this.hub.object(key, w.name)) this.evaluate(w)
  }

  /**
   * Stops following the resource. Its pods' records: `deleted` (the workload left the cluster) marks them
   * deleted, `unfollowed` (it is still there, but no longer followed) removes them, `closing` leaves them.
   */
  private unwatch(w: Watched, why: 'deleted' | 'unfollowed' | 'closing'): void {
    if (this.watched.get(w.id) !== w) return
    this.watched.delete(w.id)
    // A non-holder drops a run's objects as 'closing' (their pod records are the holder's).
    if (why !== 'deleted' && w.live && !this.ownership.owns(w.cluster_id)) this.rememberUnfollowed(w.id, w.live)
    for (const off of w.off) off()
    w.off = []
    for (const x of [...(this.waiters.get(w.id) ?? [])]) x.finish(false)
    if (POD_PARENT_KINDS.has(w.kind) && w.namespace) {
      const k = nsKey(w.cluster_id, w.namespace)
      const set = this.workloads.get(k)
      set?.delete(w)
      if (why !== 'closing') this.touchPods(w.cluster_id, w.namespace, why === 'unfollowed' ? [w] : [])
      if (set && set.size === 0) {
        this.workloads.delete(k)
        this.podSubs.get(k)?.()
        this.podSubs.delete(k)
      }
    }
  }

  /** Bounded: the last statuses of a finished run's objects on a cluster another replica holds. */
  private rememberUnfollowed(id: string, status: LiveStatus): void {
    const now = Date.now()
    for (const [id, last] of this.unfollowedRuns) {
      if (this.unfollowedRuns.size < UNFOLLOWED_MEMORY_MAX && now - last.at < UNFOLLOWED_MEMORY_MS) break
      this.unfollowedRuns.delete(id)
    }
    this.unfollowedRuns.delete(id)
    this.unfollowedRuns.set(id, { at: now, status })
  }

  // Pods as records

  private touchPods(clusterId: string, namespace: string, unfollowed: Watched[] = []): void {
    if (!this.ownership.owns(clusterId)) return
    this.pods.touch(clusterId, namespace, () => this.podScope(clusterId, namespace), unfollowed)
  }

  /** The scope as the caches hold it now (pod-records.ts reads it when it flushes). */
  private podScope(clusterId: string, namespace: string): ScopeView | null {
    const key = podKey(clusterId, namespace)
    // The stream is closed once no workload is followed there: with nothing to read, every record goes.
    const open = this.podSubs.has(nsKey(clusterId, namespace))
    if (open && !this.hub.isSynced(key)) return null
    const view: ScopeView = { pods: open ? this.hub.objects(key) : [], parents: [], unsettledOwners: new Set(), ownPods: new Set() }
    for (const w of this.workloads.get(nsKey(clusterId, namespace)) ?? []) {
      if (!this.hub.isSynced(w.key)) { view.unsettledOwners.add(w.owner_id); continue }
      const object = this.hub.object(w.key, w.name)
      if (object) view.parents.push({ ...w, namespace, object })
    }
    for (const w of this.watched.values()) {
      if (w.kind === 'Pod' && w.cluster_id === clusterId && w.namespace === namespace) view.ownPods.add(`${w.owner_id}\n${w.name}`)
    }
    return view
  }

  private stopWorkflow(ownerId: string, workflowId: string): void {
    for (const w of [...this.watched.values()]) if (w.owner_id === ownerId && w.workflow_id === workflowId) this.unwatch(w, this.dropWhy(w))
    this.syncDue.delete(wfKey(ownerId, workflowId))
  }

  // Status

  private onEvent(w: Watched, type: WatchEventType, obj: KubeObject): void {
    this.observeDrift(w, type === 'DELETED' ? null : obj)
    if (type === 'DELETED') { this.deleted(w, obj); return }
    this.evaluate(w)
    // Its selector (or, for a CronJob, its template's labels) decides which pods are its.
    if (POD_PARENT_KINDS.has(w.kind) && w.namespace) this.touchPods(w.cluster_id, w.namespace)
  }

  private onSynced(w: Watched): void {
    this.observeDrift(w, this.hub.object(w.key, w.name) ?? null)
    // A full listing without the object: it is not in the cluster (or no longer carries our label).
    if (!this.hub.object(w.key, w.name)) this.deleted(w, null)
    else {
      this.evaluate(w)
      if (POD_PARENT_KINDS.has(w.kind) && w.namespace) this.touchPods(w.cluster_id, w.namespace)
    }
    this.syncLater(wfKey(w.owner_id, w.workflow_id))
  }

  /** Drift detection judges the object the event carries (no request of its own), on clusters this replica holds. */
  private observeDrift(w: Watched, obj: KubeObject | null): void {
    if (!this.deps.drift || this.watched.get(w.id) !== w || !this.ownership.owns(w.cluster_id)) return
    const { owner_id, workflow_id, cluster_id, node_id, api_version, kind, name, namespace } = w
    this.deps.drift.observed({ owner_id, workflow_id, cluster_id, node_id, api_version, kind, name, namespace }, obj)
  }

  /** What a node's status is with its drift (none: as derived). */
  private withDrift(ownerId: string, workflowId: string, nodeId: string, status: Record<string, unknown>): Record<string, unknown> {
    return this.deps.drift ? this.deps.drift.overlay(ownerId, workflowId, nodeId, status) : status
  }

  /** The node's status as derived here now (drift included); null when none of its objects is followed here. */
  derivedNodeStatus(ownerId: string, workflowId: string, nodeId: string): Record<string, unknown> | null {
    // A namespace the run created for the node's objects does not speak for the node (as in nodeStatus).
    const seen = [...this.watched.values()].some((x) => x.seen && x.owner_id === ownerId && x.workflow_id === workflowId && x.node_id === nodeId && !this.incidental(x))
    return seen ? this.nodeStatus(ownerId, workflowId, nodeId) : null
  }

  /** A listing calls every listener of its stream in one go: the workflows they belong to are checked once, after. */
  private syncLater(k: string): void {
    this.syncDue.add(k)
    if (this.syncBatch.size === 0) queueMicrotask(() => { const ks = [...this.syncBatch]; this.syncBatch.clear(); for (const x of ks) this.maybeSynced(x) })
    this.syncBatch.add(k)
  }

  private podsOf(w: Watched, obj: KubeObject): KubeObject[] | undefined {
    if (!WORKLOAD_KINDS.has(w.kind) || !w.namespace) return undefined
    const selector = podSelectorOf(w.kind, obj.spec as Record<string, unknown> | undefined)
    if (!selector) return []
    return this.hub.objects(podKey(w.cluster_id, w.namespace)).filter((p) => matchesSelector(p.metadata.labels, selector))
  }

  /** Derives the status from the caches; a change is stored and published (in order, once). */
  private evaluate(w: Watched): void {
    if (this.watched.get(w.id) !== w || !this.hub.isSynced(w.key)) return
    const obj = this.hub.object(w.key, w.name)
    if (!obj) return
    if (WORKLOAD_KINDS.has(w.kind) && w.namespace && !this.hub.isSynced(podKey(w.cluster_id, w.namespace))) return
    const d = deriveStatus(obj, { pods: this.podsOf(w, obj) })
    this.change(w, d)
    this.notify(w, d, typeof obj.metadata.resourceVersion === 'string' ? obj.metadata.resourceVersion : undefined)
  }

  private deleted(w: Watched, _obj: KubeObject | null): void {
    if (this.watched.get(w.id) !== w) return
    const d: DerivedStatus = { status: 'deleted', message: 'deleted from the cluster', ready: null, counters: {} }
    const owned = this.ownership.owns(w.cluster_id)
    this.change(w, d)
    this.notify(w, d)
    this.gone.set(w.id, Date.now())
    const k = wfKey(w.owner_id, w.workflow_id)
    this.unwatch(w, owned ? 'deleted' : 'closing')
    // Its workflow's other resources may all have listed already.
    if (this.syncDue.has(k)) this.maybeSynced(k)
  }

  private change(w: Watched, d: DerivedStatus): void {
    // Not this replica's cluster (a run's wait follows it): the holder stores and announces. What is seen
    // here is kept for the run's closing sync (liveStatus), which may come before the holder's write lands.
    if (!this.ownership.owns(w.cluster_id)) {
      w.live = { status: d.status, status_message: d.message, ready: d.ready, counters: d.counters }
      return
    }
    w.live = undefined
    const epoch = this.ownership.epoch(w.cluster_id)
    const first = !w.seen
    w.seen = true
    const incidental = this.incidental(w)
    if (d.status === w.status && d.ready === w.ready && messageKey(d.message) === messageKey(w.message)) {
      if (first && !incidental) this.storeFirst(w)
      return
    }
    const old = w.status
    Object.assign(w, { status: d.status, message: d.message, ready: d.ready, counters: d.counters })
    w.pending++
    const nodeStatus = incidental ? null : this.nodeStatus(w.owner_id, w.workflow_id, w.node_id, w)
    w.chain = w.chain.then(async () => {
      // The lease may have lapsed while this waited its turn; a newer holder's write refuses this one (STALE).
      let superseded = !this.ownership.owns(w.cluster_id)
      try {
        if (!superseded) {
          const at = await this.deps.resources.setStatus(w.owner_id, w.id, { status: d.status, status_message: d.message, ready: d.ready, counters: d.counters }, epoch)
          if (at === STALE) superseded = true
          else {
            if (at) w.lastWriteAt = at.getTime()
            // Drift found while this waited its turn shows too.
            if (nodeStatus) await this.deps.workflows.setNodeStatus(w.owner_id, w.workflow_id, w.node_id, this.withDrift(w.owner_id, w.workflow_id, w.node_id, nodeStatus))
          }
        }
      } catch (err) {
        this.deps.log?.error({ resource_id: w.id, err: { message: String((err as Error)?.message ?? err) } }, 'watch: storing a status change failed')
      } finally {
        w.pending--
      }
      if (superseded) return
      try {
        this.deps.bus.emit('resource.status', {
          owner_id: w.owner_id, workflow_id: w.workflow_id, resource_id: w.id, node_id: w.node_id, kind: w.kind, name: w.name, namespace: w.namespace,
          old_status: old, new_status: d.status, message: d.message, counters: d.counters,
        })
      } catch (err) {
        this.deps.log?.error({ resource_id: w.id, err: { message: String((err as Error)?.message ?? err) } }, 'watch: a resource.status listener failed')
      }
    })
  }

  /** A namespace a run created for a node's other objects: it does not speak for the node. */
  private incidental(w: Watched): boolean {
    return w.kind === 'Namespace' && this.nodesWithOwnObjects.has(`${wfKey(w.owner_id, w.workflow_id)}\n${w.node_id}`)
  }

  /**
   * The first status derived for an object that matches its record (a ConfigMap or a Service is `running`
   * from the start and may never change): the node's `_status` is stored unless another of the node's
   * objects has been seen already (its first status or a change stored it). So once per node and start,
   * never per event; the rule of which object speaks for the node is nodeStatus's, as for a change.
   */
  private storeFirst(w: Watched): void {
    for (const x of this.watched.values()) {
      if (x !== w && x.seen && x.owner_id === w.owner_id && x.workflow_id === w.workflow_id && x.node_id === w.node_id && !this.incidental(x)) return
    }
    const nodeStatus = this.nodeStatus(w.owner_id, w.workflow_id, w.node_id, w)
    w.chain = w.chain.then(async () => {
      if (!this.ownership.owns(w.cluster_id)) return
      try {
        await this.deps.workflows.setNodeStatus(w.owner_id, w.workflow_id, w.node_id, this.withDrift(w.owner_id, w.workflow_id, w.node_id, nodeStatus))
      } catch (err) {
        this.deps.log?.error({ resource_id: w.id, err: { message: String((err as Error)?.message ?? err) } }, 'watch: storing a node\'s first status failed')
      }
    })
  }

  /** The node's `_status`: its worst resource's state (a node may render several objects). */
  private nodeStatus(ownerId: string, workflowId: string, nodeId: string, changed?: Watched): Record<string, unknown> {
    let members = [...this.watched.values()].filter((x) => x.owner_id === ownerId && x.workflow_id === workflowId && x.node_id === nodeId)
    if (changed && !members.includes(changed)) members.push(changed)
    // The namespace a run created for a node's object is not the node: it speaks for the node only when the
    // node has nothing else (a namespace node).
    if (this.nodesWithOwnObjects.has(`${wfKey(ownerId, workflowId)}\n${nodeId}`)) members = members.filter((m) => m.kind !== 'Namespace')
    // Worst first; on a tie the node's own object before a Namespace it happens to have created.
    members.sort((a, b) => SEVERITY.indexOf(a.status) - SEVERITY.indexOf(b.status) || Number(a.kind === 'Namespace') - Number(b.kind === 'Namespace'))
    const worst = members.find((m) => m.status !== 'deleted') ?? members[0]
    if (!worst) return this.withDrift(ownerId, workflowId, nodeId, { state: changed?.status ?? 'unknown', message: changed?.message ?? '' })
    // `ready` only where the kind has one: the event schema has it as a string, never null.
    return this.withDrift(ownerId, workflowId, nodeId, { ...worst.counters, state: worst.status, message: worst.message, ...(worst.ready !== null && { ready: worst.ready }) })
  }

  /** Publishes `workflow.synced` once every stream the workflow's resources need has listed. */
  private maybeSynced(k: string): void {
    if (!this.syncDue.has(k) || this.closed) return
    const [ownerId, workflowId] = k.split('\n')
    // What another replica's clusters show is that replica's to announce.
    const all = [...this.watched.values()].filter((x) => x.owner_id === ownerId && x.workflow_id === workflowId)
    const members = all.filter((x) => this.ownership.owns(x.cluster_id))
    if (all.length && !members.length) { this.syncDue.delete(k); return }
    const ready = members.every((x) => this.hub.isSynced(x.key) && (!WORKLOAD_KINDS.has(x.kind) || !x.namespace || this.hub.isSynced(podKey(x.cluster_id, x.namespace))))
    if (!ready) return
    this.syncDue.delete(k)
    const nodes = [...new Set(members.map((m) => m.node_id))].map((nodeId) => ({ node_id: nodeId, status: this.nodeStatus(ownerId, workflowId, nodeId) }))
    // After the writes the listing caused, so a reader of the workflow sees what the event says.
    void Promise.allSettled(members.map((m) => m.chain)).then(() => {
      if (!this.closed) this.deps.bus.emit('workflow.synced', { owner_id: ownerId, workflow_id: workflowId, nodes })
    })
  }

  // Connections

  private async connect(clusterId: string): Promise<KubeConfig> {
    // Any owner following resources there: the watch reads what that owner's access allows.
    for (;;) {
      const owner = [...this.watched.values()].find((w) => w.cluster_id === clusterId)?.owner_id
      if (!owner) throw new Error('no resource of this cluster is followed any more')
      try {
        return await this.deps.kubeConfigFor(owner, clusterId)
      } catch (err) {
        if (!this.lostAccess(err)) throw err
        this.dropCluster(owner, clusterId)
      }
    }
  }

  /** 404: the cluster is gone (or no longer shared with the owner); 403: below viewer. Not worth retrying. */
  private lostAccess(err: unknown): boolean {
    const code = (err as { statusCode?: unknown })?.statusCode
    return code === 404 || code === 403
  }

  private dropCluster(ownerId: string, clusterId: string): void {
    for (const w of [...this.watched.values()]) if (w.owner_id === ownerId && w.cluster_id === clusterId) this.unwatch(w, this.dropWhy(w))
  }

  private async recheckCluster(clusterId: string): Promise<void> {
    const owners = new Set([...this.watched.values()].filter((w) => w.cluster_id === clusterId).map((w) => w.owner_id))
    for (const owner of owners) {
      try {
        await this.deps.kubeConfigFor(owner, clusterId)
      } catch (err) {
        if (this.lostAccess(err)) this.dropCluster(owner, clusterId)
      }
    }
  }

  /** Says so in the cluster's connection log, at most once a minute per cluster (a flapping watch would flood it). */
  private logReconnect(info: ReconnectInfo): void {
    const now = Date.now()
    const seen = this.reconnectLog.get(info.cluster)
    if (seen && now - seen.at < RECONNECT_LOG_WINDOW_MS) { seen.suppressed++; return }
    const more = seen?.suppressed ? ` (${seen.suppressed} more reconnects since the last entry)` : ''
    this.reconnectLog.set(info.cluster, { at: now, suppressed: 0 })
    const where = info.namespace ? ` in namespace ${info.namespace}` : ''
    const message = `watch of ${info.kind}${where} dropped (${info.reason}); reconnecting in ${info.delayMs < 1000 ? `${info.delayMs} ms` : `${(info.delayMs / 1000).toFixed(1)} s`}, attempt ${info.attempt}${more}`
    this.deps.clusterLog(info.cluster, false, message).catch(() => undefined)
  }
}
