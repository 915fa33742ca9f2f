// Three replicas of the service as real processes on one embedded database, one simulated cluster (issue 25,
// API.md §11): a run streams to subscribers on other replicas; Last-Event-ID resumes on any replica with
// nothing missed or repeated; the cluster is watched by one replica, not three; a start storm over the
// replicas starts one run; builds started at once on different replicas each run once; and kill -9 of the
// lease holder hands the cluster to a survivor, whose watch carries a `kubectl scale` to a subscriber.
// The test that kills a replica comes last: the others need all three.
import t, { type Test } from 'tap'
import { startReplicas, type Replica } from '../helpers/replicas.ts'
import { openStream, type SseEvent, type SseStream } from '../streams/sse-client.ts'
import { raw, rawStream, waitFor } from '../kube-sim/test-helpers.ts'
import { startGitServer } from '../helpers/git-server.ts'
import { startTestRegistry } from '../helpers/test-registry.ts'
import { runFixture, shopGraph, node, edge, TRIGGER } from '../runs/fixture.ts'
import type { WatchInfo } from '../kube-sim/watch.ts'

// Four processes start at once on two cores (tsx compiles each): the start alone can take a minute when the
// machine is busy; every wait after it has its own bound.
t.setTimeout(300_000)
const h = await startReplicas(t)
t.comment(`harness up in ${h.startedInMs} ms`)
const [r1, r2, r3] = h.replicas as [Replica, Replica, Replica]
const streamPath = (id: string) => `/v1/api/workflows/${id}/status/stream`
const subscribe = async (t: Test, replica: Replica, id: string, lastEventId?: number): Promise<SseStream> => {
  const s = await openStream(replica.base, streamPath(id), { ...h.auth, ...(lastEventId !== undefined && { 'last-event-id': String(lastEventId) }) })
  t.teardown(() => s.close())
  if (s.status !== 200) throw new Error(`stream on replica ${replica.index}: ${s.status} ${JSON.stringify(s.body)}`)
  await s.until('metadata', (e) => e.some((x) => x.type === 'metadata'), 10_000)
  return s
}
const completeOf = (runId: string) => (events: SseEvent[]) => events.some((e) => e.type === 'complete' && e.data?.run_id === runId)
const startRun = async (replica: Replica, id: string): Promise<string> => {
  const res = await h.api(replica, 'POST', `/v1/api/workflows/${id}/run`, { trigger_data: TRIGGER })
  if (res.status !== 202 && res.status !== 200) throw new Error(`run on replica ${replica.index}: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body.id as string
}
const finished = (replica: Replica, id: string, runId: string) => waitFor(`run ${runId} to finish`, async () => {
  const r = await h.api(replica, 'GET', `/v1/api/workflows/${id}/runs/${runId}`)
  return r.body?.status !== 'running' && r.body?.status !== 'pending' && r.body
}, 20_000, 50)
/** The run's events, up to and including its `complete`: what every subscriber must see alike. */
const runEvents = (events: SseEvent[], runId: string) => {
  const end = events.findIndex((e) => e.type === 'complete' && e.data?.run_id === runId)
  return events.slice(0, end + 1).filter((e) => e.type !== 'metadata')
}
/** A deployment of one replica and its service: no HPA, so `kubectl scale` is what sets the count. */
const webGraph = (ns: string) => ({
  nodes: [
    node('n-web', 'deployment', { name: 'web', namespace: ns, image: 'nginx:1.27', port: 80, replicas: 1 }),
    node('n-svc', 'service', { name: 'web', namespace: ns, serviceType: 'ClusterIP', port: 80, targetPort: 80 }),
  ],
  edges: [edge('n-web', 'n-svc')],
})
const sameCounts = (a: Record<string, number>, b: Record<string, number>) =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([k, n]) => b[k] === n)
const countByPath = (watches: WatchInfo[], ns: string) => {
  const counts: Record<string, number> = {}
  for (const w of watches) if (w.path.includes(`/namespaces/${ns}/`)) counts[w.path] = (counts[w.path] ?? 0) + 1
  return counts
}

t.test('a run started on replica 1 streams to a subscriber on replica 2', async (t) => {
  const id = await h.workflow(r1, shopGraph({ namespace: 'relayed' }), 'relayed')
  const s = await subscribe(t, r2, id)
  const runId = await startRun(r1, id)
  const events = await s.until('the run\'s complete on replica 2', completeOf(runId), 20_000)
  const run = await finished(r1, id, runId)
  t.equal(run.status, 'completed', JSON.stringify(run.error))
  const updates = events.filter((e) => e.type === 'node_update')
  for (const n of run.nodes as Array<{ node_id: string; kind: string }>) {
    t.ok(updates.some((u) => u.data.node_id === n.node_id && u.data.kind === n.kind), `node_update for ${n.node_id} (${n.kind}) reached replica 2`)
  }
  // The watch's view comes from the cluster's lease holder, which may not be the replica that ran it: its
  // status changes are not ordered against the run's own complete, so they may come just after it.
  const changed = await s.until('a status_change on replica 2', (e) => e.some((x) => x.type === 'status_change'), 10_000).then(() => true, () => false)
  t.ok(changed, 'a resource status change (the watch\'s view of the run\'s objects) reached replica 2')
  const sync = events.findLast((e) => e.type === 'workflow_sync')
  t.ok(sync, 'workflow_sync reached replica 2')
  t.equal(sync?.data.nodes.find((n: { node_id: string }) => n.node_id === 'n-api')?.status.state, 'running', 'with the deployment running')
  t.same(events.find((e) => e.type === 'complete' && e.data.run_id === runId)!.data, { run_id: runId, status: 'completed' })
  const ids = events.filter((e) => e.type !== 'metadata').map((e) => e.id!)
  t.same(ids, [...ids].sort((a, b) => a - b), 'ids increase')
  t.equal(new Set(ids).size, ids.length, 'no id repeats')
})

t.test('a subscriber that reconnects to replica 3 with Last-Event-ID misses nothing and sees nothing twice', async (t) => {
  const id = await h.workflow(r1, shopGraph({ namespace: 'resumed' }), 'resumed')
  const full = await subscribe(t, r1, id)
  const first = await subscribe(t, r2, id)
  // Slower API calls: the run is still applying when the first subscriber goes away.
  h.sim.faults.setLatency(40)
  t.teardown(() => h.sim.faults.reset())
  const runId = await startRun(r1, id)
  await first.until('the first node_update on replica 2', (e) => e.some((x) => x.type === 'node_update'), 20_000)
  first.close()
  await first.ended
  const seenFirst = first.events.filter((e) => e.type !== 'metadata')
  const lastId = seenFirst.at(-1)!.id!
  const second = await subscribe(t, r3, id, lastId)
  await second.until('the run\'s complete on replica 3', completeOf(runId), 20_000)
  await full.until('the run\'s complete on replica 1', completeOf(runId), 20_000)
  h.sim.faults.reset()
  const seenSecond = runEvents(second.events, runId)
  t.notOk(seenFirst.some((e) => e.type === 'complete'), 'the first subscriber left mid-run')
  t.ok(seenSecond.length > 0, 'the second subscriber got the rest of the run')
  const union = [...seenFirst, ...seenSecond].map((e) => ({ id: e.id, type: e.type, data: e.data }))
  const expected = runEvents(full.events, runId).map((e) => ({ id: e.id, type: e.type, data: e.data }))
  t.equal(new Set(union.map((e) => e.id)).size, union.length, 'no event twice')
  t.same(union, expected, 'the two halves are exactly what an uninterrupted subscriber on replica 1 saw')
})

t.test('the cluster is watched by one replica\'s worth of watches, not three', async (t) => {
  const ns = 'watched'
  // One replica alone (single mode, in this process, its own simulator and database) on the same workflow.
  const single = await runFixture(t, { RUN_READY_TIMEOUT_MS: 8000 })
  const baseId = await single.workflow(shopGraph({ namespace: ns }), 'watched')
  const baseRun = await single.call(single.owner, 'POST', `/v1/api/workflows/${baseId}/run`, { trigger_data: TRIGGER })
  t.equal(baseRun.body?.status, 'completed', JSON.stringify(baseRun.body?.error))
  const singleWatches = async () => (await raw(single.sim, 'GET', '/debug/watches')).json.watches as WatchInfo[]
  const baseline = await waitFor('the single replica to watch the namespace', async () => {
    const c = countByPath(await singleWatches(), ns)
    return Object.keys(c).length > 0 && c
  }, 10_000, 50)
  t.ok(Object.values(baseline).every((n) => n === 1), `one replica opens one watch per path (${JSON.stringify(baseline)})`)

  const id = await h.workflow(r2, shopGraph({ namespace: ns }), 'watched')
  const s = await subscribe(t, r3, id)
  const runId = await startRun(r2, id)
  await s.until('the run\'s complete', completeOf(runId), 20_000)
  const describe = (ws: WatchInfo[]) => JSON.stringify(ws.filter((w) => w.path.includes(`/namespaces/${ns}/`)).map((w) => `${w.path} ${w.user_agent}`))
  let last: WatchInfo[] = []
  await waitFor('the three replicas\' watches of the namespace to match one replica\'s', async () => {
    last = await h.watches()
    return sameCounts(countByPath(last, ns), baseline)
  }, 10_000, 50).catch(() => { t.fail(`watches of ${ns}: ${describe(last)}; one replica: ${JSON.stringify(baseline)}`) })
  // Absence over time: every replica has heard of the run (its `complete` was relayed) and had a lease period
  // and two polls to react; none may open a second set in that window.
  const window = h.config.leaseTtlMs + 2 * h.config.eventPollMs
  const until = Date.now() + window
  let excess: string | undefined
  while (Date.now() < until && !excess) {
    last = await h.watches()
    const c = countByPath(last, ns)
    if (Object.entries(c).some(([p, n]) => n > (baseline[p] ?? 0))) excess = describe(last)
    await new Promise((r) => setTimeout(r, 50))
  }
  t.notOk(excess, `no replica opened a second set within ${window} ms${excess ? `: ${excess}` : ''}`)
  // A lease that changes hands meanwhile leaves a moment with no watch while the new holder relists.
  const settled = await waitFor('one replica\'s set of watches', async () => { last = await h.watches(); return sameCounts(countByPath(last, ns), baseline) }, 10_000, 50).catch(() => false)
  t.ok(settled, `the cluster's watches of the workflow equal one replica's (${describe(last)})`)
  const lease = (await h.leaseHolder(h.clusterId)).lease
  t.comment(`lease of the cluster: epoch ${String(lease?.epoch)} (changes of holder so far)`)
})

t.test('a start storm over the three replicas starts one run', async (t) => {
  const id = await h.workflow(r1, webGraph('storm'), 'storm')
  const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => h.api(h.replicas[i % 3]!, 'POST', `/v1/api/workflows/${id}/run`, { trigger_data: TRIGGER })))
  const statuses = answers.map((a) => a.status)
  const accepted = answers.filter((a) => a.status === 202 || a.status === 200)
  t.equal(accepted.length, 1, `one run accepted (statuses: ${JSON.stringify(statuses)})`)
  t.equal(statuses.filter((s) => s === 409).length, 29, 'the other 29 are 409')
  for (const a of answers.filter((x) => x.status === 409)) t.match(a.body, { error: String }, '409 with an error body')
  t.equal(await h.db.collection('workflow_runs').countDocuments({ workflow_id: id }), 1, 'one run record')
  if (accepted[0]) t.equal((await finished(r1, id, accepted[0].body.id)).status, 'completed')
  t.equal(await h.db.collection('workflow_runs').countDocuments({ workflow_id: id }), 1, 'still one run record after it finished')
})

t.test('builds started at once on the three replicas each run once: one Job each, one push each', async (t) => {
  const git = await startGitServer()
  const registry = await startTestRegistry({ auth: 'basic' })
  t.teardown(async () => { await git.close(); await registry.close() })
  const reg = await h.api(r1, 'POST', '/v1/api/admin/registries', { name: 'loopback', registry_type: 'custom', url: registry.url, username: registry.username, password: registry.password })
  t.equal(reg.status, 201, `registry registered: ${reg.status === 201 ? reg.body.id : JSON.stringify(reg.body)}`)
  await h.kubectl('create', 'namespace', 'builds')
  const repo = await git.addRepo('app', { Dockerfile: 'FROM alpine:3.20\nCOPY . /app\nRUN make\nCMD ["/app/run"]\n', 'run.sh': 'echo hi\n' })
  // Every Job created in the namespace, as the simulator announces it: a build run twice creates its Job twice.
  const jobs = rawStream(h.sim, '/apis/batch/v1/namespaces/builds/jobs?watch=true')
  t.teardown(() => jobs.close())
  t.equal(await jobs.status, 200)
  const images = ['team/one', 'team/two', 'team/three', 'team/four', 'team/five', 'team/six']
  // Each build outlives several heartbeat periods (RUN_HEARTBEAT_MS 1000): a replica sweeping for dead
  // builds meanwhile must see them alive and leave them to their owner.
  for (const image of images) h.sim.failingBuilds.slow(image, 1000)
  t.teardown(() => h.sim.failingBuilds.clear())
  const started = await Promise.all(images.map((image, i) => h.api(h.replicas[i % 3]!, 'POST', '/v1/api/builds/start', {
    repo_url: repo.url, registry_id: reg.body.id, image_name: image, image_tag: 'v1', cluster: 'sim', namespace: 'builds',
  })))
  for (const s of started) t.equal(s.status, 201, `build started: ${s.status === 201 ? s.body.id : JSON.stringify(s.body)}`)
  const ids = started.map((s) => s.body.id as string)
  const done = await Promise.all(ids.map((id, i) => waitFor(`build ${id} to finish`, async () => {
    const b = (await h.api(h.replicas[(i + 1) % 3]!, 'GET', `/v1/api/builds/${id}`)).body
    return ['completed', 'failed', 'cancelled'].includes(b?.status) && b
  }, 30_000, 100)))
  for (const b of done) t.equal(b.status, 'completed', `build ${b.id}: ${b.error}`)
  const added = new Map<string, number>()
  for (const line of jobs.lines) {
    const e = JSON.parse(line) as { type: string; object: { metadata: { name: string } } }
    if (e.type === 'ADDED') added.set(e.object.metadata.name, (added.get(e.object.metadata.name) ?? 0) + 1)
  }
  t.same([...added.keys()].sort(), done.map((b) => b.job_name).sort(), 'one Job per build, named after it')
  t.ok([...added.values()].every((n) => n === 1), `each Job created once (${JSON.stringify(Object.fromEntries(added))})`)
  for (const image of images) {
    const pushes = registry.requests.filter((r) => r.method === 'PUT' && r.path === `/v2/${image}/manifests/v1` && r.status < 300)
    t.equal(pushes.length, 1, `${image} pushed once`)
  }
})

t.test('kill -9 of the lease holder: a survivor takes the cluster within the lease TTL and carries kubectl scale to a subscriber', async (t) => {
  const id = await h.workflow(r1, webGraph('takeover'), 'takeover')
  const runId = await startRun(r1, id)
  t.equal((await finished(r1, id, runId)).status, 'completed')
  const holder = await waitFor('a live replica to hold the cluster\'s lease', async () => (await h.leaseHolder(h.clusterId)).replica, 10_000, 50)
  const survivors = h.replicas.filter((r) => r !== holder)
  const s = await subscribe(t, survivors[0]!, id)
  const before = (await h.leaseHolder(h.clusterId)).lease!
  const killedAt = Date.now()
  await holder.kill()
  const next = await waitFor('another replica to take the lease', async () => {
    const { replica, lease } = await h.leaseHolder(h.clusterId)
    return replica && replica !== holder && { replica, lease: lease! }
  }, 10_000, 20)
  const takeover = Date.now() - killedAt
  const bound = h.config.leaseTtlMs + h.config.leaseTtlMs / 3
  t.ok(takeover <= bound + 500, `taken over in ${takeover} ms (lease TTL ${h.config.leaseTtlMs} + one renewal period ${h.config.leaseTtlMs / 3}, + 500 ms for a loaded machine)`)
  t.ok(Number(next.lease.epoch) > Number(before.epoch), `the epoch moved on (${before.epoch} → ${next.lease.epoch})`)
  t.ok(survivors.includes(next.replica), `replica ${next.replica.index + 1} (of 1–3) holds it now`)
  await waitFor('the new holder to watch the workflow\'s namespace', async () => Object.keys(countByPath(await h.watches(), 'takeover')).length > 0, 10_000, 50)
  await h.kubectl('scale', 'deployment', 'web', '-n', 'takeover', '--replicas=3')
  const events = await s.until('the scaled deployment\'s ready count on the surviving replica\'s stream', (e) => e.some((x) => x.type === 'node_update' && x.data.node_id === 'n-web' && x.data.status?.ready === '3/3'), 15_000)
  t.ok(events.some((e) => e.type === 'node_update' && e.data.status?.ready === '3/3'), 'node_update with 3/3 reached the subscriber')
  let ws: Record<string, number> = {}
  const one = await waitFor('one set of watches of the namespace', async () => {
    ws = countByPath(await h.watches(), 'takeover')
    return Object.keys(ws).length >= 3 && Object.values(ws).every((n) => n === 1)
  }, 10_000, 50).catch(() => false)
  t.ok(one, `one set of watches after the takeover: deployments, pods, services, once each (${JSON.stringify(ws)})`)
})
