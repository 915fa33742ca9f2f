// Two replicas (two apps in shared mode on one database) and one simulated cluster (API.md §11 "Watch
// ownership"): a deployed workflow is watched by exactly one of them, the holder of the cluster's lease;
// when the holder shuts down it hands the lease back, the other replica lists the cluster and resumes, and
// a change made in the cluster reaches the new holder's bus as `resource.status`, stored with its epoch.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'
import { startTestCluster, simClusterBody } from '../helpers/kube.ts'
import { raw, waitFor } from '../kube-sim/test-helpers.ts'
import { deployment } from './fixture.ts'
import type { BusEvents } from '../../src/events/bus.ts'

// Long: a takeover within seconds can then only come from the release (relayed to the other replica as
// `leases.released`), never from a lease running out or the other replica's next renewal (every 20 s).
const TTL = 60_000
const sim = await startTestCluster(t, { timing: { podStartMs: 100, podReadyMs: 100 } })
const shared = {
  REPLICA_MODE: 'shared', LEASE_TTL_MS: TTL, RUN_READY_TIMEOUT_MS: 15_000, RUN_REPLY_WAIT_MS: 0,
  JWT_SECRET: randomBytes(32).toString('hex'), ENCRYPTION_KEY: randomBytes(32).toString('base64'),
} as const
const a = await startTestApp(t, shared)
const b = await startTestApp(t, shared, { database: a.database })
const apps: TestApp[] = [a, b]
const watchOf = (x: TestApp) => x.app.services.resourceWatch

t.test('one replica watches the deployed workflow; after it closes, the other takes over and publishes', async (t) => {
  const owner = await registerUser(a.app)
  const call = async (x: TestApp, method: 'GET' | 'POST', url: string, payload?: object) => {
    const res = await x.app.inject({ method, url, headers: owner.headers, ...(payload && { payload }) })
    return { status: res.statusCode, body: res.body ? res.json() : undefined }
  }
  const gained = Promise.race(apps.map((x) => new Promise<TestApp>((resolve) => watchOf(x).ownership.onGained(() => resolve(x)))))
  const created = await call(a, 'POST', '/v1/api/clusters', simClusterBody(sim, 'sim'))
  t.equal(created.status, 201)
  const clusterId = created.body.id as string
  const holder = await gained
  const other = holder === a ? b : a
  t.ok(watchOf(holder).ownership.owns(clusterId), 'one replica holds the new cluster\'s lease')
  t.notOk(watchOf(other).ownership.owns(clusterId), 'the other does not')

  const wf = await call(a, 'POST', '/v1/api/workflows', { name: 'shop', cluster_id: 'sim' })
  t.equal(wf.status, 201)
  t.equal((await call(a, 'POST', `/v1/api/workflows/${wf.body.id}/save`, { nodes: [deployment('n-web', 'web', 'shop', 'nginx:1')], edges: [] })).status, 200)
  // The run is taken by the replica that does not hold the cluster: it follows the run's objects for the
  // run's readiness wait only, while the holder (told by remoteBus) stores and announces every transition.
  const published = new Map<TestApp, BusEvents['resource.status'][]>(apps.map((x) => [x, []]))
  for (const x of apps) x.app.bus.on('resource.status', (e) => published.get(x)!.push(e))
  // The holder's status writes wait until the run's closing sync has been read: the sync can then only show
  // the Deployment running from what the running replica's own wait saw (liveStatus), not from the record.
  const holderRepo = (watchOf(holder) as unknown as { deps: { resources: { setStatus: (...args: any[]) => Promise<unknown> } } }).deps.resources
  let releaseWrites!: () => void
  const writesReleased = new Promise<void>((resolve) => { releaseWrites = resolve })
  const setStatus = holderRepo.setStatus.bind(holderRepo)
  holderRepo.setStatus = async (...args: any[]) => { await writesReleased; return setStatus(...args) }
  t.teardown(() => { releaseWrites(); delete (holderRepo as { setStatus?: unknown }).setStatus })
  const finished = other.app.bus.next('run.finished', (e) => e.workflow_id === wf.body.id)
  const stream = other.app.streams.subscribe(`workflow:${wf.body.id}`)
  t.teardown(() => stream.close())
  const run = await call(other, 'POST', `/v1/api/workflows/${wf.body.id}/run`, {})
  t.ok(run.status === 200 || run.status === 202, 'run accepted')
  const done = await finished
  const record = await a.app.db.collection('workflow_runs').findOne({ _id: done.run_id as never })
  t.equal(done.status, 'completed', `the run completed: its wait saw the Deployment ready (${record?.error ?? ''})`)
  t.same(published.get(other), [], 'the replica running it published no status of a cluster it does not hold')
  // The run's closing sync (just before its `complete`) shows what the run's own wait saw, even when the
  // holder has not stored it yet.
  const events: Array<{ type: string; data: unknown }> = []
  for await (const ev of stream) { events.push(ev); if (ev.type === 'complete') break }
  const closingSync = events.filter((ev) => ev.type === 'workflow_sync').at(-1)?.data as { nodes: Array<{ node_id: string; status: { state: string } }> } | undefined
  t.equal(closingSync?.nodes.find((n) => n.node_id === 'n-web')?.status.state, 'running', 'the closing workflow_sync shows the Deployment running, before the holder stored it')
  releaseWrites()
  await waitFor('the holder announcing the Deployment running', () => published.get(holder)!.some((e) => e.kind === 'Deployment' && e.new_status === 'running'), 10_000)
  await waitFor('pod records written by the holder', async () => {
    const docs = await a.app.db.collection('resources').find({ kind: 'Pod', status: { $ne: 'deleted' } }).toArray()
    return docs.length > 0 && docs.every((d) => d.watch_epoch === watchOf(holder).ownership.epoch(clusterId))
  }, 10_000)
  const pods = await a.app.db.collection('resources').find({ kind: 'Pod' }).toArray()
  t.ok(pods.every((d) => d.watch_epoch === undefined || d.watch_epoch === watchOf(holder).ownership.epoch(clusterId)), 'no pod record written with another epoch')

  // The holder follows the Deployment (and its namespace); the other replica, once the run is over, nothing
  // (while the run waited for readiness, the replica running it followed the Deployment for its wait only).
  await waitFor('the holder following the workflow', () => watchOf(holder).watchedCount() > 0 && watchOf(other).watchedCount() === 0, 10_000)
  const followed = watchOf(holder).watchedCount()
  const web = await a.app.db.collection('resources').findOne({ kind: 'Deployment', name: 'web' })
  t.ok(web, 'the Deployment is a tracked resource')
  await waitFor('the holder\'s status stored', async () => {
    const doc = await a.app.db.collection('resources').findOne({ _id: web!._id })
    return doc?.status === 'running' && doc.watch_epoch === watchOf(holder).ownership.epoch(clusterId)
  }, 10_000)
  const epochBefore = watchOf(holder).ownership.epoch(clusterId)!

  // The holder shuts down: its leases go back before anything else stops.
  const takenOver = new Promise<void>((resolve) => watchOf(other).ownership.onGained((c) => { if (c === clusterId) resolve() }))
  const closing = Date.now()
  await holder.app.close()
  await Promise.race([takenOver, new Promise((_, reject) => setTimeout(() => reject(new Error('not taken over within 5 s of the release')), 5000).unref())])
  t.comment(`takeover after close (release) with TTL ${TTL} ms: ${Date.now() - closing} ms`)
  t.equal(watchOf(other).ownership.epoch(clusterId), epochBefore + 1, 'the new holder writes with the next epoch')
  await waitFor('the new holder following the workflow', () => watchOf(other).watchedCount() === followed, 10_000)

  // A change in the cluster reaches the new holder's bus and its record.
  const status = new Promise<BusEvents['resource.status']>((resolve) => {
    const off = other.app.bus.on('resource.status', (e) => { if (e.resource_id === String(web!._id) && e.counters.replicas === 3) { off(); resolve(e) } })
  })
  const patched = await raw(sim, 'PATCH', '/apis/apps/v1/namespaces/shop/deployments/web', { contentType: 'application/merge-patch+json', body: { spec: { replicas: 3 } } })
  t.equal(patched.status, 200)
  const e = await status
  t.equal(e.name, 'web')
  await waitFor('the scaled status stored with the new epoch', async () => {
    const doc = await other.app.db.collection('resources').findOne({ _id: web!._id })
    return doc?.counters?.replicas === 3 && doc.watch_epoch === epochBefore + 1
  }, 10_000)
})
