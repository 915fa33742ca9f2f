// What other replicas' watch services must hear of (a run started on another replica for a cluster this one
// watches, a workflow archived there...) crosses replicas through the events collection, under a key no
// route can name, and comes out on `app.remoteBus` of every replica but the one that announced it.
import type { BusEvents, EventBus, EventName } from './bus.ts'
import type { HubLog } from './stream-hub.ts'
import { errorName, type LoggedEvent } from './db-stream-hub.ts'

/** Stream routes build `workflow:`, `resource:`, `build:`, `import:` and `pod-logs:` keys only. */
export const RELAY_KEY = 'internal:replica-bus'

export const RELAYED_EVENTS = [
  'run.started', 'run.finished', 'resources.changed', 'workflow.archived', 'workflow.deleted',
  'workflow.status_changed', 'cluster.changed', 'cluster.status', 'leases.released',
] as const satisfies readonly EventName[]

type Relayed = typeof RELAYED_EVENTS[number]
const relayed = new Set<string>(RELAYED_EVENTS)

export interface RelayHub {
  readonly origin: string
  publish(key: string, type: string, data: unknown): void
  tap(key: string, listener: (event: LoggedEvent) => void): () => void
}

export interface RelayDeps {
  bus: EventBus
  remoteBus: EventBus
  hub: RelayHub
  log?: HubLog
}

/** Starts relaying; the returned function stops it (before the hub closes). */
export function startReplicaRelay({ bus, remoteBus, hub, log }: RelayDeps): () => void {
  const offs = RELAYED_EVENTS.map((name) => bus.on(name, (payload) => hub.publish(RELAY_KEY, name, payload)))
  const untap = hub.tap(RELAY_KEY, (event) => {
    if (event.origin === hub.origin || !relayed.has(event.type)) return
    try {
      remoteBus.emit(event.type as Relayed, event.data as BusEvents[Relayed])
    } catch (err) {
      log?.warn({ event: event.type, error: errorName(err) }, 'a listener of another replica\'s event failed')
    }
  })
  return () => {
    for (const off of offs) off()
    untap()
  }
}
