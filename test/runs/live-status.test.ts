// Live status during a run (issue 23): a run's objects are followed from their apply, so subscribers see
// their transitions while it runs, and the readiness wait reads the watchers' state: a crash-looping or
// unpullable workload fails the run with its pod's reason as soon as the pod says so, long before the ready
// timeout. After the run, changes made with kubectl show on the stream (scale, a bad image, the fix).
import t from 'tap'
import { runFixture, node } from './fixture.ts'
import { listen, openStream, type SseEvent, type SseStream } from '../streams/sse-client.ts'

// Pods take a moment to start and a crash-looping container restarts after a back-off, as on a real node;
// the ready timeout is long, so a run that waited for it could not pass the duration checks.
const READY_TIMEOUT_MS = 30_000
const f = await runFixture(t, { RUN_READY_TIMEOUT_MS: READY_TIMEOUT_MS, SSE_HEARTBEAT_MS: 15_000 }, { timing: { podStartMs: 300, podReadyMs: 300, crashBackoffMs: 1000 } })
t.setTimeout(240_000)
const { app, owner, call } = f
const base = await listen(app)
const auth = { authorization: `Bearer ${owner.token}` }

const deployment = (id: string, name: string, namespace: string, image: string, replicas = 1) => node(id, 'deployment', { name, namespace, image, port: 8080, replicas })

async function subscribe(t: { teardown(fn: () => unknown): void }, workflowId: string): Promise<SseStream> {
  const s = await openStream(base, `/v1/api/workflows/${workflowId}/status/stream`, auth)
  t.teardown(() => s.close())
  await s.until('metadata', (e) => e.length >= 1)
  return s
}

/** Starts a run and waits for its `complete` on the stream; answers the run's record. */
async function run(s: SseStream, workflowId: string): Promise<{ run: any; completeAt: number; startedAt: number }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const startedAt = Date.now()
  const res = await call(owner, 'POST', `/v1/api/workflows/${workflowId}/run`, {})
  if (res.status !== 200 && res.status !== 202) throw new Error(`run: ${res.status} ${JSON.stringify(res.body)}`)
  const runId = res.body.id as string
  await s.until('complete', (e) => e.some((x) => x.type === 'complete' && x.data.run_id === runId), READY_TIMEOUT_MS + 15_000)
  const completeAt = Date.now()
  const got = await call(owner, 'GET', `/v1/api/workflows/${workflowId}/runs/${runId}`)
  return { run: got.body, completeAt, startedAt }
}

const changes = (events: SseEvent[], name: string) => events.filter((e) => e.type === 'status_change' && e.data.name === name)
const indexOfComplete = (events: SseEvent[]) => events.findIndex((e) => e.type === 'complete')

t.test('a run with one good and one crash-looping Deployment ends failed with the pod\'s reason, long before the ready timeout', async (t) => {
  const id = await f.workflow({ nodes: [deployment('n-good', 'good', 'mixed', 'nginx:1.27'), deployment('n-bad', 'bad', 'mixed', 'example/app-crashloop:1')], edges: [] }, 'mixed')
  const s = await subscribe(t, id)
  const { run: r, completeAt, startedAt } = await run(s, id)
  t.equal(r.status, 'failed')
  const bad = r.nodes.find((n: { node_id: string; kind: string }) => n.node_id === 'n-bad' && n.kind === 'Deployment')
  t.equal(bad.action, 'failed', 'the crash-looping node failed')
  t.match(bad.message, /CrashLoopBackOff/, 'with the pod\'s reason')
  t.match(bad.message, /pod bad-/, 'naming the pod')
  const good = r.nodes.find((n: { node_id: string; kind: string }) => n.node_id === 'n-good' && n.kind === 'Deployment')
  t.equal(good.action, 'created', 'the good one is fine')
  t.ok(r.duration_ms < 10_000, `the run ended ${r.duration_ms} ms after it started (ready timeout ${READY_TIMEOUT_MS} ms)`)
  t.ok(completeAt - startedAt < 12_000, `complete reached the subscriber ${completeAt - startedAt} ms after the request`)
  const end = indexOfComplete(s.events)
  const goodUp = changes(s.events, 'good').find((e) => e.data.new_status === 'running')
  const badDown = changes(s.events, 'bad').find((e) => e.data.new_status === 'failed')
  t.ok(goodUp, 'the good Deployment\'s status_change to running was published')
  t.ok(badDown, 'the crash-looping Deployment\'s status_change to failed was published')
  t.ok(s.events.indexOf(goodUp!) < end && s.events.indexOf(badDown!) < end, 'both during the run, before complete')
  t.match(badDown!.data.message, /CrashLoopBackOff/)
  const stored = await call(owner, 'GET', `/v1/api/resources?workflow_id=${id}&kind=Deployment`)
  const byName = new Map(stored.body.resources.map((x: { name: string; status: string }) => [x.name, x.status]))
  t.same(Object.fromEntries(byName), { good: 'running', bad: 'failed' }, 'the tracked resources say the same')
})

t.test('an unpullable image fails the run with the pull error, without waiting for the timeout', async (t) => {
  const id = await f.workflow({ nodes: [deployment('n-web', 'web', 'pull', 'registry.example/web-fail-pull:2')], edges: [] }, 'pull')
  const s = await subscribe(t, id)
  const { run: r } = await run(s, id)
  t.equal(r.status, 'failed')
  const web = r.nodes.find((n: { kind: string }) => n.kind === 'Deployment')
  t.match(web.message, /ErrImagePull|ImagePullBackOff/)
  t.ok(r.duration_ms < 10_000, `the run took ${r.duration_ms} ms`)
  t.ok(changes(s.events, 'web').some((e) => e.data.new_status === 'failed'), 'status_change to failed on the stream')
})

t.test('after a run, kubectl changes reach the stream: scale, a bad image (the old pods still serve), the fix', async (t) => {
  const id = await f.workflow({ nodes: [deployment('n-app', 'app', 'later', 'nginx:1.27', 2)], edges: [] }, 'later')
  const s = await subscribe(t, id)
  const { run: r } = await run(s, id)
  t.equal(r.status, 'completed', JSON.stringify(r.logs))

  const from = s.events.length
  await f.kubectl('scale', 'deployment/app', '-n', 'later', '--replicas=3')
  const scaled = await s.until('ready 3/3', (e) => e.slice(from).some((x) => x.type === 'node_update' && x.data.node_id === 'n-app' && x.data.status.ready === '3/3'), 15_000)
  t.ok(scaled, 'a node_update carries the new ready count')

  const beforeBad = s.events.length
  await f.kubectl('set', 'image', 'deployment/app', '-n', 'later', 'app=nginx:fail-pull')
  const failed = await s.until('failed', (e) => e.slice(beforeBad).some((x) => x.type === 'status_change' && x.data.name === 'app' && x.data.new_status === 'failed'), 15_000)
  const change = failed.slice(beforeBad).find((x) => x.type === 'status_change' && x.data.new_status === 'failed')!
  t.match(change.data.message, /ImagePullBackOff|ErrImagePull/, 'the reason')
  t.match(change.data.message, /pod app-/, 'which pod')

  const beforeFix = s.events.length
  await f.kubectl('set', 'image', 'deployment/app', '-n', 'later', 'app=nginx:1.27')
  await s.until('running again', (e) => e.slice(beforeFix).some((x) => x.type === 'status_change' && x.data.name === 'app' && x.data.new_status === 'running'), 15_000)
  const last = s.events.findLast((x) => x.type === 'node_update' && x.data.node_id === 'n-app')!
  t.notMatch(last.data.status.message, /ImagePull|waiting for the controller/, 'no stale message once the rollout is done')
})

t.test('a re-run with a new spec completes only once the new spec is ready, not on the old one\'s state', async (t) => {
  const id = await f.workflow({ nodes: [deployment('n-api', 'api', 'rerun', 'nginx:1.27', 2)], edges: [] }, 'rerun')
  const s = await subscribe(t, id)
  t.equal((await run(s, id)).run.status, 'completed')
  await f.save(id, { nodes: [deployment('n-api', 'api', 'rerun', 'nginx:1.28', 2)], edges: [] })
  const { run: r } = await run(s, id)
  t.equal(r.status, 'completed', JSON.stringify(r.logs))
  const live = await f.kubectlJson('get', 'deployment/api', '-n', 'rerun')
  t.equal(live.spec.template.spec.containers[0].image, 'nginx:1.28')
  t.equal(live.status.updatedReplicas, 2, 'every replica runs the new spec when the run says completed')
  t.equal(live.status.readyReplicas, 2)
})
