// The notification service on its own bus, clock and hub, with the real repository on the test database:
// which bus events become which notifications, the resource_failed throttle (at most one per resource per
// 10 minutes, proven with an injected clock), dry runs and a new cluster's first check staying silent,
// and each notification published on the user's stream key.
import t from 'tap'
import { startTestApp } from '../helpers/app.ts'
import { EventBus, type BusEvents } from '../../src/events/bus.ts'
import { MemoryStreamHub, type StreamEvent } from '../../src/events/stream-hub.ts'
import { NotificationRepository } from '../../src/repositories/notifications.ts'
import { NotificationService, notificationsKey, RESOURCE_FAILED_THROTTLE_MS, type RunSummary } from '../../src/services/notifications/index.ts'
import { newId } from '../../src/repositories/ids.ts'

const { app } = await startTestApp(t)
const repo = new NotificationRepository(app.db)

function harness(t: { teardown(fn: () => unknown): void }, runs: Record<string, RunSummary> = {}) {
  const bus = new EventBus()
  const hub = new MemoryStreamHub({})
  // Real time: the TTL index (30 days) removes anything dated further back.
  let clock = Date.now()
  const errors: object[] = []
  const service = new NotificationService({
    notifications: repo, bus, hub: () => hub, log: { error: (o) => { errors.push(o) } }, now: () => clock,
    run: async (_o, _w, runId) => runs[runId] ?? null,
  })
  t.teardown(async () => { await service.close(); hub.close() })
  const owner = newId()
  return {
    bus, hub, service, owner, errors,
    advance(ms: number) { clock += ms },
    async emit<E extends keyof BusEvents>(event: E, payload: BusEvents[E]) { bus.emit(event, payload); await service.idle() },
    async all() { return (await repo.list(owner, { limit: 100 })).items },
  }
}

const failed = (owner: string, resourceId: string, old_status = 'running'): BusEvents['resource.status'] => ({
  owner_id: owner, workflow_id: 'w1', resource_id: resourceId, node_id: 'n-api', kind: 'Deployment', name: 'api', namespace: 'shop',
  old_status, new_status: 'failed', message: 'pod api-1: CrashLoopBackOff', counters: {},
})

t.test('a resource that fails again within 10 minutes is notified once; after the window, again', async (t) => {
  const h = harness(t)
  const resource = newId()
  await h.emit('resource.status', failed(h.owner, resource))
  await h.emit('resource.status', { ...failed(h.owner, resource, 'failed'), new_status: 'running' })
  h.advance(RESOURCE_FAILED_THROTTLE_MS - 1)
  await h.emit('resource.status', failed(h.owner, resource))
  let all = await h.all()
  t.equal(all.length, 1, 'one notification within the window')
  t.match(all[0], { type: 'resource_failed', title: 'Deployment api in shop failed', message: 'pod api-1: CrashLoopBackOff', link: `/v1/api/resources/${resource}`, read: false })

  const other = newId()
  await h.emit('resource.status', failed(h.owner, other))
  t.equal((await h.all()).length, 2, 'another resource is not held back by the first one\'s window')

  h.advance(1)
  await h.emit('resource.status', failed(h.owner, resource))
  all = await h.all()
  t.equal(all.filter((n) => n.link.endsWith(resource)).length, 2, 'a failure 10 minutes after the last notification is notified')
  t.same(h.errors, [])
})

t.test('a status change that is not into failed (or failed → failed) notifies nothing', async (t) => {
  const h = harness(t)
  await h.emit('resource.status', { ...failed(h.owner, newId()), new_status: 'warning' })
  await h.emit('resource.status', failed(h.owner, newId(), 'failed'))
  t.same(await h.all(), [])
})

t.test('runs: completed and failed notify with a link to the run; a dry run and a vanished run do not', async (t) => {
  const h = harness(t, {
    r1: { dry_run: false, error: null, workflow_name: 'shop' },
    r2: { dry_run: false, error: 'node n-api: CrashLoopBackOff', workflow_name: 'shop' },
    r3: { dry_run: true, error: null, workflow_name: 'shop' },
  })
  await h.emit('run.finished', { owner_id: h.owner, workflow_id: 'w1', run_id: 'r1', status: 'completed' })
  await h.emit('run.finished', { owner_id: h.owner, workflow_id: 'w1', run_id: 'r2', status: 'failed' })
  await h.emit('run.finished', { owner_id: h.owner, workflow_id: 'w1', run_id: 'r3', status: 'completed' })
  await h.emit('run.finished', { owner_id: h.owner, workflow_id: 'w1', run_id: 'gone', status: 'failed' })
  const all = await h.all()
  t.equal(all.length, 2)
  t.match(all.find((n) => n.type === 'run_completed'), { title: 'Run of shop completed', link: '/v1/api/workflows/w1/runs/r1' })
  t.match(all.find((n) => n.type === 'run_failed'), { title: 'Run of shop failed', message: 'node n-api: CrashLoopBackOff', link: '/v1/api/workflows/w1/runs/r2' })
})

t.test('builds notify on completed and failed only; imports on their end', async (t) => {
  const h = harness(t)
  for (const status of ['pending', 'cloning', 'building', 'pushing', 'cancelled', 'completed']) await h.emit('build.changed', { owner_id: h.owner, build_id: 'b1', status })
  await h.emit('build.changed', { owner_id: h.owner, build_id: 'b2', status: 'failed' })
  await h.emit('import.finished', { owner_id: h.owner, import_id: 'i1', status: 'completed', error: null })
  await h.emit('import.finished', { owner_id: h.owner, import_id: 'i2', status: 'failed', error: 'line 3: not YAML' })
  const byType = Object.fromEntries((await h.all()).map((n) => [n.type, n]))
  t.same(Object.keys(byType).sort(), ['build_completed', 'build_failed', 'import_completed', 'import_failed'])
  t.equal(byType.build_completed.link, '/v1/api/builds/b1')
  t.equal(byType.build_failed.link, '/v1/api/builds/b2')
  t.equal(byType.import_completed.link, '/v1/api/import/i1')
  t.match(byType.import_failed, { link: '/v1/api/import/i2', message: 'line 3: not YAML' })
})

t.test('clusters: going unreachable and coming back notify; a new cluster\'s first good check does not', async (t) => {
  const h = harness(t)
  const base = { owner_id: h.owner, cluster_id: 'c1', name: 'prod' }
  await h.emit('cluster.status', { ...base, from: 'unknown', to: 'connected', message: 'ok' })
  await h.emit('cluster.status', { ...base, from: 'connected', to: 'error', message: 'connect ECONNREFUSED' })
  await h.emit('cluster.status', { ...base, from: 'error', to: 'connected', message: 'ok' })
  const all = await h.all()
  t.same(all.map((n) => n.title), ['Cluster prod is reachable again', 'Cluster prod is unreachable'], 'newest first')
  t.ok(all.every((n) => n.type === 'cluster_status' && n.link === '/v1/api/clusters/prod'))
})

t.test('each notification is published on notifications:<user id>, and read marks publish the unread count', async (t) => {
  const h = harness(t)
  const sub = h.hub.subscribe(notificationsKey(h.owner))
  t.teardown(() => sub.close())
  const it = sub[Symbol.asyncIterator]()
  await h.emit('build.changed', { owner_id: h.owner, build_id: 'b1', status: 'completed' })
  const first = (await it.next()).value as StreamEvent
  t.equal(first.type, 'notification')
  const stored = (await h.all())[0]
  t.same(first.data, stored, 'the event is the notification as the list returns it')
  await h.service.markRead(h.owner, stored.id)
  t.same(((await it.next()).value as StreamEvent), { id: 2, type: 'metadata', data: { unread_count: 0 } })
  const refused = await h.service.markRead(newId(), stored.id).then(() => null, (err: unknown) => err)
  t.match(refused, { statusCode: 404, message: 'notification not found' }, 'another owner cannot mark it')
})

t.test('a failing write is logged without its text reaching anyone, and the next event is still handled', async (t) => {
  const h = harness(t)
  const broken = new NotificationService({
    notifications: { create: async () => { throw new Error('E11000 driver text') } } as unknown as NotificationRepository,
    bus: h.bus, hub: () => h.hub, log: { error: (o) => { h.errors.push(o) } }, run: async () => null,
  })
  t.teardown(() => broken.close())
  h.bus.emit('build.changed', { owner_id: h.owner, build_id: 'b9', status: 'failed' })
  await Promise.all([broken.idle(), h.service.idle()])
  t.equal(h.errors.length, 1, 'the failure is logged once')
  t.equal((await h.all()).length, 1, 'the working service recorded its own')
})
