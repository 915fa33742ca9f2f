// Sessions a process leaves behind: at start-up, one left `analyzing` by a dead process (no heartbeat for
// three periods) is failed as interrupted; one whose process still beats is left alone until it stops; a
// graceful shutdown records its unfinished sessions as interrupted instead of leaving them pending forever.
import t from 'tap'
import http from 'node:http'
import { Writable } from 'node:stream'
import { randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { startTestDatabase } from '../helpers/database.ts'
import { registerUser } from '../helpers/auth.ts'
import { waitFor } from '../kube-sim/test-helpers.ts'
import { buildApp } from '../../src/app.ts'
import { testConfig } from '../../src/config.ts'
import { newId } from '../../src/repositories/ids.ts'
import type { App } from '../../src/app-types.ts'

const db = await startTestDatabase(t)
const JWT_SECRET = randomBytes(32).toString('hex')
// Stale after three periods (1.5 s): long enough that the test's own beats, on the event loop the starting app
// shares, are not held past it on a loaded machine (at 100 ms, a 300 ms start-up stall failed the live session).
const HEARTBEAT_MS = 500

const logs: string[] = []
const logStream = new Writable({ write(chunk, _enc, done) { logs.push(String(chunk)); done() } })

async function start(overrides: Parameters<typeof testConfig>[0] = {}): Promise<App> {
  const app = await buildApp(testConfig({
    LOG_LEVEL: 'info', MONGODB_URI: db.uri, MONGODB_DB: db.dbName, JWT_SECRET, RUN_HEARTBEAT_MS: HEARTBEAT_MS,
    CLUSTER_HEALTH_CRON: '0 0 1 1 *', STATS_REFRESH_CRON: '0 0 1 1 *', ...overrides,
  }), { logStream })
  await app.ready()
  return app
}

const sessions = db.db.collection('import_sessions')
function leftBehind(ownerId: string, heartbeatAgoMs: number, status = 'analyzing') {
  const now = Date.now()
  return {
    _id: newId() as never, owner_id: ownerId, source: 'compose', status, progress: 50, message: 'analyzing the compose file', error: null, analysis: null,
    filename: null, url: null, branch: null, path: null, commit: null, logs: ['2026-11-24T00:00:00.000Z analyzing compose.yaml (120 bytes)'],
    created_at: new Date(now - 60_000), updated_at: new Date(now - 60_000), finished_at: null, expires_at: new Date(now + 3_600_000),
    instance_id: `dead-${newId()}`, heartbeat_at: new Date(now - heartbeatAgoMs),
  }
}

const first = await start()
const user = await registerUser(first)
await first.close()

t.test('a session a dead process left analyzing is failed (interrupted) at the next start', async (t) => {
  const dead = leftBehind(user.user.id, 60_000)
  const alive = leftBehind(user.user.id, 0, 'cloning')
  await sessions.insertMany([dead, alive])
  // The other replica, still working on `alive`, beats until it stops.
  const beating = setInterval(() => { void sessions.updateOne({ _id: alive._id }, { $set: { heartbeat_at: new Date() } }) }, HEARTBEAT_MS / 4)
  t.teardown(() => clearInterval(beating))
  const app = await start()
  t.teardown(() => app.close())

  const res = await app.inject({ url: `/v1/api/import/${dead._id}`, headers: user.headers })
  t.equal(res.statusCode, 200)
  t.match(res.json(), { status: 'failed', error: /^interrupted: the service stopped before this import finished/, progress: 50 })
  t.ok(res.json().finished_at)
  t.equal(res.json().logs.length, 2, 'the log is kept, with the reason added')
  t.ok(logs.some((l) => l.includes(`import ${dead._id} was analyzing when the service stopped: marked failed (interrupted)`)), 'and says so in the log')

  // Another process that still beats is left alone, until it stops beating.
  const other = await sessions.findOne({ _id: alive._id })
  t.equal(other?.status, 'cloning', 'a session whose process beats recently is not touched at start')
  clearInterval(beating)
  await waitFor('the heartbeat sweep to fail the silent session', async () => (await sessions.findOne({ _id: alive._id }))?.status === 'failed', 10_000, 20)
  t.pass('failed once its process stopped beating')
})

t.test('one import at a time (IMPORT_CONCURRENCY=1): the next waits pending; a graceful shutdown records both as interrupted', async (t) => {
  const silent = http.createServer(() => { /* never answers */ })
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { silent.closeAllConnections(); silent.close() })
  const app = await start({ ALLOW_INSECURE_CLUSTERS: true, SHUTDOWN_GRACE_MS: 400, IMPORT_CONCURRENCY: 1 })
  const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/slow.git`
  const first = await app.inject({ method: 'POST', url: '/v1/api/import/analyze', headers: user.headers, payload: { source: 'git', url } })
  t.equal(first.statusCode, 201)
  await waitFor('the first session to start fetching', async () => (await sessions.findOne({ _id: first.json().id }))?.status === 'cloning', 10_000, 20)
  const second = await app.inject({ method: 'POST', url: '/v1/api/import/analyze', headers: user.headers, payload: { source: 'compose', content: 'services:\n  web:\n    image: nginx\n' } })
  t.equal(second.statusCode, 201)
  const waiting = await app.inject({ url: `/v1/api/import/${second.json().id}`, headers: user.headers })
  t.equal(waiting.json().status, 'pending', 'the second waits for the first')
  await app.close()
  for (const id of [first.json().id, second.json().id]) {
    t.match(await sessions.findOne({ _id: id }), { status: 'failed', error: /^interrupted: the service shut down before this import finished/ })
  }
})
