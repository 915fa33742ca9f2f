// Restarts: the service stops while a build runs (its Job goes on in the cluster) and a new process on the
// same database re-attaches: still running → followed to the end (the log not repeated); finished while
// nobody watched → the outcome read and recorded (digest confirmed); Job gone → failed, saying so. A second
// live replica leaves the builds of the first alone.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { Writable } from 'node:stream'
import { simClusterBody } from '../helpers/kube.ts'
import { registerUser } from '../helpers/auth.ts'
import { waitFor } from '../kube-sim/test-helpers.ts'
import { buildApp } from '../../src/app.ts'
import { testConfig } from '../../src/config.ts'
import type { App } from '../../src/app-types.ts'
import { NS, startBuildWorld } from './fixture.ts'

const { sim, db, registry, kubectl, repo } = await startBuildWorld(t)

const config = testConfig({
  MONGODB_URI: db.uri, MONGODB_DB: db.dbName, LOG_LEVEL: 'info', ALLOW_INSECURE_CLUSTERS: true, RUN_HEARTBEAT_MS: 100,
  JWT_SECRET: randomBytes(32).toString('hex'), ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  CLUSTER_HEALTH_CRON: '0 0 1 1 *', STATS_REFRESH_CRON: '0 0 1 1 *',
})
const logs: string[] = []
async function start(): Promise<App> {
  const app = await buildApp(config, { logStream: new Writable({ write(c, _e, done) { logs.push(String(c)); done() } }) })
  await app.ready()
  return app
}

let app = await start()
t.teardown(() => app.close())
const admin = await registerUser(app, { role: 'admin' })
const owner = await registerUser(app, { role: 'user' })
const call = async (method: 'GET' | 'POST', url: string, payload?: object, headers = owner.headers) => {
  const res = await app.inject({ method, url, headers, ...(payload && { payload }) })
  return { status: res.statusCode, body: res.body ? res.json() : undefined }
}
const reg = await call('POST', '/v1/api/admin/registries', { name: 'loopback', registry_type: 'custom', url: registry.url, username: registry.username, password: registry.password }, admin.headers)
if (reg.status !== 201) throw new Error(`registry: ${reg.status}`)
const cluster = await call('POST', '/v1/api/clusters', simClusterBody(sim, 'sim'))
if (cluster.status !== 201) throw new Error(`cluster: ${cluster.status}`)
const startBuild = async (image: string) => {
  const res = await call('POST', '/v1/api/builds/start', { repo_url: repo.url, registry_id: reg.body.id, image_name: image, image_tag: 'v1', cluster: 'sim', namespace: NS })
  t.equal(res.status, 201, JSON.stringify(res.body))
  return res.body.id as string
}
const stored = (id: string) => db.db.collection('builds').findOne({ _id: id as never })
const ended = (b: { status: string }) => ['completed', 'failed', 'cancelled'].includes(b.status)
const until = (id: string, pred: (b: any) => boolean, what: string) => waitFor(what, async () => { const b = await stored(id); return b && pred(b) && b }, 20_000, 20)

t.test('stopped during the build: the next process follows it to the end, the log kept once', async (t) => {
  const hold = f_hold('team/restart-a', 'build')
  const id = await startBuild('team/restart-a')
  await hold.reached
  await until(id, (b) => b.status === 'building' && b.logs.length > 0, 'building, with clone lines kept')
  await app.close()
  t.equal((await stored(id))?.status, 'building', 'a shutdown leaves the build running: its Job goes on')
  app = await start()
  hold.release()
  const done = await until(id, ended, 'the outcome')
  t.equal(done.status, 'completed', done.error)
  t.equal(done.image_digest, registry.manifest('team/restart-a', 'v1')?.digest)
  const lines = done.logs.map((l: { line: string }) => l.line)
  t.equal(lines.filter((l: string) => /load build definition from Dockerfile/.test(l)).length, 1, 'no line twice')
  t.ok(lines.some((l: string) => /From http/.test(l)), 'the clone lines from before the restart are kept')
  t.ok(lines.some((l: string) => /pushing manifest/.test(l)), 'the lines after it are added')
  t.notOk(await exists('secret', `build-${id}`))
  t.equal(logs.join('').split('\n').filter((l) => l.includes(id) && /re-attached/.test(l)).length, 1, 'one log line says so')
})

t.test('finished while no process watched: the outcome is read and recorded', async (t) => {
  const hold = f_hold('team/restart-b', 'push')
  const id = await startBuild('team/restart-b')
  await hold.reached
  await app.close()
  hold.release()
  await waitFor('the Job to complete', async () => (await kubectl('-n', NS, 'get', 'job', `build-${id}`, '-o', 'jsonpath={.status.succeeded}')).trim() === '1', 20_000, 50)
  app = await start()
  const done = await until(id, ended, 'the outcome')
  t.equal(done.status, 'completed', done.error)
  t.equal(done.image_digest, registry.manifest('team/restart-b', 'v1')?.digest, 'confirmed against the registry')
})

t.test('Job gone while no process watched: failed, saying what happened', async (t) => {
  const hold = f_hold('team/restart-c', 'build')
  t.teardown(() => hold.release())
  const id = await startBuild('team/restart-c')
  await hold.reached
  await app.close()
  await kubectl('-n', NS, 'delete', 'job', `build-${id}`, '--wait=false')
  await waitFor('the Job gone', async () => !(await exists('job', `build-${id}`)), 15_000, 50)
  app = await start()
  const done = await until(id, (b) => b.status === 'failed', 'failed')
  t.match(done.error, /^interrupted: the build's Job is gone from the cluster/)
  const res = await call('GET', `/v1/api/builds/${id}`)
  t.equal(res.body.status, 'failed')
})

t.test('a second live replica on the same database leaves this one\'s builds alone', async (t) => {
  const hold = f_hold('team/restart-d', 'build')
  const id = await startBuild('team/restart-d')
  await hold.reached
  const before = (await stored(id))!.instance_id
  const other = await start()
  const since = Date.now()
  // Past three heartbeat periods of the replica's sweeps, the build's own process still saying it is alive.
  await until(id, (b) => b.heartbeat_at.getTime() > since + 400, 'heartbeats beyond three periods')
  t.equal((await stored(id))!.instance_id, before, 'still followed by its own process')
  hold.release()
  const done = await until(id, ended, 'the outcome')
  t.equal(done.status, 'completed')
  t.equal(done.instance_id, before, 'the replica did not take it over')
  await other.close()
  const text = logs.join('')
  t.notOk(text.includes(registry.password), 'no registry password in either process\'s log')
  t.notOk(JSON.stringify(await db.db.collection('builds').find({}).toArray()).includes(registry.password))
})

function f_hold(image: string, phase: 'clone' | 'build' | 'push') { return sim.failingBuilds.hold(image, phase) }
async function exists(kind: string, name: string): Promise<boolean> {
  return (await kubectl('-n', NS, 'get', kind, name, '--ignore-not-found', '-o', 'name')).trim() !== ''
}
