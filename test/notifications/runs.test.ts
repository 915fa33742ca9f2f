// Notifications from real work on the simulator: a run that completes and one that fails notify with a
// link to the run (a dry run does not); a crash-looping Deployment notifies resource_failed once, and not
// again when it fails anew within the 10-minute window; a cluster going unreachable and coming back
// notifies; a compose import notifies its end. Every wait is on an event, bounded.
import t from 'tap'
import { runFixture, node } from '../runs/fixture.ts'
import type { BusEvents } from '../../src/events/bus.ts'
import type { Notification } from '../../src/repositories/notifications.ts'
import { nextBusEvent } from '../helpers/bus.ts'

const f = await runFixture(t, { RUN_READY_TIMEOUT_MS: 30_000 }, { timing: { podStartMs: 200, podReadyMs: 200, crashBackoffMs: 500 } })
t.setTimeout(120_000)
const { app, owner, call } = f

const next = <E extends keyof BusEvents>(event: E, what: string, pred: (e: BusEvents[E]) => boolean, ms?: number) => nextBusEvent(app, event, what, pred, ms)
const notified = (type: string) => next('notification.created', type, (e) => e.owner_id === owner.user.id && e.type === type)

async function all(): Promise<Notification[]> {
  await app.services.notifications.idle()
  return (await call(owner, 'GET', '/v1/api/notifications?limit=100')).body.notifications
}

const deployment = (id: string, name: string, namespace: string, image: string) => node(id, 'deployment', { name, namespace, image, port: 8080, replicas: 1 })

async function startRun(workflowId: string, body: object = {}): Promise<string> {
  const res = await call(owner, 'POST', `/v1/api/workflows/${workflowId}/run`, body)
  if (res.status !== 200 && res.status !== 202) throw new Error(`run: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body.id as string
}

t.test('a run that completes notifies run_completed with a link to the run; a dry run notifies nothing', async (t) => {
  const wf = await f.workflow({ nodes: [deployment('n-web', 'web', 'ok', 'nginx:1.27')], edges: [] }, 'good')
  const dryDone = next('run.finished', 'the dry run', (e) => e.workflow_id === wf)
  await startRun(wf, { dry_run: true })
  await dryDone
  t.same((await all()).filter((n) => n.link.startsWith(`/v1/api/workflows/${wf}/`)), [], 'the dry run left no notification')

  const completed = notified('run_completed')
  const runId = await startRun(wf)
  await completed
  const n = (await all()).find((x) => x.type === 'run_completed')!
  t.match(n, { title: 'Run of good completed', link: `/v1/api/workflows/${wf}/runs/${runId}`, read: false })
  t.equal((await call(owner, 'GET', n.link)).status, 200, 'the link is the run')
})

t.test('a crash-looping Deployment: run_failed for the run, one resource_failed, none again within 10 minutes', async (t) => {
  const wf = await f.workflow({ nodes: [deployment('n-bad', 'bad', 'loop', 'example/app-crashloop:1')], edges: [] }, 'loop')
  const runFailed = notified('run_failed')
  const resourceFailed = notified('resource_failed')
  const runId = await startRun(wf)
  await Promise.all([runFailed, resourceFailed])
  let list = await all()
  const run = list.find((n) => n.type === 'run_failed')!
  t.match(run, { title: 'Run of loop failed', link: `/v1/api/workflows/${wf}/runs/${runId}` })
  t.match(run.message, /objects failed: Deployment bad/, 'with the run\'s error')
  const failed = list.filter((n) => n.type === 'resource_failed')
  t.equal(failed.length, 1, 'one resource_failed')
  t.match(failed[0], { title: 'Deployment bad in loop failed', message: /CrashLoopBackOff/ })
  const resourceId = failed[0].link.split('/').pop()!
  t.match((await call(owner, 'GET', failed[0].link)).body, { id: resourceId, name: 'bad', kind: 'Deployment', status: 'failed' }, 'the link is the tracked resource')

  // Fixed, then broken again: a second failure of the same resource, well within 10 minutes.
  const running = next('resource.status', 'bad running', (e) => e.resource_id === resourceId && e.new_status === 'running')
  await f.kubectl('set', 'image', 'deployment/bad', '-n', 'loop', 'bad=nginx:1.27')
  await running
  const again = next('resource.status', 'bad failed again', (e) => e.resource_id === resourceId && e.new_status === 'failed')
  await f.kubectl('set', 'image', 'deployment/bad', '-n', 'loop', 'bad=example/app-crashloop:2')
  await again
  list = await all()
  t.equal(list.filter((n) => n.link === failed[0].link).length, 1, 'the second failure within the window is not notified')
})

t.test('a cluster that becomes unreachable and comes back notifies cluster_status both times', async (t) => {
  const down = notified('cluster_status')
  await f.sim.faults.stop()
  t.teardown(() => f.sim.faults.restart().catch(() => undefined))
  await call(owner, 'POST', '/v1/api/clusters/sim/test')
  await down
  const up = notified('cluster_status')
  await f.sim.faults.restart()
  t.equal((await call(owner, 'POST', '/v1/api/clusters/sim/test')).status, 200)
  await up
  const list = (await all()).filter((n) => n.type === 'cluster_status')
  t.same(list.map((n) => n.title), ['Cluster sim is reachable again', 'Cluster sim is unreachable'])
  t.ok(list.every((n) => n.link === '/v1/api/clusters/sim'))
  t.equal((await call(owner, 'GET', list[0].link)).status, 200, 'the link is the cluster')
})

t.test('a compose import notifies import_completed; a broken one import_failed', async (t) => {
  const completed = notified('import_completed')
  const ok = await call(owner, 'POST', '/v1/api/import/analyze', { source: 'compose', content: 'services:\n  web:\n    image: nginx:1.27\n    ports: ["8080:80"]\n' })
  t.equal(ok.status, 201, JSON.stringify(ok.body))
  await completed
  const failed = notified('import_failed')
  const bad = await call(owner, 'POST', '/v1/api/import/analyze', { source: 'compose', content: 'services: [1, 2\n' })
  t.equal(bad.status, 201, JSON.stringify(bad.body))
  await failed
  const list = await all()
  t.match(list.find((n) => n.type === 'import_completed'), { link: `/v1/api/import/${ok.body.id}` })
  t.match(list.find((n) => n.type === 'import_failed'), { link: `/v1/api/import/${bad.body.id}` })
  t.equal((await call(owner, 'GET', `/v1/api/import/${ok.body.id}`)).status, 200, 'the link is the session')
})
