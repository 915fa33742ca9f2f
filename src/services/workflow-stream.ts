// Bus → hub: what the workflow and resource streams carry (API.md §7), from what runs and watchers announce.
//
//   run.object       → node_update on workflow:<id>           (a run's progress, object by object)
//   run.finished     → workflow_sync, error (failed run), complete on workflow:<id>
//   resource.status  → node_update + status_change on workflow:<id> and resource:<id>; node_update carries
//                      the node's status as stored (a node may render several objects: its worst one),
//                      so it always agrees with the next `metadata`
//   pod.status       → node_update (the pod's own status) + status_change on resource:<id> only: a workload's
//                      pod record is not its node, which follows the workload
//   workflow.synced  → workflow_sync on workflow:<id>           (a watch's initial list: start or resync)
//   cluster.status   → error on resource:<id> of each open resource stream on a cluster that became unreachable
//   workflow.deleted → error on workflow:<id>                  (nothing more will come)
//   drift.detected   → drift_detected + node_update on workflow:<id> (the node's stored status: drifted)
//   drift.resolved   → drift_resolved + node_update on workflow:<id> (its derived status again)
//
// Dry runs change nothing in the cluster, so they publish no node status; their end (complete, error) is
// still announced, since a client watching the stream started them. A run's events are published in the
// order the bus gave them, even though finding out whether it is a dry run takes a read.
import type { EventBus, BusEvents, RunObjectEvent } from '../events/bus.ts'
import type { StreamHub } from '../events/stream-hub.ts'

/** Node status as API.md §4 has it: `{state, message, ...}` plus the kind's counters. */
export type NodeStatus = { state: string; message: string } & Record<string, unknown>

export interface RunOutcome {
  dry_run: boolean
  status: string
  error: string | null
  nodes: Array<{ node_id: string; kind: string; action: string; message: string }>
}

export interface TrackedStatus { node_id: string; kind: string; status: string; status_message: string; ready: string | null; counters: Record<string, unknown> }

export interface WorkflowStreamDeps {
  bus: EventBus
  hub: StreamHub
  /** The run's record; null when it is gone (workflow deleted meanwhile). */
  run(ownerId: string, workflowId: string, runId: string): Promise<RunOutcome | null>
  /** The tracked resources of these nodes of the workflow, for the node statuses after a run. */
  tracked(ownerId: string, workflowId: string, nodeIds: string[]): Promise<TrackedStatus[]>
  /** The node's stored status (`data._status`), null when the workflow or node is gone or has none. */
  nodeStatus?(ownerId: string, workflowId: string, nodeId: string): Promise<NodeStatus | null>
  log: { error(obj: object, msg: string): void }
}

export const workflowKey = (id: string) => `workflow:${id}`
export const resourceKey = (id: string) => `resource:${id}`

/** What an applied object means for its node until the watcher says more. */
export function appliedStatus(result: Pick<RunObjectEvent, 'action' | 'message'>): NodeStatus {
  const state = result.action === 'failed' ? 'failed' : result.action === 'skipped' ? 'unknown' : 'pending'
  return { state, message: result.message, action: result.action }
}

export function trackedStatus(r: Pick<TrackedStatus, 'status' | 'status_message' | 'ready' | 'counters'>): NodeStatus {
  return { ...r.counters, state: r.status, message: r.status_message, ...(r.ready !== null && { ready: r.ready }) }
}

// A node with several objects (a plugin node) shows its worst one.
const SEVERITY = ['failed', 'warning', 'pending', 'unknown', 'deleted', 'running', 'completed']
const severity = (state: string) => { const i = SEVERITY.indexOf(state); return i < 0 ? SEVERITY.length : i }

/** Per node of a finished run: failed objects as the run says, the others as their tracked resources say. */
export function runNodeStatuses(run: RunOutcome, tracked: TrackedStatus[]): Array<{ node_id: string; status: NodeStatus }> {
  const byNode = new Map<string, NodeStatus>()
  const worse = (nodeId: string, status: NodeStatus) => {
    const current = byNode.get(nodeId)
    if (!current || severity(status.state) < severity(current.state)) byNode.set(nodeId, status)
  }
  const applied = new Set<string>()
  for (const n of run.nodes) {
    if (n.action === 'failed' || n.action === 'skipped') worse(n.node_id, appliedStatus(n as Pick<RunObjectEvent, 'action' | 'message'>))
    else applied.add(n.node_id)
  }
  const seen = new Set<string>()
  // The namespace a run created for a node's objects is not the node: it speaks for the node only when the
  // node has nothing else (as the watcher stores it).
  const ownObjects = new Set(tracked.filter((r) => r.kind !== 'Namespace').map((r) => r.node_id))
  for (const r of tracked) {
    if (!applied.has(r.node_id) || r.status === 'deleted') continue
    if (r.kind === 'Namespace' && ownObjects.has(r.node_id)) continue
    seen.add(r.node_id)
    worse(r.node_id, trackedStatus(r))
  }
  // Applied but not (yet) tracked: what the run said.
  for (const n of run.nodes) if (applied.has(n.node_id) && !seen.has(n.node_id)) worse(n.node_id, appliedStatus(n as Pick<RunObjectEvent, 'action' | 'message'>))
  return [...byNode].map(([node_id, status]) => ({ node_id, status }))
}

export class WorkflowStreamPublisher {
  private readonly offs: Array<() => void> = []
  /** Per run in flight: the tail of its publishing chain and whether it is a dry run. */
  private readonly runs = new Map<string, { tail: Promise<void>; dryRun: Promise<boolean> }>()
  /** Per workflow: the tail of its resource.status publishing. */
  private readonly statusChains = new Map<string, Promise<void>>()
  /** Resource streams open in this process: resource id → its cluster and how many streams. */
  private readonly openResources = new Map<string, { clusterId: string; count: number }>()

  constructor(private readonly deps: WorkflowStreamDeps) {
    const { bus } = deps
    this.offs.push(
      bus.on('run.started', (e) => this.runStarted(e)),
      bus.on('run.object', (e) => this.runObject(e)),
      bus.on('run.finished', (e) => this.runFinished(e)),
      bus.on('resource.status', (e) => this.resourceStatus(e)),
      bus.on('pod.status', (e) => this.podStatus(e)),
      bus.on('workflow.synced', (e) => this.synced(e)),
      bus.on('cluster.status', (e) => this.clusterStatus(e)),
      bus.on('workflow.deleted', (e) => this.deps.hub.publish(workflowKey(e.workflow_id), 'error', { error: 'the workflow was deleted' })),
      bus.on('drift.detected', (e) => this.drift(e, 'drift_detected', { node_id: e.node_id, fields: e.fields })),
      bus.on('drift.resolved', (e) => this.drift(e, 'drift_resolved', { node_id: e.node_id })),
    )
  }

  /** A resource stream opened; the returned function is called when it ends. */
  openResource(resourceId: string, clusterId: string): () => void {
    const entry = this.openResources.get(resourceId) ?? { clusterId, count: 0 }
    entry.count++
    this.openResources.set(resourceId, entry)
    let closed = false
    return () => {
      if (closed) return
      closed = true
      if (--entry.count === 0) this.openResources.delete(resourceId)
    }
  }

  stop(): void {
    for (const off of this.offs.splice(0)) off()
  }

  /** Resolves when everything announced so far is published (tests). */
  async idle(): Promise<void> {
    while (this.runs.size || this.statusChains.size) {
      await Promise.all([...[...this.runs.values()].map((r) => r.tail), ...this.statusChains.values()])
    }
  }

  private entry(e: { owner_id: string; workflow_id: string; run_id: string }) {
    let entry = this.runs.get(e.run_id)
    if (!entry) {
      const dryRun = this.deps.run(e.owner_id, e.workflow_id, e.run_id).then((r) => r?.dry_run ?? false, () => false)
      entry = { tail: Promise.resolve(), dryRun }
      this.runs.set(e.run_id, entry)
    }
    return entry
  }

  private enqueue(e: { owner_id: string; workflow_id: string; run_id: string }, task: (dryRun: boolean) => Promise<void> | void): void {
    const entry = this.entry(e)
    entry.tail = entry.tail.then(async () => task(await entry.dryRun)).catch((err: unknown) => {
      this.deps.log.error({ run_id: e.run_id, err: { message: String((err as Error)?.message ?? err) } }, 'publishing a run\'s stream events failed')
    })
  }

  private runStarted(e: BusEvents['run.started']): void {
    this.entry(e)
  }

  private runObject(e: BusEvents['run.object']): void {
    this.enqueue(e, (dryRun) => {
      if (dryRun) return
      this.deps.hub.publish(workflowKey(e.workflow_id), 'node_update', { node_id: e.result.node_id, kind: e.result.kind, status: appliedStatus(e.result) })
    })
  }

  private runFinished(e: BusEvents['run.finished']): void {
    const key = workflowKey(e.workflow_id)
    this.enqueue(e, async () => {
      try {
        const run = await this.deps.run(e.owner_id, e.workflow_id, e.run_id)
        if (run && !run.dry_run) {
          const tracked = await this.deps.tracked(e.owner_id, e.workflow_id, [...new Set(run.nodes.map((n) => n.node_id))])
          this.deps.hub.publish(key, 'workflow_sync', { nodes: runNodeStatuses(run, tracked) })
        }
        if (e.status === 'failed') this.deps.hub.publish(key, 'error', { error: run?.error ?? 'the run failed' })
      } finally {
        // Whatever the reads did, a client waiting for the end of the run hears of it.
        this.deps.hub.publish(key, 'complete', { run_id: e.run_id, status: e.status })
        this.runs.delete(e.run_id)
      }
    })
  }

  private resourceStatus(e: BusEvents['resource.status']): void {
    const own = trackedStatus({ status: e.new_status, status_message: e.message, ready: null, counters: e.counters })
    const change = {
      resource_id: e.resource_id, node_id: e.node_id, kind: e.kind, name: e.name, namespace: e.namespace,
      old_status: e.old_status, new_status: e.new_status, message: e.message,
    }
    this.inOrder(e.workflow_id, async () => {
      const stored = this.deps.nodeStatus ? await this.deps.nodeStatus(e.owner_id, e.workflow_id, e.node_id).catch(() => null) : null
      const nodeUpdate = { node_id: e.node_id, kind: e.kind, status: stored ?? own }
      for (const key of [workflowKey(e.workflow_id), resourceKey(e.resource_id)]) {
        this.deps.hub.publish(key, 'node_update', nodeUpdate)
        // A change of the ready count alone (e.g. 1/2 → 2/2 while pending) updates the node; status_change is
        // for a change of status (spec delivery rule 4).
        if (e.old_status !== e.new_status) this.deps.hub.publish(key, 'status_change', change)
      }
    })
  }

  /** A node's drift changed (its status is stored before the event): the event, then the node as stored. */
  private drift(e: { owner_id: string; workflow_id: string; node_id: string }, type: 'drift_detected' | 'drift_resolved', data: object): void {
    this.inOrder(e.workflow_id, async () => {
      const key = workflowKey(e.workflow_id)
      this.deps.hub.publish(key, type, data)
      const [stored, tracked] = await Promise.all([
        this.deps.nodeStatus ? this.deps.nodeStatus(e.owner_id, e.workflow_id, e.node_id).catch(() => null) : null,
        this.deps.tracked(e.owner_id, e.workflow_id, [e.node_id]).catch(() => []),
      ])
      if (!stored) return
      // The node's own object names its kind; a namespace it created only when it has nothing else.
      const kind = (tracked.find((r) => r.kind !== 'Namespace') ?? tracked[0])?.kind ?? 'unknown'
      this.deps.hub.publish(key, 'node_update', { node_id: e.node_id, kind, status: stored })
    })
  }

  private podStatus(e: BusEvents['pod.status']): void {
    const key = resourceKey(e.resource_id)
    this.deps.hub.publish(key, 'node_update', { node_id: e.node_id, kind: 'Pod', status: trackedStatus({ status: e.new_status, status_message: e.message, ready: e.ready, counters: e.counters }) })
    if (e.old_status !== e.new_status) {
      this.deps.hub.publish(key, 'status_change', {
        resource_id: e.resource_id, node_id: e.node_id, kind: 'Pod', name: e.name, namespace: e.namespace,
        old_status: e.old_status, new_status: e.new_status, message: e.message,
      })
    }
  }

  /** Watcher events of a workflow are published in bus order, although reading the node's status takes a moment. */
  private inOrder(workflowId: string, task: () => Promise<void> | void): void {
    const next = (this.statusChains.get(workflowId) ?? Promise.resolve()).then(task).catch((err: unknown) => {
      this.deps.log.error({ workflow_id: workflowId, err: { message: String((err as Error)?.message ?? err) } }, 'publishing a status change failed')
    })
    this.statusChains.set(workflowId, next)
    void next.finally(() => { if (this.statusChains.get(workflowId) === next) this.statusChains.delete(workflowId) })
  }

  private clusterStatus(e: BusEvents['cluster.status']): void {
    if (e.to !== 'error' || e.from === 'error') return
    const error = `cluster "${e.name}" is unreachable (${e.message}); statuses may be stale until it answers again`
    for (const [resourceId, open] of this.openResources) {
      if (open.clusterId === e.cluster_id) this.deps.hub.publish(resourceKey(resourceId), 'error', { error })
    }
  }

  private synced(e: BusEvents['workflow.synced']): void {
    this.inOrder(e.workflow_id, () => this.deps.hub.publish(workflowKey(e.workflow_id), 'workflow_sync', { nodes: e.nodes }))
  }
}
