// The pods of followed workloads as tracked resources (API.md §10): kind Pod, `parent_id` the workload's
// record, same owner, workflow and node. They hang on the watchers' pod streams (one per cluster and
// namespace, opened for the workloads' status anyway), never on polling.
//
// Work is per scope (cluster, namespace): any pod event, or a change of the workloads followed there, marks
// the scope due; one flush at a time brings its records in line with the stream's cache, so a relist's burst
// of events costs one flush. Each pod goes to one parent per owner: the first selecting workload by
// PARENT_RANK (a Deployment before a ReplicaSet it controls, a CronJob before its Job), then by record id.
//
// Write load: what each owner's records show is kept in memory as a signature (status, the message's
// condition as messageKey reads it, ready, counters, containers, labels, parent); only a scope whose
// signatures moved reaches the database, and there `observe` writes only the records whose fields changed.
// A crash loop thus writes its pod once per restart (the restart count is shown), not at every event.
//
// Live status: a record whose status, ready count, counters or message condition a flush rewrote is
// announced as `pod.status` once the write landed (its own resource stream shows it). Not `resource.status`:
// the node, the workflow stream and notifications follow the workload, whose status already says what its
// pods mean.
//
// Gone: a pod that leaves the cache while its workload is followed, or whose workload was deleted, is
// marked `deleted` (as any resource the watch sees go; the record expires an hour later, see the
// repository). A workload that stops being followed while it exists (workflow archived or deleted, cluster
// out of reach) has its pod records removed (`touch`'s `unfollowed`): nothing would keep them current.
import type { KubeObject } from '../manifests/types.ts'
import { deriveStatus, messageKey } from '../kube/status/index.ts'
import { matchesSelector, podSelectorOf, type LabelSelector } from '../kube/status/selector.ts'
import type { ObservedResource, ObservedStatus, ResourceDoc, ResourceRepository } from '../repositories/resources.ts'
import type { EventBus } from '../events/bus.ts'

/** Kinds whose pods become records, best parent first. */
export const PARENT_RANK = ['CronJob', 'Deployment', 'StatefulSet', 'DaemonSet', 'Job', 'ReplicaSet'] as const
export const POD_PARENT_KINDS: ReadonlySet<string> = new Set(PARENT_RANK)

export interface PodParent {
  id: string; owner_id: string; workflow_id: string; node_id: string; cluster_id: string; cluster: string
  kind: string; name: string; namespace: string
  /** The workload as the watch cache holds it. */
  object: KubeObject
}

/** What a scope looks like now; null while its pod stream has not listed. */
export interface ScopeView {
  pods: KubeObject[]
  parents: PodParent[]
  /** Owners with a followed workload whose own stream has not listed yet: left as they are this time. */
  unsettledOwners: Set<string>
  /** owner\npod name of Pods the owner tracks in their own right (a run applied them): not anyone's child. */
  ownPods: Set<string>
}

export interface PodRecordsDeps {
  resources: Pick<ResourceRepository, 'observe' | 'removePods'>
  log?: { error(obj: object, msg: string): void }
  /** Where a record's change of shown status is announced (`pod.status`). */
  bus?: Pick<EventBus, 'emit'>
  /** Among replicas: whether this one holds the cluster's lease (else its records are not its to write), and the lease's epoch (fencing). */
  owns?: (clusterId: string) => boolean
  epoch?: (clusterId: string) => number | null
}

interface Scope {
  clusterId: string
  namespace: string
  view: () => ScopeView | null
  due: boolean
  running: Promise<void> | null
  /** owner → pod name → signature of what its record shows. */
  known: Map<string, Map<string, string>>
  /** Unfollowed workloads whose pod records are to be removed before the next flush. */
  removals: Array<{ id: string; owner_id: string }>
}

/** The pods a workload runs: its selector's, or for a CronJob its job template's labels. */
export function parentSelector(kind: string, object: KubeObject): LabelSelector | null {
  if (kind === 'CronJob') {
    const labels = (object.spec as { jobTemplate?: { spec?: { template?: { metadata?: { labels?: Record<string, string> } } } } } | undefined)?.jobTemplate?.spec?.template?.metadata?.labels
    return labels && Object.keys(labels).length ? { matchLabels: labels } : null
  }
  return podSelectorOf(kind, object.spec as Record<string, unknown> | undefined)
}

/** A pod's (regular) container names, in its spec's order. */
export const containerNames = (pod: KubeObject): string[] => {
  const list = (pod.spec as { containers?: Array<{ name?: unknown }> } | undefined)?.containers
  return Array.isArray(list) ? list.map((c) => c?.name).filter((n): n is string => typeof n === 'string') : []
}

function record(pod: KubeObject, parent: PodParent): ObservedResource {
  const d = deriveStatus(pod)
  const meta = pod.metadata as KubeObject['metadata'] & { uid?: string }
  return {
    namespace: parent.namespace, kind: 'Pod', name: meta.name, api_version: 'v1', uid: meta.uid ?? null, labels: meta.labels ?? {},
    workflow_id: parent.workflow_id, node_id: parent.node_id, cluster: parent.cluster, parent_id: parent.id, containers: containerNames(pod),
    status: d.status, status_message: d.message, ready: d.ready, counters: d.counters,
  }
}

const signature = (r: ObservedResource): string => JSON.stringify([
  r.parent_id, r.workflow_id, r.node_id, r.uid, r.status, messageKey(r.status_message), r.ready,
  Object.entries(r.counters).sort(), r.containers, Object.entries(r.labels).sort(),
])

/** Whether a rewrite changes what the record's status shows (a message's ticking numbers do not: messageKey). */
const statusMoved = (doc: ResourceDoc, next: ObservedStatus): boolean => doc.status !== next.status || doc.ready !== next.ready
  || messageKey(doc.status_message) !== messageKey(next.status_message)
  || JSON.stringify(Object.entries(doc.counters ?? {}).sort()) !== JSON.stringify(Object.entries(next.counters ?? {}).sort())

const scopeKey = (clusterId: string, namespace: string) => `${clusterId}\n${namespace}`

export class PodRecords {
  private readonly scopes = new Map<string, Scope>()
  private closed = false
  /** Owner flushes that reached the database, and those whose records showed nothing new (tests, the report). */
  readonly stats = { observed: 0, skipped: 0 }

  constructor(private readonly deps: PodRecordsDeps) {}

  /**
   * The scope changed (a pod event, a workload followed or gone): its records are brought in line soon.
   * `unfollowed`: workloads no longer followed while they still exist; their pod records are removed first.
   */
  touch(clusterId: string, namespace: string, view: () => ScopeView | null, unfollowed: Array<{ id: string; owner_id: string }> = []): void {
    if (this.closed) return
    const k = scopeKey(clusterId, namespace)
    let s = this.scopes.get(k)
    if (!s) { s = { clusterId, namespace, view, due: false, running: null, known: new Map(), removals: [] }; this.scopes.set(k, s) }
    s.view = view
    s.removals.push(...unfollowed)
    s.due = true
    if (s.running) return
    const scope = s
    // After the current burst of events (a relist dispatches them all in one go).
    scope.running = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.drain(scope))
  }

  /** Resolves when every scope has flushed what it was told (tests, shutdown). */
  async idle(): Promise<void> {
    for (;;) {
      const running = [...this.scopes.values()].map((s) => s.running).filter((p): p is Promise<void> => p !== null)
      if (!running.length) return
      await Promise.allSettled(running)
    }
  }

  close(): void { this.closed = true }

  /** The cluster's lease was lost: what this replica knew of its records may be outdated when it comes back. */
  forget(clusterId: string): void {
    for (const s of this.scopes.values()) if (s.clusterId === clusterId) s.known.clear()
  }

  private async drain(s: Scope): Promise<void> {
    try {
      while (s.due && !this.closed) {
        s.due = false
        await this.remove(s)
        await this.flush(s)
      }
    } finally {
      s.running = null
      if (s.due && !this.closed) this.touch(s.clusterId, s.namespace, s.view)
      else if (!s.known.size && !s.removals.length) this.scopes.delete(scopeKey(s.clusterId, s.namespace))
    }
  }

  private async remove(s: Scope): Promise<void> {
    const byOwner = new Map<string, string[]>()
    for (const p of s.removals.splice(0)) byOwner.set(p.owner_id, [...(byOwner.get(p.owner_id) ?? []), p.id])
    for (const [owner, ids] of byOwner) {
      try {
        await this.deps.resources.removePods(owner, { parents: ids })
      } catch (err) {
        this.deps.log?.error({ err: { message: String((err as Error)?.message ?? err) } }, 'pods: removing the records of an unfollowed workload failed')
      }
      // Its next flush compares with the database again.
      s.known.delete(owner)
    }
  }

  private async flush(s: Scope): Promise<void> {
    if (this.deps.owns && !this.deps.owns(s.clusterId)) return
    // Taken now, while held: a later write with it is refused by the records if a newer holder wrote them.
    const epoch = this.deps.epoch?.(s.clusterId) ?? null
    const view = s.view()
    if (!view) return
    const desired = this.assign(view)
    const followed = new Set(view.parents.map((p) => p.owner_id))
    const owners = new Set([...followed, ...s.known.keys()])
    for (const owner of owners) {
      if (view.unsettledOwners.has(owner)) continue
      const records = desired.get(owner) ?? new Map<string, ObservedResource>()
      const known = s.known.get(owner)
      const signatures = new Map([...records].map(([name, r]) => [name, signature(r)]))
      const same = known !== undefined && known.size === signatures.size && [...signatures].every(([name, sig]) => known.get(name) === sig)
      if (same) { this.stats.skipped++; continue }
      const moved: Array<{ doc: ResourceDoc; next: ObservedStatus }> = []
      try {
        // Every child pod record of the owner in this namespace not observed now is gone.
        await this.deps.resources.observe(owner, s.clusterId, [...records.values()], {
          scope: { namespace: s.namespace, kind: 'Pod', parent_id: { $type: 'string' } }, onlyChanged: true, missingAreDeleted: () => true, epoch,
          rewritten: (doc, next) => { if (statusMoved(doc, next)) moved.push({ doc, next }) },
        })
        this.stats.observed++
        this.announce(moved)
        if (followed.has(owner)) s.known.set(owner, signatures)
        else s.known.delete(owner)
      } catch (err) {
        this.deps.log?.error({ err: { message: String((err as Error)?.message ?? err) } }, 'pods: storing the pod records failed')
        // Compared with the database again on the next event.
        s.known.delete(owner)
      }
    }
  }

  private announce(moved: Array<{ doc: ResourceDoc; next: ObservedStatus }>): void {
    for (const { doc, next } of moved) {
      try {
        this.deps.bus?.emit('pod.status', {
          owner_id: doc.owner_id, workflow_id: doc.workflow_id, resource_id: doc._id, node_id: doc.node_id, name: doc.name, namespace: doc.namespace,
          old_status: doc.status, new_status: next.status, message: next.status_message, ready: next.ready, counters: next.counters ?? {},
        })
      } catch (err) {
        this.deps.log?.error({ resource_id: doc._id, err: { message: String((err as Error)?.message ?? err) } }, 'pods: a pod.status listener failed')
      }
    }
  }

  /** Each owner's pods, each with its parent (see the head comment). */
  private assign(view: ScopeView): Map<string, Map<string, ObservedResource>> {
    const parents = view.parents
      .map((p) => ({ p, sel: parentSelector(p.kind, p.object), rank: PARENT_RANK.indexOf(p.kind as typeof PARENT_RANK[number]) }))
      .filter((x): x is { p: PodParent; sel: LabelSelector; rank: number } => x.sel !== null && x.rank >= 0)
      .sort((a, b) => a.rank - b.rank || a.p.id.localeCompare(b.p.id))
    const out = new Map<string, Map<string, ObservedResource>>()
    for (const pod of view.pods) {
      const taken = new Set<string>()
      for (const { p, sel } of parents) {
        if (taken.has(p.owner_id) || view.ownPods.has(`${p.owner_id}\n${pod.metadata.name}`)) continue
        if (!matchesSelector(pod.metadata.labels, sel)) continue
        taken.add(p.owner_id)
        let mine = out.get(p.owner_id)
        if (!mine) { mine = new Map(); out.set(p.owner_id, mine) }
        mine.set(pod.metadata.name, record(pod, p))
      }
    }
    return out
  }
}
