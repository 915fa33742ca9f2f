// Builds end to end on the simulator: a real clone from the git server, a real push to the registry, the
// digest confirmed there, the events in order on the stream, the workflow node pinned to the digest and the
// credentials Secret gone; then each way a build fails (clone, build, push refused) with its phase.
import t, { type Test } from 'tap'
import { buildFixture, NS, terminal } from './fixture.ts'
import { Value } from 'typebox/value'
import { reframeBuildEvent } from '../../src/compat/kubeorch/routes/builds.ts'
import { Build, BuildProgressEvent, BuildLogEvent, BuildCompleteEvent, BuildFailedEvent } from '../../schemas/build.ts'

const f = await buildFixture(t)

const node = (id: string, type: string, data: Record<string, unknown>) => ({ id, type, position: { x: 0, y: 0 }, data })

t.test('success: clone, build, push; events in order; digest confirmed; only the named node pinned; Secret gone', async (t) => {
  const wf = await f.call(f.owner, 'POST', '/v1/api/workflows', { name: 'shop', cluster_id: 'sim' })
  const graph = {
    nodes: [
      node('n-api', 'deployment', { name: 'api', namespace: 'shop', image: 'nginx:1.27', port: 8080 }),
      node('n-worker', 'deployment', { name: 'worker', namespace: 'shop', image: 'busybox:1.36' }),
    ],
    edges: [],
  }
  t.equal((await f.call(f.owner, 'POST', `/v1/api/workflows/${wf.body.id}/save`, graph)).status, 200)
  const hold = f.sim.failingBuilds.hold('team/app', 'clone')
  const started = await f.start({ workflow_id: wf.body.id, node_id: 'n-api', build_args: { VERSION: '1.0' } })
  t.equal(started.status, 201, JSON.stringify(started.body))
  const build = started.body
  t.ok(Value.Check(Build, build), 'the reply is a Build')
  t.match(build, { status: 'pending', phase: null, progress: 0, image_ref: `${f.registry.host}/team/app:v1`, image_digest: null, error: null, job_name: `build-${build.id}`, cluster: 'sim', namespace: NS })
  await hold.reached
  const stream = await f.stream(build.id)
  t.equal(stream.status, 200)
  hold.release()
  const events = await stream.until('the terminal event', terminal, 20_000)
  await stream.ended
  t.equal(events[0].type, 'metadata')
  t.equal(events[0].data.id, build.id)
  const types = events.map((e) => e.type)
  t.equal(types.at(-1), 'complete', types.join(','))
  const statuses = events.filter((e) => e.type === 'progress').map((e) => e.data.status)
  const order = ['cloning', 'building', 'pushing', 'completed']
  const firstAt = order.map((s) => statuses.indexOf(s))
  t.ok(firstAt.every((i) => i >= 0), `every status seen: ${statuses.join(',')}`)
  t.same([...firstAt].sort((a, b) => a - b), firstAt, 'in order')
  const progress = events.filter((e) => e.type === 'progress').map((e) => e.data.progress)
  t.same([...progress].sort((a, b) => a - b), progress, 'progress never goes back')
  t.equal(progress.at(-1), 100)
  for (const e of events) {
    const schema = { progress: BuildProgressEvent, log: BuildLogEvent, complete: BuildCompleteEvent, failed: BuildFailedEvent }[e.type as 'log']
    if (schema) t.ok(Value.Check(schema, e.data), `${e.type} event has its schema: ${JSON.stringify(e.data).slice(0, 120)}`)
  }
  const logs = events.filter((e) => e.type === 'log').map((e) => e.data)
  t.ok(logs.some((l) => l.phase === 'build' && /RUN make/.test(l.line)), 'builder lines are build-phase log events')
  t.ok(logs.some((l) => l.phase === 'push' && /pushing manifest/.test(l.line)), 'push lines are push-phase log events')

  const complete = events.at(-1)!.data
  const stored = f.registry.manifest('team/app', 'v1')
  t.ok(stored, 'the registry holds the image')
  t.equal(complete.image_digest, stored!.digest, 'the digest is the one the registry holds')
  t.equal(complete.image_ref, `${f.registry.host}/team/app:v1`)
  t.ok(f.registry.requests.some((r) => r.method === 'HEAD' && r.path === '/v2/team/app/manifests/v1' && r.status === 200), 'confirmed with a manifest HEAD')

  const done = await f.until(build.id, (b) => b.status === 'completed' && b.node_updated === true)
  t.match(done, { status: 'completed', phase: 'push', progress: 100, image_digest: stored!.digest, error: null })
  t.ok(done.started_at && done.finished_at)
  const after = (await f.call(f.owner, 'GET', `/v1/api/workflows/${wf.body.id}`)).body
  t.equal(after.nodes.find((n: any) => n.id === 'n-api').data.image, `${f.registry.host}/team/app:v1@${stored!.digest}`, 'the node is pinned to the digest')
  t.same(after.nodes.find((n: any) => n.id === 'n-worker'), graph.nodes[1], 'the other node is untouched')
  t.notOk(await f.exists('secret', `build-${build.id}`), 'the credentials Secret is gone')

  // A finished build's stream: the kept log, then its terminal event, then the end.
  const replay = await f.stream(build.id)
  await replay.ended
  t.equal(replay.events[0].type, 'metadata')
  t.equal(replay.events.at(-1)!.type, 'complete')
  t.same(replay.events.at(-1)!.data, complete)
  t.same(replay.events.filter((e) => e.type === 'log').map((e) => e.data.line), logs.map((l) => l.line), 'the whole log is replayed')

  const list = await f.call(f.owner, 'GET', `/v1/api/builds?workflow_id=${wf.body.id}&status=completed`)
  t.equal(list.status, 200)
  t.same(list.body.builds.map((b: any) => b.id), [build.id])
  const search = await f.call(f.owner, 'GET', '/v1/api/search?q=team/app')
  t.equal(search.status, 200)
  t.same(search.body.builds.map((b: any) => b.id), [build.id])
  t.equal((await f.call(f.owner, 'POST', `/v1/api/builds/${build.id}/cancel`)).status, 409, 'a finished build cannot be cancelled')

  const everything = await f.everythingStored()
  const b64 = Buffer.from(`${f.registry.username}:${f.registry.password}`).toString('base64')
  t.notOk(everything.includes(f.registry.password), 'no registry password stored or logged')
  t.notOk(everything.includes(b64), 'no base64 login stored or logged')
  t.notOk(JSON.stringify(events).includes(f.registry.password) || JSON.stringify(events).includes(b64), 'nor in any event')
})

// A stream opened while the build is pending (its Job not made yet) gets the record without `started_at`;
// the record comes again as `metadata` once the Job exists, and with `finished_at` before the terminal
// event, so a client shows when it started and how long it ran without reading it again.
t.test('a stream opened before the build started: metadata again with started_at, then with finished_at before the end', async (t) => {
  const jobCreated = f.sim.faults.hold({ method: 'POST', pathPrefix: `/apis/batch/v1/namespaces/${NS}/jobs` })
  t.teardown(() => jobCreated.release())
  const started = await f.start({ image_name: 'team/timed' })
  t.equal(started.status, 201, JSON.stringify(started.body))
  await jobCreated.reached
  const stream = await f.stream(started.body.id)
  t.equal(stream.status, 200)
  await stream.until('the first metadata', (events) => events.length >= 1)
  jobCreated.release()
  const events = await stream.until('the terminal event', terminal, 20_000)
  await stream.ended
  checkTimestamps(t, events.map((e) => ({ type: e.type, data: e.data })))
})

t.test('the same from the stream\'s producer (the hub and the metadata snapshot, no HTTP)', async (t) => {
  const jobCreated = f.sim.faults.hold({ method: 'POST', pathPrefix: `/apis/batch/v1/namespaces/${NS}/jobs` })
  t.teardown(() => jobCreated.release())
  const started = await f.start({ image_name: 'team/timed-hub' })
  t.equal(started.status, 201, JSON.stringify(started.body))
  await jobCreated.reached
  // As serveStream does it: subscribe, then read the snapshot that goes out first.
  const source = f.app.services.builds.stream(f.owner.user.id, started.body.id)
  const sub = source.hub.subscribe(source.key)
  t.teardown(() => sub.close())
  const events: Array<{ type: string; data: any }> = [{ type: 'metadata', data: await source.metadata() }]
  jobCreated.release()
  for await (const e of sub) {
    events.push({ type: e.type, data: e.data })
    if (terminal([e])) break
  }
  checkTimestamps(t, events)
  // The KubeOrch UI's build page reads them re-encoded: startedAt while it runs, duration once it ended.
  const ui = events.filter((e) => e.type === 'metadata').map((e) => reframeBuildEvent('metadata', e.data) as { data: any })
  t.ok(ui.some((m) => m.data.startedAt && m.data.status !== 'completed'), 'startedAt while it runs')
  t.equal(ui.at(-1)!.data.duration, Date.parse(ui.at(-1)!.data.completedAt) - Date.parse(ui.at(-1)!.data.startedAt), 'duration (ms) when done')
})

function checkTimestamps(t: Test, events: Array<{ type: string; data: any }>) {
  const metas = events.map((e, i) => ({ ...e, i })).filter((e) => e.type === 'metadata')
  t.equal(metas[0].i, 0, 'metadata first')
  t.match(metas[0].data, { status: 'pending', started_at: null, finished_at: null }, 'opened before the Job was made')
  const live = metas.find((m) => m.data.started_at !== null)
  t.ok(live, 'a later metadata carries started_at')
  t.ok(Value.Check(Build, live!.data), 'it is a Build')
  t.ok(Date.parse(live!.data.started_at) >= Date.parse(live!.data.created_at))
  t.equal(live!.data.finished_at, null, 'sent while the build runs')
  const end = events.findIndex((e) => terminal([e]))
  t.equal(events[end].type, 'complete')
  const last = metas.at(-1)!
  t.equal(last.i, end - 1, 'the finished record right before the terminal event')
  t.match(last.data, { status: 'completed', started_at: live!.data.started_at, finished_at: String })
  t.ok(Date.parse(last.data.finished_at) >= Date.parse(last.data.started_at))
}

t.test('clone failure: an unknown branch fails at clone with git\'s own words', async (t) => {
  const started = await f.start({ branch: 'no-such-branch', image_tag: 'nobranch' })
  t.equal(started.status, 201)
  const done = await f.until(started.body.id, (b) => b.status === 'failed')
  t.equal(done.phase, 'clone')
  t.match(done.error, /git \(fetch\) failed \(exit code 128\): fatal: .*no-such-branch/)
  t.notOk(await f.exists('secret', `build-${started.body.id}`), 'the credentials Secret is gone')
  const s = await f.stream(started.body.id)
  await s.ended
  t.same(s.events.at(-1), { ...s.events.at(-1), type: 'failed', data: { error: done.error, phase: 'clone' } })
})

t.test('build failure: a missing Dockerfile and a failing RUN fail at build', async (t) => {
  const missing = await f.start({ dockerfile: 'Dockerfile.nope', image_tag: 'missing' })
  t.equal(missing.status, 201)
  const m = await f.until(missing.body.id, (b) => b.status === 'failed')
  t.equal(m.phase, 'build')
  t.match(m.error, /the build failed \(exit code 1\): ERROR: failed to solve: failed to read dockerfile/)

  f.sim.failingBuilds.at('team/broken', 'build')
  const broken = await f.start({ image_name: 'team/broken' })
  const b = await f.until(broken.body.id, (x) => x.status === 'failed')
  t.equal(b.phase, 'build')
  t.match(b.error, /did not complete successfully: exit code: 2/)
  t.notOk(await f.exists('secret', `build-${broken.body.id}`))
  t.notOk(f.registry.manifest('team/broken', 'v1'), 'nothing was pushed')
})

t.test('push refused: bad credentials fail at push with the registry\'s 401, nothing stored', async (t) => {
  const admin = await (await import('../helpers/auth.ts')).registerUser(f.app, { role: 'admin' })
  const bad = await f.call(admin, 'POST', '/v1/api/admin/registries', { name: 'wrong-login', registry_type: 'custom', url: f.registry.url, username: f.registry.username, password: 'not-the-password-42' })
  t.equal(bad.status, 201)
  const started = await f.start({ registry_id: bad.body.id, image_name: 'team/refused' })
  t.equal(started.status, 201)
  const done = await f.until(started.body.id, (b) => b.status === 'failed')
  t.equal(done.phase, 'push')
  t.match(done.error, /the push failed \(exit code 1\): .*401 Unauthorized/)
  t.notOk(f.registry.manifest('team/refused', 'v1'))
  t.notOk(await f.exists('secret', `build-${started.body.id}`))
  t.notOk((await f.everythingStored()).includes('not-the-password-42'), 'the wrong password is masked too')
})
