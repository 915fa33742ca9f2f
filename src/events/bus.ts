// The in-process event bus: repositories and services announce what changed; watchers, the statistics
// keeper and the SSE hub listen. Typed so a listener cannot misread a payload.
import { EventEmitter } from 'eventemitter3'

export interface BusEvents {
  'workflow.created': { owner_id: string; workflow_id: string }
  'workflow.updated': { owner_id: string; workflow_id: string }
  'workflow.deleted': { owner_id: string; workflow_id: string }
  /** Watchers of the workflow's resources stop on this (spec: archive stops the watchers). */
  'workflow.archived': { owner_id: string; workflow_id: string }
  'workflow.status_changed': { owner_id: string; workflow_id: string; from: string; to: string }
  'version.created': { owner_id: string; workflow_id: string; version: number }
  'run.finished': { owner_id: string; workflow_id: string; run_id: string; status: string }
  'stats.updated': { owner_id: string }
  'cluster.changed': { owner_id: string; cluster_id: string }
  /** A cluster's connection status changed (health check, test, refresh or new credentials). */
  'cluster.status': { owner_id: string; cluster_id: string; name: string; from: string; to: string; message: string }
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
