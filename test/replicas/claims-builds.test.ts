// A build is followed by one replica; when that replica stops (its builds handed over, heartbeat stale), two
// replicas starting at once race to take it over (issue 25 item 3): exactly one re-attaches, the Job is never
// created again, and the build's end is recorded and announced once. The claim itself is one conditional
// update: of ten takers racing with the same view of the build, one wins.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { Writable } from 'node:stream'
import { simClusterBody } from '../helpers/kube.ts'
import { startTestDatabase } from '../helpers/database.ts'
import { registerUser } from '../helpers/auth.ts'
import { waitFor } from '../kube-sim/test-helpers.ts'
import { buildApp } from '../../src/app.ts'
import { testConfig } from '../../src/config.ts'
import { BuildRepository, type BuildDoc } from '../../src/repositories/builds.ts'
import type { App } from '../../src/app-types.ts'
import { NS, startBuildWorld } from '../builds/fixture.ts'

const { sim, db, registry, kubectl, repo } = await startBuildWorld(t)

// Stale after three periods (0.9 s): shorter than a re-attach on a loaded machine. The claim holds the build
// alive for the re-attach's longest time, so the other replica does not take it again (before that, at 500 ms
// both re-attached it about one run in three).
const HEARTBEAT_MS = 300
const config = testConfig({
  MONGODB_URI: db.uri, MONGODB_DB: db.dbName, LOG_LEVEL: 'info', ALLOW_INSECURE_CLUSTERS: true, RUN_HEARTBEAT_MS: HEARTBEAT_MS, REPLICA_MODE: 'shared',
  JWT_SECRET: randomBytes(32).toString('hex'), ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  CLUSTER_HEALTH_CRON: '0 0 1 1 *', STATS_REFRESH_CRON: '0 0 1 1 *',
})
interface Replica { app: App; logs: string[] }
async function start(): Promise<Replica> {
  const logs: string[] = []
  const app = await buildApp(config, { logStream: new Writable({ write(c, _e, done) { logs.push(String(c)); done() } }) })
  t.teardown(() => app.close())
  await app.ready()
  return { app, logs }
}

const stored = (id: string) => db.db.collection<BuildDoc>('builds').findOne({ _id: id })
/** The two replicas the first test leaves running, for the next. */
let later: { b: Replica; c: Replica; owner: Record<string, string>; registryId: string } | undefined

t.test('two replicas starting together: one takes the stopped replica\'s build over, the Job is not created again', async (t) => {
  const first = await start()
  const admin = await registerUser(first.app, { role: 'admin' })
  const owner = await registerUser(first.app, { role: 'user' })
  const call = async (method: 'GET' | 'POST', url: string, payload?: object, headers = owner.headers) => {
    const res = await first.app.inject({ method, url, headers, ...(payload && { payload }) })
    return { status: res.statusCode, body: res.body ? res.json() : undefined }
  }
  const reg = await call('POST', '/v1/api/admin/registries', { name: 'loopback', registry_type: 'custom', url: registry.url, username: registry.username, password: registry.password }, admin.headers)
  t.equal(reg.status, 201)
  t.equal((await call('POST', '/v1/api/clusters', simClusterBody(sim, 'sim'))).status, 201)
  const hold = sim.failingBuilds.hold('team/takeover', 'build')
  t.teardown(() => hold.release())
  const started = await call('POST', '/v1/api/builds/start', { repo_url: repo.url, registry_id: reg.body.id, image_name: 'team/takeover', image_tag: 'v1', cluster: 'sim', namespace: NS })
  t.equal(started.status, 201, JSON.stringify(started.body))
  const id = started.body.id as string
  await hold.reached
  await waitFor('building', async () => (await stored(id))?.status === 'building', 20_000, 20)
  const jobUid = (await kubectl('-n', NS, 'get', 'job', `build-${id}`, '-o', 'jsonpath={.metadata.uid}')).trim()
  const firstInstance = (await stored(id))!.instance_id

  // The first replica stops following (its Job goes on in the cluster), leaving the build for the others.
  await first.app.close()
  t.equal((await stored(id))!.status, 'building')
  // A tripwire: the next Job create in the namespace fails with this message. Still armed at the end = nobody created one.
  sim.faults.failNext(1, 422, { method: 'POST', pathPrefix: `/apis/batch/v1/namespaces/${NS}/jobs`, message: 'tripwire: a Job create' })

  const [b, c] = await Promise.all([start(), start()])
  later = { b, c, owner: owner.headers, registryId: reg.body.id }
  const ended: string[] = []
  for (const r of [b, c]) r.app.bus.on('build.changed', (e) => { if (e.build_id === id && e.status === 'completed') ended.push(r.app.replica.id) })
  const taken = await waitFor('taken over', async () => { const d = await stored(id); return d && d.instance_id !== firstInstance && d }, 20_000, 20)
  // Three heartbeat periods of both replicas' periodic sweeps pass while the build is still held.
  const since = Date.now()
  await waitFor('three more heartbeat periods', async () => { const d = await stored(id); return d && d.heartbeat_at.getTime() > since + 3 * HEARTBEAT_MS }, 20_000, 20)
  t.equal((await stored(id))!.instance_id, taken.instance_id, 'still followed by the replica that took it')
  const reattached = [b, c].map((r) => r.logs.join('').split('\n').filter((l) => l.includes(id) && /re-attached/.test(l)).length)
  t.same(reattached.slice().sort(), [0, 1], `exactly one replica re-attached it (${reattached.join(', ')})`)

  hold.release()
  const done = await waitFor('the outcome', async () => { const d = await stored(id); return d && d.status !== 'building' && d.status !== 'pushing' && d }, 30_000, 20)
  t.equal(done.status, 'completed', done.error ?? '')
  t.equal(done.image_digest, registry.manifest('team/takeover', 'v1')?.digest)
  await waitFor('the end announced', async () => ended.length > 0, 5000, 10)
  t.equal(ended.length, 1, 'the end is announced by one replica')
  t.equal((await kubectl('-n', NS, 'get', 'job', `build-${id}`, '-o', 'jsonpath={.metadata.uid}')).trim(), jobUid, 'the same Job')
  const again = await kubectl('-n', NS, 'create', 'job', 'probe', '--image=busybox').then(() => '', (err: { stderr?: string }) => String(err.stderr))
  t.match(again, /tripwire: a Job create/, 'no replica tried to create a Job during the takeover (the tripwire was still armed)')
})

t.test('ten takers racing with the same view of an abandoned build: one claim matches', async (t) => {
  // Its own database: the replicas of the other tests would take this build over first.
  const own = await startTestDatabase(t)
  const repo = new BuildRepository(own.db)
  const at = new Date(Date.now() - 60_000)
  const id = repo.newId()
  await own.db.collection<BuildDoc>('builds').insertOne({
    _id: id, owner_id: 'u', repo_url: 'http://x', branch: null, commit: null, context_dir: '.', dockerfile: 'Dockerfile', build_args: {}, registry_id: 'r',
    image_name: 'i', image_tag: 't', cluster: 'c', cluster_id: 'c', namespace: NS, workflow_id: null, node_id: null, status: 'building', phase: 'build',
    progress: 50, image_ref: null, image_digest: null, error: null, node_updated: null, job_name: `build-${id}`, logs: [], logs_truncated: false,
    created_at: at, started_at: at, finished_at: null, updated_at: at, instance_id: 'dead', heartbeat_at: at,
  })
  const [seen] = (await repo.abandoned('taker', new Date())).filter((d) => d._id === id)
  const wins = await Promise.all(Array.from({ length: 10 }, (_, i) => repo.claim(id, seen, `taker-${i}`, new Date(Date.now() + 60_000))))
  t.equal(wins.filter(Boolean).length, 1, 'one taker')
  t.equal((await own.db.collection<BuildDoc>('builds').findOne({ _id: id }))!.instance_id, `taker-${wins.indexOf(true)}`)
})

t.test('a replica that lost its build to another (it was silent too long) stops following it and writes nothing more', async (t) => {
  if (!later) throw new Error('needs the replicas of the first test')
  const { b, c } = later
  const hold = sim.failingBuilds.hold('team/fenced', 'build')
  t.teardown(() => hold.release())
  const res = await b.app.inject({ method: 'POST', url: '/v1/api/builds/start', headers: later.owner, payload: { repo_url: repo.url, registry_id: later.registryId, image_name: 'team/fenced', image_tag: 'v1', cluster: 'sim', namespace: NS } })
  t.equal(res.statusCode, 201, res.body)
  const id = res.json().id as string
  await hold.reached
  await waitFor('building, with lines kept', async () => { const d = await stored(id); return d?.status === 'building' && d.logs.length > 0 }, 20_000, 20)
  const ended: string[] = []
  for (const r of [b, c]) r.app.bus.on('build.changed', (e) => { if (e.build_id === id && e.status === 'completed') ended.push(r.app.replica.id) })
  // As if b had been frozen for three periods and a replica since gone had taken the build over.
  await db.db.collection<BuildDoc>('builds').updateOne({ _id: id }, { $set: { instance_id: 'replica-gone-since', heartbeat_at: new Date(Date.now() - 60_000) } })
  // b notices at its next heartbeat (its mark no longer matches) or at its next progress write (refused): it stops following.
  await b.app.services.builds.finished(id)
  t.pass('b no longer follows the build')
  // Nobody beats for the vanished taker: one of the live replicas takes the build over and follows it to the end.
  await waitFor('taken over again', async () => { const d = await stored(id); return d && d.instance_id !== 'replica-gone-since' && d.heartbeat_at.getTime() > Date.now() - 1000 }, 20_000, 20)
  hold.release()
  const done = await waitFor('the outcome', async () => { const d = await stored(id); return d && ['completed', 'failed'].includes(d.status) && d }, 30_000, 20)
  t.equal(done.status, 'completed', done.error ?? '')
  await waitFor('the end announced', async () => ended.length > 0, 5000, 10)
  t.equal(ended.length, 1, 'the end is announced once')
  const lines = done.logs.map((l) => l.line)
  t.equal(lines.filter((l) => /load build definition from Dockerfile/.test(l)).length, 1, 'no line twice')
  t.ok(lines.some((l) => /pushing manifest/.test(l)), 'the lines after the takeover are kept')
})
