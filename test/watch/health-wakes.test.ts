// The cluster health check and the watches: when a check finds a cluster answering again (status error →
// connected), the watches of that cluster waiting in backoff reconnect at once, so status comes back with
// the cluster even where the probe is off (WATCH_PROBE_INTERVAL_MS=0) and the backoff has grown long.
import t from 'tap'
import { watchFixture, deployment } from './fixture.ts'
import { waitFor } from '../kube-sim/test-helpers.ts'

const BACKOFF_BASE_MS = 200
const f = await watchFixture(t, { WATCH_PROBE_INTERVAL_MS: 0, WATCH_BACKOFF_BASE_MS: BACKOFF_BASE_MS, WATCH_BACKOFF_MAX_MS: 60_000 })
t.setTimeout(120_000)
const NS = 'health'
const clusterId = (await f.call(f.owner, 'GET', '/v1/api/clusters/sim')).body.id as string

t.test('a health check that finds the cluster back wakes its watches, long before their backoff ends', async (t) => {
  const wf = await f.workflow({ nodes: [deployment('n-web', 'web', NS, 'nginx:1.27', 1)], edges: [] }, 'health')
  await f.deploy(wf)
  await f.status('web running', (e) => e.name === 'web' && e.new_status === 'running')
  const hub = f.app.services.resourceWatch.hub
  await waitFor('the watches open', () => hub.openWatches() >= 2 || null, 10_000)

  await f.sim.faults.stop()
  t.teardown(() => f.sim.faults.restart().catch(() => undefined))
  const down = await f.call(f.owner, 'POST', '/v1/api/clusters/sim/test')
  t.not(down.status, 500)
  t.equal((await f.call(f.owner, 'GET', '/v1/api/clusters/sim/status')).body.status, 'error', 'the check records the outage')
  // Until a reconnect delay of several seconds is pending: the backoff alone would keep status blind that long.
  const from = hub.reconnects.length
  await waitFor('a long backoff', () => hub.reconnects.slice(from).some((d) => d >= 3_000) || null, 30_000, 20)
  t.equal(hub.waitingStreams(clusterId) > 0, true, 'streams wait in backoff')

  await f.sim.faults.restart()
  const before = f.statuses.length
  const checkedAt = Date.now()
  const up = await f.call(f.owner, 'POST', '/v1/api/clusters/sim/test')
  t.equal(up.status, 200)
  t.equal((await f.call(f.owner, 'GET', '/v1/api/clusters/sim/status')).body.status, 'connected')
  await waitFor('the watches back', () => hub.openWatches() >= 2 || null, 2_000, 10)
  const reopenedMs = Date.now() - checkedAt
  t.ok(reopenedMs < 1_500, `watches reopened ${reopenedMs} ms after the check (a backoff of 3 s or more was pending)`)

  await f.kubectl('scale', 'deployment/web', '-n', NS, '--replicas=2')
  const scaled = await waitFor('2/2 published', () => f.statuses.slice(before).find((e) => e.name === 'web' && e.counters.readyReplicas === 2) ?? null, 15_000)
  t.ok(scaled, 'a change after the outage is published')
})
