// Two real apps in shared mode on one database, as two replicas: an event published on A's hub reaches a
// subscriber on B with the same id, a relayed bus event reaches B's remote bus, and the single-mode
// default still uses the memory hub.
import t from 'tap'
import { DatabaseStreamHub } from '../../src/events/db-stream-hub.ts'
import { MemoryStreamHub, type StreamEvent, type Subscription } from '../../src/events/stream-hub.ts'
import { startTestApp } from '../helpers/app.ts'

async function first(sub: Subscription): Promise<StreamEvent | undefined> {
  let timer: NodeJS.Timeout | undefined
  const bound = new Promise<undefined>((resolve) => { timer = setTimeout(() => resolve(undefined), 5000) })
  const next = sub[Symbol.asyncIterator]().next().then((r) => (r.done ? undefined : r.value))
  return Promise.race([next, bound]).finally(() => clearTimeout(timer))
}

t.test('an event published on replica A reaches a subscriber on replica B', async (t) => {
  const shared = { REPLICA_MODE: 'shared' as const, EVENT_POLL_MS: 20 }
  // A owns the database; teardowns run last-registered first, so B closes before A closes it.
  const a = await startTestApp(t, shared)
  const b = await startTestApp(t, shared, { database: a.database })
  t.ok(a.app.streams instanceof DatabaseStreamHub && b.app.streams instanceof DatabaseStreamHub)
  t.not(a.app.replica.id, b.app.replica.id)

  const onB = b.app.streams.subscribe('workflow:shared-1')
  const onA = a.app.streams.subscribe('workflow:shared-1')
  a.app.streams.publish('workflow:shared-1', 'node_update', { node_id: 'n1', status: { state: 'running' } })
  const [gotB, gotA] = await Promise.all([first(onB), first(onA)])
  t.same(gotB, gotA, 'same event, same id on both replicas')
  t.same(gotB?.data, { node_id: 'n1', status: { state: 'running' } })

  const remote = b.app.remoteBus.next('workflow.archived')
  a.app.bus.emit('workflow.archived', { owner_id: 'u1', workflow_id: 'w1' })
  t.same(await remote, { owner_id: 'u1', workflow_id: 'w1' }, "A's bus event on B's remote bus")
})

t.test('single mode keeps the memory hub', async (t) => {
  const { app } = await startTestApp(t)
  t.ok(app.streams instanceof MemoryStreamHub)
  t.equal(app.replica.shared, false)
})
