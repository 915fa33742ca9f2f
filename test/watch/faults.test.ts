// The watch survives what clusters do to watches: every watch dropped, requests failing with 500 and 429,
// the API server stopped and restarted, history compacted (410 → relist and diff). After each, the statuses
// converge again, the stored state is right, reconnects wait within [base, cap] and the cluster's connection
// log says so (rate-limited). Small backoff values keep the file fast; the bounds are the same code.
import t from 'tap'
import { watchFixture, deployment } from './fixture.ts'
import { waitFor } from '../kube-sim/test-helpers.ts'

const BASE = 40
const MAX = 320
const f = await watchFixture(t, { WATCH_BACKOFF_BASE_MS: BASE, WATCH_BACKOFF_MAX_MS: MAX })
const NS = 'faults'
const D = `/apis/apps/v1/namespaces/${NS}/deployments`
const watch = f.app.services.resourceWatch

const wf = await f.workflow({ nodes: [deployment('n-a', 'alpha', NS, 'ghcr.io/acme/a:1', 1), deployment('n-b', 'beta', NS, 'ghcr.io/acme/b:1', 1)], edges: [] }, 'faults')
await f.deploy(wf)
await f.status('alpha running', (e) => e.name === 'alpha' && e.new_status === 'running')
await f.status('beta running', (e) => e.name === 'beta' && e.new_status === 'running')
// Deployments, pods and the namespace: three streams.
await waitFor('three open watches', () => f.sim.openWatches() === 3)

const eventsOf = (name: string) => f.statuses.filter((e) => e.name === name)
const stored = async (name: string) => (await f.record('Deployment', name, NS))

/** Scales `name` and waits for the watch to publish the new ready count; answers the events since. */
async function scaleAndSee(name: string, replicas: number, what: string) {
  const from = f.statuses.length
  await f.patch(`${D}/${name}`, { spec: { replicas } })
  const e = await f.status(`${name} ${replicas}/${replicas} after ${what}`, (e) => f.statuses.indexOf(e) >= from && e.name === name && e.counters.readyReplicas === replicas && e.counters.replicas === replicas && e.new_status === 'running')
  await watch.idle()
  const rec = await stored(name)
  return { e, rec, since: f.statuses.slice(from) }
}

t.test('every watch dropped: resumed from the last resourceVersion, a change made meanwhile arrives once', async (t) => {
  f.sim.faults.dropWatches()
  // Made while no watch is open (the reconnect waits at least BASE ms).
  const { rec, since } = await scaleAndSee('alpha', 2, 'dropWatches')
  t.equal(rec.ready, '2/2')
  t.equal(rec.status, 'running')
  t.equal(since.filter((e) => e.name === 'alpha' && e.counters.readyReplicas === 2).length, 1, 'published once')
  await waitFor('watches reopened', () => f.sim.openWatches() === 3)
})

t.test('watch requests failing with 500, then 429: retried with backoff, converging', async (t) => {
  for (const status of [500, 429]) {
    f.sim.faults.failNext(3, status, { pathPrefix: D, method: 'GET' })
    f.sim.faults.dropWatches()
    const replicas = status === 500 ? 1 : 2
    const { rec } = await scaleAndSee('alpha', replicas, `${status}s`)
    t.equal(rec.ready, `${replicas}/${replicas}`, `converged after ${status}s`)
    await waitFor('watches reopened', () => f.sim.openWatches() === 3)
  }
  const logs = await f.app.db.collection('cluster_logs').find({ action: 'watch', message: /^watch of / }).toArray()
  t.ok(logs.length >= 1, 'the reconnects are in the cluster\'s connection log')
  t.ok(logs.length <= 2, `rate-limited: ${logs.length} entries for many reconnects`)
  t.match(logs[0].message, /^watch of (Deployment|Pod|Namespace)( in namespace faults)? dropped \(.+\); reconnecting in \d+ ms, attempt \d+/)
  t.equal(logs[0].success, false)
})

t.test('the API server stopped and restarted: the watch comes back and converges', async (t) => {
  await f.sim.faults.stop()
  await waitFor('watches closed', () => watch.hub.openWatches() === 0)
  await f.sim.faults.restart()
  await waitFor('watches reopened', () => f.sim.openWatches() === 3, 15_000)
  const { rec } = await scaleAndSee('beta', 2, 'restart')
  t.equal(rec.ready, '2/2')
})

t.test('history compacted while disconnected: 410 → relist, and an object deleted meanwhile is deleted', async (t) => {
  // Keep the reconnect away long enough to change things behind its back.
  f.sim.faults.failNext(2, 500, { pathPrefix: D, method: 'GET' })
  f.sim.faults.dropWatches()
  await f.remove(`${D}/beta`)
  f.sim.faults.compactHistory()
  const gone = await f.status('beta deleted', (e) => e.name === 'beta' && e.new_status === 'deleted')
  t.equal(gone.old_status, 'running')
  await watch.idle()
  t.equal((await stored('beta')).status, 'deleted')
  // Deleted behind the service's back is also drift (API.md §12): once judged, the node shows `drifted` beside
  // the watchers' `deleted` (awaited: the check is asynchronous, so the bare state raced it).
  await f.app.services.drift.idle()
  t.match(await f.nodeStatus(wf, 'n-b'), { state: 'drifted', live_state: 'deleted' })
  const { rec } = await scaleAndSee('alpha', 1, 'compaction')
  t.equal(rec.ready, '1/1', 'the relisted stream keeps following alpha')
})

t.test('no change was lost or published twice; every reconnect waited within [base, cap]', async (t) => {
  const alpha = eventsOf('alpha')
  for (let i = 1; i < alpha.length; i++) t.equal(alpha[i].old_status, alpha[i - 1].new_status, `alpha event ${i} continues from the one before`)
  const delays = watch.hub.reconnects
  t.ok(delays.length >= 6, `${delays.length} reconnects`)
  t.ok(delays.every((d) => d >= BASE && d <= MAX), `all within [${BASE}, ${MAX}]: ${delays.join(', ')}`)
  t.ok(delays.some((d) => d > BASE * 1.25), 'consecutive failures back off further')
})

t.test('the cluster deleted: its watchers stop instead of retrying forever', async (t) => {
  t.ok(watch.watchedCount() > 0)
  t.equal((await f.call(f.owner, 'DELETE', '/v1/api/clusters/sim')).status, 204)
  await waitFor('watchers stopped', () => watch.watchedCount() === 0)
  await waitFor('no watch left on the cluster', () => f.sim.openWatches() === 0)
  t.equal(watch.hub.streamCount(), 0)
})
