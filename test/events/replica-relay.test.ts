// The relay: what the watch service must hear of from other replicas crosses them through the events
// collection and comes out on the remote bus of every replica but the one that announced it.
import t from 'tap'
import { DatabaseStreamHub } from '../../src/events/db-stream-hub.ts'
import { EventBus, type BusEvents } from '../../src/events/bus.ts'
import { RELAY_KEY, startReplicaRelay } from '../../src/events/replica-relay.ts'
import { EVENTS_COLLECTION } from '../../src/replicas/event-log.ts'
import { startTestDatabase } from '../helpers/database.ts'

t.test("a replica re-emits other replicas' relayed bus events on its remote bus, never its own", async (t) => {
  const database = await startTestDatabase(t)
  const replicas = await Promise.all(['r-a', 'r-b', 'r-c'].map(async (origin) => {
    const hub = new DatabaseStreamHub({ db: database.db, origin, pollMs: 20 })
    await hub.start()
    const bus = new EventBus()
    const remoteBus = new EventBus()
    const heard: Array<[string, unknown]> = []
    for (const name of ['run.started', 'run.object', 'cluster.status'] as const) remoteBus.on(name, (p) => { heard.push([name, p]) })
    const stop = startReplicaRelay({ bus, remoteBus, hub })
    t.teardown(async () => { stop(); await hub.shutdown(1000) })
    return { hub, bus, remoteBus, heard }
  }))
  const [a, b, c] = replicas
  const ownDelivered = new Promise<void>((resolve) => { const off = a.hub.tap(RELAY_KEY, (e) => { if (e.type === 'cluster.status') { off(); resolve() } }) })
  const started: BusEvents['run.started'] = { owner_id: 'u1', workflow_id: 'w1', run_id: 'run1' }
  const status: BusEvents['cluster.status'] = { owner_id: 'u1', cluster_id: 'c1', name: 'prod', from: 'connected', to: 'error', message: 'unreachable' }
  const onB = b.remoteBus.next('cluster.status')
  const onC = c.remoteBus.next('cluster.status')
  a.bus.emit('run.started', started)
  // Not one the watch service needs: stays in its replica.
  a.bus.emit('run.object', { owner_id: 'u1', workflow_id: 'w1', run_id: 'run1', result: { node_id: 'n', api_version: 'v1', kind: 'ConfigMap', name: 'x', namespace: 'd', action: 'created', message: '', uid: null, resource_version: null, labels: {} } })
  a.bus.emit('cluster.status', status)
  t.same(await onB, status)
  t.same(await onC, status)
  await ownDelivered
  t.same(b.heard, [['run.started', started], ['cluster.status', status]], 'in the order announced, run.object left out')
  t.same(c.heard, b.heard)
  t.same(a.heard, [], 'the announcing replica hears nothing back')
  t.equal(await database.db.collection(EVENTS_COLLECTION).countDocuments({ key: RELAY_KEY, type: 'run.object' }), 0)

  // The other way round, and the local bus of the receiver is left alone (no echo into its own relay).
  const fromC = b.remoteBus.next('run.started')
  const localOnB: unknown[] = []
  b.bus.on('run.started', (p) => { localOnB.push(p) })
  c.bus.emit('run.started', { owner_id: 'u2', workflow_id: 'w2', run_id: 'run2' })
  t.same(await fromC, { owner_id: 'u2', workflow_id: 'w2', run_id: 'run2' })
  t.same(localOnB, [])
})

t.test('a failing remote listener is logged by name and does not stop the tail', async (t) => {
  const database = await startTestDatabase(t)
  const warnings: string[] = []
  const log = { warn: (obj: object, msg: string) => { warnings.push(`${msg} ${JSON.stringify(obj)}`) } }
  const mk = async (origin: string) => {
    const hub = new DatabaseStreamHub({ db: database.db, origin, pollMs: 20, log })
    await hub.start()
    const bus = new EventBus()
    const remoteBus = new EventBus()
    const stop = startReplicaRelay({ bus, remoteBus, hub, log })
    t.teardown(async () => { stop(); await hub.shutdown(1000) })
    return { hub, bus, remoteBus }
  }
  const a = await mk('a')
  const b = await mk('b')
  b.remoteBus.on('cluster.changed', () => { throw new Error('listener broke with secret text') })
  const next = b.remoteBus.next('workflow.archived')
  a.bus.emit('cluster.changed', { owner_id: 'u', cluster_id: 'c' })
  a.bus.emit('workflow.archived', { owner_id: 'u', workflow_id: 'w' })
  t.same(await next, { owner_id: 'u', workflow_id: 'w' })
  t.ok(warnings.some((w) => w.includes('cluster.changed')))
  t.notMatch(warnings.join('\n'), /secret text/)
})
