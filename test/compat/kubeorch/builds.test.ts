// Builds through the KubeOrch UI adapter (CONTRACT.md §2.8, §4 "Build", §8 row 19; OBSERVED row 19): the
// UI's start body verbatim (no cluster: the caller's default runs it), `{build}` wrappers with the camelCase
// build, and the build stream read exactly as useBuildStream reads it (split on "\n\n", `event:` and the
// first `data:` line, JSON.parse), on a build that really clones, builds and pushes on the simulator.
import t, { type Test } from 'tap'
import { buildFixture, terminal } from '../../builds/fixture.ts'
import { registerUser } from '../../helpers/auth.ts'
import { openStream, type SseStream } from '../../streams/sse-client.ts'
import { uiJsonEventsOf as asTheUiParses } from './ui-stream.ts'

const f = await buildFixture(t)
const K = '/kubeorch/v1/api'
const STATUSES = ['pending', 'cloning', 'building', 'pushing', 'completed', 'failed', 'cancelled']

async function ui(token: string, method: 'GET' | 'POST', url: string, payload?: object) {
  const res = await f.app.inject({ method, url: `${K}${url}`, headers: { authorization: `Bearer ${token}` }, ...(payload && { payload }) })
  return { status: res.statusCode, body: res.body ? res.json() : undefined }
}
const uiStream = (id: string, token = f.owner.token) => openStream(f.base, `${K}/builds/${id}/stream`, { authorization: `Bearer ${token}`, accept: 'text/event-stream' })

function assertUiBuild(t: Test, b: any) {
  for (const key of ['id', 'repoUrl', 'branch', 'buildContext', 'registryId', 'imageName', 'imageTag', 'currentStage', 'createdAt']) t.type(b[key], 'string', `build.${key} is a string`)
  t.ok(STATUSES.includes(b.status), `status ${b.status} is one the UI knows`)
  t.type(b.progress, 'number')
  t.ok(b.progress >= 0 && b.progress <= 100)
  t.type(b.useNixpacks, 'boolean')
}

t.test('Start build with the UI\'s body (OBSERVED 19) on the default cluster; the stream sends metadata first, then reaches complete', async (t) => {
  const wf = await f.call(f.owner, 'POST', '/v1/api/workflows', { name: 'from-import', cluster_id: 'sim' })
  const node = { id: 'deployment-app', type: 'deployment', position: { x: 0, y: 0 }, data: { name: 'app', image: 'app:latest', needsBuild: true, build: { context: '.', repoUrl: f.repo.url } } }
  const other = { id: 'deployment-web', type: 'deployment', position: { x: 0, y: 200 }, data: { name: 'web', image: 'nginx:1.27' } }
  t.equal((await f.call(f.owner, 'POST', `/v1/api/workflows/${wf.body.id}/save`, { nodes: [node, other], edges: [] })).status, 200)

  // The UI's exact body (OBSERVED.md "Start build"), with the test's repository and registry, and the
  // workflowId the import flow adds.
  const body = { repoUrl: f.repo.url, branch: 'main', registryId: f.registryId, imageName: 'ada/app', imageTag: 'v1', buildContext: '.', useNixpacks: true, workflowId: wf.body.id }
  const hold = f.sim.failingBuilds.hold('ada/app', 'clone')
  t.teardown(() => hold.release())
  const started = await ui(f.owner.token, 'POST', '/builds/start', body)
  t.equal(started.status, 201, JSON.stringify(started.body))
  const build = started.body.build
  assertUiBuild(t, build)
  t.match(build, { repoUrl: f.repo.url, branch: 'main', registryId: f.registryId, imageName: 'ada/app', imageTag: 'v1', buildContext: '.', status: 'pending', progress: 0, workflowId: wf.body.id })
  t.equal(build.cluster, 'sim', 'the caller\'s default cluster runs it')
  t.equal(build.node_id, 'deployment-app', 'the node waiting for the build is the one it sets')

  await hold.reached
  const stream: SseStream = await uiStream(build.id)
  t.equal(stream.status, 200)
  hold.release()
  await stream.until('the terminal event', terminal, 30_000)
  await stream.ended
  const events = asTheUiParses(stream.raw())
  t.ok(events.length >= 3, `${events.length} events`)
  t.equal(events[0].type, 'metadata', 'metadata first (a progress before it would replace the whole build)')
  assertUiBuild(t, events[0].data)
  t.equal(events[0].data.id, build.id)
  const types = events.map((e) => e.type)
  t.equal(types.at(-1), 'complete', types.join(','))
  for (const e of events.filter((x) => x.type === 'progress')) {
    const p = e.data.data ?? e.data
    t.ok(STATUSES.includes(p.status), `progress status ${p.status}`)
    t.type(p.progress, 'number')
    t.type(p.currentStage ?? p.current_stage, 'string')
  }
  const logs = events.filter((e) => e.type === 'log').map((e) => e.data.data ?? e.data)
  t.ok(logs.length > 0, 'log lines')
  for (const l of logs) {
    t.type(l.message, 'string')
    t.type(l.stage, 'string')
    t.ok(['info', 'warn', 'error'].includes(l.level))
  }
  t.ok(logs.some((l) => /RUN make/.test(l.message)), 'the builder\'s own lines are the messages')
  const complete = events.at(-1)!.data
  const digest = f.registry.manifest('ada/app', 'v1')!.digest
  t.equal(complete.imageDigest ?? complete.image_digest, digest)
  t.equal(complete.finalImageRef ?? complete.final_image_ref, `${f.registry.host}/ada/app:v1@${digest}`)

  const done = await f.until(build.id, (b) => b.status === 'completed' && b.node_updated === true)
  t.ok(done)
  const got = await ui(f.owner.token, 'GET', `/builds/${build.id}`)
  t.equal(got.status, 200)
  assertUiBuild(t, got.body.build)
  t.match(got.body.build, { status: 'completed', progress: 100, imageDigest: digest, finalImageRef: `${f.registry.host}/ada/app:v1@${digest}` })
  t.equal(got.body.build.duration, Date.parse(got.body.build.finished_at) - Date.parse(got.body.build.started_at), 'the page shows a finished build\'s duration (ms)')
  t.ok(got.body.build.duration >= 0)
  const after = (await f.call(f.owner, 'GET', `/v1/api/workflows/${wf.body.id}`)).body
  t.equal(after.nodes.find((n: any) => n.id === 'deployment-app').data.image, `${f.registry.host}/ada/app:v1@${digest}`, 'the waiting node got the image')
  t.same(after.nodes.find((n: any) => n.id === 'deployment-web'), other, 'the other node is untouched')
})

/** The build page's state after these events, applied as useBuildStream applies them (CONTRACT.md §4 "Build"). */
function pageState(events: Array<{ type: string; data: any }>): any {
  let build: any = null
  for (const { type, data } of events) {
    const d = data?.data ?? data
    if (type === 'metadata') build = data
    else if (!build) build = data
    else if (type === 'progress') build = { ...build, status: d.status || build.status, currentStage: d.current_stage || d.currentStage || build.currentStage, progress: d.progress ?? build.progress }
    else if (type === 'complete') build = { ...build, status: 'completed', progress: 100, finalImageRef: d.final_image_ref || d.finalImageRef || build.finalImageRef }
    else if (type === 'failed') build = { ...build, status: 'failed', errorMessage: d.error_message || d.errorMessage || d.error }
    else if (type === 'cancelled') build = { ...build, status: 'cancelled' }
  }
  return build
}

t.test('a build page opened before the build started: startedAt comes with a later metadata, the duration with the last (OBSERVED.md, last section)', async (t) => {
  // The Job's creation is held, so the page's stream opens while the build is pending and has no start time.
  const jobCreated = f.sim.faults.hold({ method: 'POST', pathPrefix: '/apis/batch/v1/namespaces/' })
  t.teardown(() => jobCreated.release())
  const started = await ui(f.owner.token, 'POST', '/builds/start', { repoUrl: f.repo.url, branch: 'main', registryId: f.registryId, imageName: 'ada/timed', imageTag: 'v1', buildContext: '.', useNixpacks: false, dockerfile: 'Dockerfile' })
  t.equal(started.status, 201, JSON.stringify(started.body))
  await jobCreated.reached
  const stream = await uiStream(started.body.build.id)
  t.equal(stream.status, 200)
  await stream.until('the first metadata', (events) => events.some((e) => e.type === 'metadata'))
  jobCreated.release()
  await stream.until('the terminal event', terminal, 30_000)
  await stream.ended
  const events = asTheUiParses(stream.raw())
  const metas = events.map((e, i) => ({ ...e, i })).filter((e) => e.type === 'metadata')
  t.equal(metas[0].i, 0)
  t.match(metas[0].data, { status: 'pending' })
  t.notOk(metas[0].data.startedAt, 'opened before the build started: no start time yet (the page shows "Started -")')
  t.equal(pageState(events.slice(0, 1)).startedAt ?? null, null)

  const live = metas.find((m) => typeof m.data.startedAt === 'string')
  t.ok(live, 'a later metadata carries startedAt')
  t.ok(Date.parse(live!.data.startedAt) >= Date.parse(live!.data.createdAt), 'started after it was created')
  t.ok(['pending', 'cloning', 'building', 'pushing'].includes(live!.data.status), `while the build runs (${live!.data.status}): the page counts the elapsed time from it`)
  const whileRunning = pageState(events.slice(0, live!.i + 1))
  t.equal(whileRunning.startedAt, live!.data.startedAt, 'the page state has it at once, no reload')

  const end = events.findIndex((e) => e.type === 'complete')
  const last = metas.at(-1)!
  t.ok(last.i < end, 'the last metadata comes before complete')
  t.match(last.data, { status: 'completed', startedAt: live!.data.startedAt, completedAt: String })
  t.equal(last.data.duration, Date.parse(last.data.completedAt) - Date.parse(last.data.startedAt), 'the finished build\'s duration (the page shows it once the timer stops)')
  const final = pageState(events)
  t.match(final, { status: 'completed', startedAt: live!.data.startedAt, duration: last.data.duration }, 'the page after complete: Started and Duration filled')
  t.same(events.filter((e) => e.type === 'metadata').map((e) => e.data.id), metas.map(() => started.body.build.id))
})

t.test('cancel through the adapter: the stream ends with cancelled', async (t) => {
  const hold = f.sim.failingBuilds.hold('ada/cancel', 'clone')
  t.teardown(() => hold.release())
  const started = await ui(f.owner.token, 'POST', '/builds/start', { repoUrl: f.repo.url, branch: 'main', registryId: f.registryId, imageName: 'ada/cancel', imageTag: 'v1', buildContext: '.', useNixpacks: false, dockerfile: 'Dockerfile' })
  t.equal(started.status, 201, JSON.stringify(started.body))
  await hold.reached
  const stream = await uiStream(started.body.build.id)
  const cancelled = await ui(f.owner.token, 'POST', `/builds/${started.body.build.id}/cancel`)
  t.equal(cancelled.status, 200)
  t.equal(cancelled.body.build.status, 'cancelled')
  await stream.until('cancelled', (events) => events.some((e) => e.type === 'cancelled'))
  await stream.ended
  const events = asTheUiParses(stream.raw())
  t.equal(events[0].type, 'metadata')
  t.equal(events.at(-1)!.type, 'cancelled')
  const again = await ui(f.owner.token, 'POST', `/builds/${started.body.build.id}/cancel`)
  t.equal(again.status, 409)
  t.match(again.body, { error: String, message: String })
})

t.test('refusals: no default cluster, bad input, another user\'s build', async (t) => {
  const stranger = await registerUser(f.app, { role: 'user' })
  const body = { repoUrl: f.repo.url, branch: 'main', registryId: f.registryId, imageName: 'ada/app', imageTag: 'v1', buildContext: '.', useNixpacks: true }
  const noCluster = await ui(stranger.token, 'POST', '/builds/start', body)
  t.equal(noCluster.status, 400)
  t.match(noCluster.body, { error: /no default cluster/, message: /no default cluster/ })

  for (const [bad, why] of [
    [{ ...body, repoUrl: undefined }, /repo_url/],
    [{ ...body, imageTag: 'not a tag' }, /image_tag/],
    [{ ...body, buildContext: 'web', useNixpacks: false, dockerfile: 'Dockerfile' }, /dockerfile must not contain "\.\."/],
    [{ ...body, registryId: 'nope' }, /registry not found/],
    [{ ...body, surprise: 1 }, /additional propert/],
  ] as const) {
    const res = await ui(f.owner.token, 'POST', '/builds/start', bad)
    t.ok(res.status === 400 || res.status === 404, `${JSON.stringify(bad).slice(0, 80)} → ${res.status}`)
    t.match(res.body, { error: why, message: String })
  }
  const wf = await f.call(f.owner, 'POST', '/v1/api/workflows', { name: 'nothing-waits', cluster_id: 'sim' })
  const none = await ui(f.owner.token, 'POST', '/builds/start', { ...body, workflowId: wf.body.id })
  t.equal(none.status, 400)
  t.match(none.body.error, /no node waiting for a build/)

  const list = await f.call(f.owner, 'GET', '/v1/api/builds')
  const mine = list.body.builds[0].id
  const theirs = await ui(stranger.token, 'GET', `/builds/${mine}`)
  t.equal(theirs.status, 404)
  t.match(theirs.body, { error: String, message: String })
  t.equal((await ui(stranger.token, 'POST', `/builds/${mine}/cancel`)).status, 404)
  const s = await uiStream(mine, stranger.token)
  t.equal(s.status, 404, 'another user\'s stream is a 404 before any event')
})
