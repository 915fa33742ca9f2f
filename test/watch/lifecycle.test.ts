// Live status through a real run: the watch follows what the run applied, a status change is stored on the
// tracked resource and the node's `_status` and published once; crash loops fail with the pod's reason;
// scaling and deletion in the cluster show up; unchanged states are never published.
import t from 'tap'
import { watchFixture, deployment, configmap, publishedOnce } from './fixture.ts'

const f = await watchFixture(t)
const NS = 'live'
const D = `/apis/apps/v1/namespaces/${NS}/deployments`

const wf = await f.workflow({
  nodes: [deployment('n-web', 'web', NS, 'ghcr.io/acme/web:1.0', 2), deployment('n-bad', 'bad', NS, 'ghcr.io/acme/crashloop:1'), configmap('n-cfg', 'settings', NS)],
  edges: [],
}, 'live')

t.test('a run starts the watch: pending → running, stored on the record and the node, published once', async (t) => {
  t.equal(f.sim.openWatches(), 0, 'nothing is watched before a run')
  await f.deploy(wf)
  const running = await f.status('web running', (e) => e.name === 'web' && e.new_status === 'running')
  t.equal(running.old_status, 'pending', 'the run recorded it pending; the watch saw it become ready')
  t.equal(running.workflow_id, wf)
  t.equal(running.node_id, 'n-web')
  t.equal(running.kind, 'Deployment')
  t.equal(running.namespace, NS)
  t.equal(running.counters.readyReplicas, 2)
  await f.app.services.resourceWatch.idle()
  const rec = await f.record('Deployment', 'web', NS)
  t.equal(rec.status, 'running')
  t.equal(rec.ready, '2/2')
  t.equal(rec._id, running.resource_id)
  const node = await f.nodeStatus(wf, 'n-web')
  t.equal(node.state, 'running')
  t.equal(node.ready, '2/2')
  t.equal(node.replicas, 2, 'the kind\'s counters ride along')
  const synced = f.synced.find((s) => s.workflow_id === wf)
  t.ok(synced, 'workflow.synced after the initial listing')
  t.same(new Set(synced!.nodes.map((n) => n.node_id)), new Set(['n-web', 'n-bad', 'n-cfg']))
  t.equal(f.app.services.resourceWatch.watchedCount(), 4, 'three nodes and the namespace the run created')
  t.equal(f.statuses.filter((e) => e.name === 'settings').length, 0, 'a ConfigMap that stays running is never published')
})

t.test('a crash-looping pod fails its Deployment with the pod\'s reason', async (t) => {
  const failed = await f.status('bad failed', (e) => e.name === 'bad' && e.new_status === 'failed')
  t.match(failed.message, /CrashLoopBackOff/)
  await f.app.services.resourceWatch.idle()
  const rec = await f.record('Deployment', 'bad', NS)
  t.equal(rec.status, 'failed')
  t.match(rec.status_message, /CrashLoopBackOff/)
  t.equal((await f.nodeStatus(wf, 'n-bad')).state, 'failed')
})

t.test('scale to zero in the cluster: 0/0 running', async (t) => {
  await f.patch(`${D}/web`, { spec: { replicas: 0 } })
  const scaled = await f.status('web 0/0', (e) => e.name === 'web' && e.new_status === 'running' && e.counters.replicas === 0 && e.counters.readyReplicas === 0)
  t.equal(scaled.counters.readyReplicas, 0)
  await f.app.services.resourceWatch.idle()
  t.equal((await f.record('Deployment', 'web', NS)).ready, '0/0')
})

t.test('deleted from the cluster: deleted, stored, and no longer watched', async (t) => {
  await f.remove(`${D}/web`)
  const gone = await f.status('web deleted', (e) => e.name === 'web' && e.new_status === 'deleted')
  t.equal(gone.resource_id, (await f.record('Deployment', 'web', NS))._id)
  await f.app.services.resourceWatch.idle()
  t.equal((await f.record('Deployment', 'web', NS)).status, 'deleted')
  // A managed object deleted behind the service's back is drift (API.md §12): the derived state stays beside it.
  await f.app.services.drift.idle()
  t.match(await f.nodeStatus(wf, 'n-web'), { state: 'drifted', live_state: 'deleted', drift: { fields: ['(missing)'] } })
  t.equal(f.app.services.resourceWatch.watchedCount(), await live(), 'the others (the namespace included) are still followed')
})

t.test('each change was published once; unchanged states never', async (t) => {
  t.equal(publishedOnce(f.statuses), null)
  const web = f.statuses.filter((e) => e.name === 'web').map((e) => `${e.old_status}→${e.new_status}`)
  t.ok(web.includes('pending→running'))
  t.equal(web.filter((s) => s.endsWith('→deleted')).length, 1, 'deleted once')
  const bad = f.statuses.filter((e) => e.name === 'bad')
  // While it starts, its message may move on (a new condition: containers creating, then crashing) without a new status.
  t.same(bad.filter((e) => e.old_status !== e.new_status).map((e) => `${e.old_status}→${e.new_status}`), ['pending→failed'], 'the crash loop does not flap between restarts')
  t.equal(bad.length - 1 - bad.findIndex((e) => e.new_status === 'failed'), 0, 'nothing published for it after it failed: its restart count and back-off tick silently')
  // Nothing else happens to the settled resources (the crash loop goes on): a further resync publishes nothing for them.
  const settled = () => f.statuses.filter((e) => e.name !== 'bad').length
  const before = settled()
  await f.app.services.resourceWatch.reconcile()
  await f.app.services.resourceWatch.idle()
  t.equal(settled(), before)
})

t.test('a node\'s stored _status does not disturb the next run', async (t) => {
  t.ok(await f.nodeStatus(wf, 'n-bad'), 'the node carries a live status')
  const run = await f.deploy(wf)
  const stored = await f.call(f.owner, 'GET', `/v1/api/workflows/${wf}/runs/${run.run_id}`)
  t.equal(stored.status, 200)
  t.notOk(JSON.stringify(stored.body.logs).includes('_status'), 'no node complains about _status')
  t.equal((await f.nodeStatus(wf, 'n-bad')).state, 'failed', 'and the run leaves it in place')
})

t.test('archiving stops the watches; un-archiving resumes them', async (t) => {
  t.ok(f.sim.openWatches() > 0)
  const res = await f.call(f.owner, 'PUT', `/v1/api/workflows/${wf}/status`, { status: 'archived' })
  t.equal(res.status, 200)
  t.equal(f.app.services.resourceWatch.watchedCount(), 0)
  await waitForZero(() => f.sim.openWatches())
  t.equal(f.sim.openWatches(), 0, 'the simulator\'s open-watch count dropped to zero')
  t.equal((await f.call(f.owner, 'PUT', `/v1/api/workflows/${wf}/status`, { status: 'published' })).status, 200)
  await waitForPositive(() => f.app.services.resourceWatch.watchedCount())
  t.equal(f.app.services.resourceWatch.watchedCount(), await live())
})

t.test('deleting the workflow stops its watches', async (t) => {
  await waitForPositive(() => f.sim.openWatches())
  t.equal((await f.call(f.owner, 'DELETE', `/v1/api/workflows/${wf}`)).status, 204)
  t.equal(f.app.services.resourceWatch.watchedCount(), 0)
  await waitForZero(() => f.sim.openWatches())
  t.equal(f.sim.openWatches(), 0)
})

async function live(): Promise<number> {
  // The workloads' pods are records too, followed through their workload (not watched on their own).
  return f.app.db.collection('resources').countDocuments({ workflow_id: wf, status: { $ne: 'deleted' }, parent_id: null })
}

async function waitForZero(fn: () => number) {
  const { waitFor } = await import('../kube-sim/test-helpers.ts')
  await waitFor('zero', () => fn() === 0, 10_000)
}
async function waitForPositive(fn: () => number) {
  const { waitFor } = await import('../kube-sim/test-helpers.ts')
  await waitFor('positive', () => fn() > 0, 10_000)
}
