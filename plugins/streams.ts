// The SSE hub (app.streams) and the bus → hub translation of the workflow and resource streams. The hub
// closes in preClose, before the HTTP server stops accepting and waits for open connections, so open
// streams end instead of holding the shutdown until the grace period runs out; but after the services'
// preClose has finished or interrupted every run, so each run's final events reach its subscribers here
// and, in shared mode, the event log other replicas tail before any stream ends (API.md §14).
import fp from 'fastify-plugin'
import { MemoryStreamHub, type StreamHub } from '../src/events/stream-hub.ts'
import { DatabaseStreamHub } from '../src/events/db-stream-hub.ts'
import { startReplicaRelay } from '../src/events/replica-relay.ts'
import { WorkflowStreamPublisher, type NodeStatus } from '../src/services/workflow-stream.ts'
import { UserLimits } from '../src/services/user-limits.ts'
import { NewestWins } from '../src/events/newest-wins.ts'

declare module 'fastify' {
  interface FastifyInstance { streams: StreamHub; workflowStreams: WorkflowStreamPublisher; userLimits: UserLimits; notificationStreams: NewestWins }
}

/** How long shutdown waits for the runs' final stream events to be published (each takes a read or two). */
const PUBLISH_BOUND_MS = 2_000

async function bounded(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  await Promise.race([work, new Promise((resolve) => { timer = setTimeout(resolve, ms) })])
  clearTimeout(timer)
}

export default fp(async (app) => {
  const { config, services } = app
  const log = app.log.child({ component: 'streams' })
  // Shared mode: streams go through the events collection so every replica serves every stream (API.md §11).
  const dbHub = app.replica.shared
    ? new DatabaseStreamHub({
      db: app.db, origin: app.replica.id, pollMs: config.EVENT_POLL_MS,
      bufferSize: config.SSE_BUFFER_SIZE, replaySize: config.SSE_REPLAY_SIZE, log,
    })
    : null
  const hub: StreamHub = dbHub ?? new MemoryStreamHub({ bufferSize: config.SSE_BUFFER_SIZE, replaySize: config.SSE_REPLAY_SIZE, log })
  let stopRelay: (() => void) | null = null
  if (dbHub) {
    await dbHub.start()
    stopRelay = startReplicaRelay({ bus: app.bus, remoteBus: app.remoteBus, hub: dbHub, log })
  }
  const publisher = new WorkflowStreamPublisher({
    bus: app.bus, hub, log: app.log,
    run: (ownerId, workflowId, runId) => services.runs.get(ownerId, workflowId, runId).catch(() => null),
    nodeStatus: async (ownerId, workflowId, nodeId) => {
      const node = (await services.workflows.get(ownerId, workflowId)).nodes.find((n) => n.id === nodeId)
      const status = (node?.data as { _status?: unknown } | undefined)?._status
      if (!status || typeof status !== 'object' || typeof (status as { state?: unknown }).state !== 'string') return null
      // Written before `ready` was left out for kinds without one: the event has it as a string or not at all.
      const { ready, ...rest } = status as NodeStatus
      return typeof ready === 'string' ? status as NodeStatus : rest as NodeStatus
    },
    // What this replica derived itself is at least as fresh as the record (which the cluster's holder writes).
    tracked: async (ownerId, workflowId, nodeIds) => (await Promise.all(nodeIds.map((n) => services.resources.findForNode(ownerId, workflowId, n))))
      .flat().map((r) => ({ ...r, ...services.resourceWatch.liveStatus(r.id) })),
  })
  app.decorate('streams', hub)
  // Per-user caps on open streams, terminals and followed logs (src/events/sse.ts, the terminal and log routes).
  app.decorate('userLimits', new UserLimits({
    streams: config.MAX_STREAMS_PER_USER, terminals: config.MAX_TERMINALS_PER_USER, log_follows: config.MAX_LOG_FOLLOWS_PER_USER,
  }))
  // A user's notification streams on this replica, both prefixes together: a new one beyond the limit ends
  // the oldest with a final `replaced` event rather than being refused (API.md §14).
  app.decorate('notificationStreams', new NewestWins(config.MAX_NOTIFICATION_STREAMS_PER_USER, {
    type: 'replaced',
    data: { reason: 'a newer notification stream of this user opened', limit: config.MAX_NOTIFICATION_STREAMS_PER_USER },
  }))
  app.decorate('workflowStreams', publisher)
  app.addHook('preClose', async () => {
    // The runs' final bus events are out (the services' preClose ran first): their stream events are
    // published (a read or two each), then nothing more is taken from the bus.
    publisher.stop()
    await bounded(publisher.idle(), PUBLISH_BOUND_MS)
    stopRelay?.()
    // What this replica published last is written while the database client is open (the services' and the
    // database's onClose hooks run after every preClose) and delivered here, then the streams end once
    // their subscribers have read it.
    if (dbHub) await dbHub.shutdown(2_000)
    else hub.close()
  })
}, { name: 'streams', dependencies: ['config', 'database', 'events', 'services'] })
