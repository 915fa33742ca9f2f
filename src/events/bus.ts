// The in-process event bus: repositories and services announce what changed; watchers, the statistics
// keeper and the SSE hub listen. Typed so a listener cannot misread a payload.
import { EventEmitter } from 'eventemitter3'

/** AppliedObject of src/kube/deploy.ts without `live`; spelled out here so the bus does not import the kube layer. */
export interface RunObjectEvent {
  node_id: string; api_version: string; kind: string; name: string; namespace: string | null
  action: 'created' | 'configured' | 'unchanged' | 'failed' | 'skipped'; message: string
  uid: string | null; resource_version: string | null; labels: Record<string, string>
  diff?: { changed: Array<{ path: string; old?: unknown; new?: unknown }>; added: Array<{ path: string; old?: unknown; new?: unknown }>; removed: Array<{ path: string; old?: unknown; new?: unknown }> }
}

export interface BusEvents {
  'workflow.created': { owner_id: string; workflow_id: string }
  'workflow.updated': { owner_id: string; workflow_id: string }
  'workflow.deleted': { owner_id: string; workflow_id: string }
  /** Watchers of the workflow's resources stop on this (spec: archive stops the watchers). */
  'workflow.archived': { owner_id: string; workflow_id: string }
  'workflow.status_changed': { owner_id: string; workflow_id: string; from: string; to: string }
  'version.created': { owner_id: string; workflow_id: string; version: number }
  'run.started': { owner_id: string; workflow_id: string; run_id: string }
  /** One object of a run finished applying (its result without the live object). */
  'run.object': { owner_id: string; workflow_id: string; run_id: string; result: RunObjectEvent }
  'run.finished': { owner_id: string; workflow_id: string; run_id: string; status: string }
  /** Tracked resources of this owner were created, updated or marked deleted. */
  'resources.changed': { owner_id: string }
  /** A watched resource's status (or ready count) changed in the cluster; published once per change. */
  'resource.status': {
    owner_id: string; workflow_id: string; resource_id: string; node_id: string; kind: string; name: string; namespace: string | null
    old_status: string; new_status: string; message: string; counters: Record<string, number | string | null>
  }
  /**
   * A workload's pod record (kind Pod, parent_id) changed what it shows. Only its own resource stream hears
   * of it: the node, the workflow stream and notifications follow the workload (`resource.status`).
   */
  'pod.status': {
    owner_id: string; workflow_id: string; resource_id: string; node_id: string; name: string; namespace: string | null
    old_status: string; new_status: string; message: string; ready: string | null; counters: Record<string, number | string | null>
  }
  /** A workflow's watches finished their initial list (start or resync): every watched node's status. */
  'workflow.synced': { owner_id: string; workflow_id: string; nodes: Array<{ node_id: string; status: unknown }> }
  'stats.updated': { owner_id: string }
  /** A build was created or changed status (the dashboard's `builds` statistic counts them). */
  'build.changed': { owner_id: string; build_id: string; status: string }
  /** An import session ended (analysis done, failed, or interrupted by a restart). */
  'import.finished': { owner_id: string; import_id: string; status: 'completed' | 'failed'; error: string | null }
  /** A notification was stored for its user (src/services/notifications/). */
  'notification.created': { owner_id: string; notification_id: string; type: string }
  'cluster.changed': { owner_id: string; cluster_id: string }
  /**
   * Live objects of a deployed node no longer match what its last run applied (API.md §12): published once
   * when a node becomes drifted (or its drifted fields change), by the replica watching the cluster.
   */
  'drift.detected': { owner_id: string; workflow_id: string; node_id: string; fields: string[] }
  /** A drifted node matches what was applied again (a sync, a rollback, or someone put it back). */
  'drift.resolved': { owner_id: string; workflow_id: string; node_id: string }
  /** A cluster's connection status changed (health check, test, refresh or new credentials). */
  'cluster.status': { owner_id: string; cluster_id: string; name: string; from: string; to: string; message: string }
  /** A replica handed its cluster leases back (shutdown): the others take them now rather than at their next renewal. */
  'leases.released': { replica_id: string }
}

export type EventName = keyof BusEvents

export class EventBus {
  private readonly emitter = new EventEmitter()

  emit<E extends EventName>(event: E, payload: BusEvents[E]): void {
    this.emitter.emit(event, payload)
  }

  on<E extends EventName>(event: E, listener: (payload: BusEvents[E]) => void): () => void {
    this.emitter.on(event, listener as (p: unknown) => void)
    return () => { this.emitter.off(event, listener as (p: unknown) => void) }
  }

  /** Resolves with the next payload of `event` that matches, so tests await events instead of sleeping. */
  next<E extends EventName>(event: E, match: (payload: BusEvents[E]) => boolean = () => true): Promise<BusEvents[E]> {
    return new Promise((resolve) => {
      const off = this.on(event, (payload) => { if (match(payload)) { off(); resolve(payload) } })
    })
  }

  removeAll(): void {
    this.emitter.removeAllListeners()
  }
}
