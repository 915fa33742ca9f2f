// The database going away under a running service (API.md §14): every request that needs it, a read or a
// write, on /v1/api and on the KubeOrch adapter, answers 503 `{error: "the database is unavailable"}` with
// Retry-After (never 500), within the server-selection timeout; the audit entries of that time (and of
// writes acknowledged just before it went) are held, not dropped, and written once it is back.
//
// The database is the embedded server as its own process (`npm run embedded-db`) on a TCP port and a data
// directory; the test kills it under the app and starts it again on the same port and directory.
import t from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { MongoClient } from 'mongodb'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'
import { freePort } from '../helpers/ports.ts'
import { waitFor } from '../kube-sim/test-helpers.ts'
import type { AuditDoc } from '../../src/repositories/audit.ts'

const dataDir = await mkdtemp(join(tmpdir(), 'db-away-'))
t.teardown(() => rm(dataDir, { recursive: true, force: true }))
const port = await freePort()

interface DbProcess { child: ChildProcess; uri: string; exited: Promise<unknown> }
let db: DbProcess | undefined

/** Starts the embedded database as a process on `port` and `dataDir`, and waits for the URI it prints. */
async function startDb(): Promise<DbProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/embedded-mongo/cli.ts'], {
    cwd: process.cwd(),
    env: { ...process.env, EMBEDDED_DB: 'disk', DATA_DIR: dataDir, EMBEDDED_DB_PORT: String(port), EMBEDDED_DB_HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr!.on('data', (d) => { stderr += d })
  const exited = once(child, 'exit')
  const line = once(createInterface({ input: child.stdout! }), 'line') as Promise<[string]>
  const [uri] = await Promise.race([line, exited.then(() => { throw new Error(`embedded-db exited:\n${stderr}`) })])
  return { child, uri: uri.trim(), exited }
}

async function stopDb(): Promise<void> {
  const current = db
  if (!current || current.child.exitCode !== null || current.child.signalCode !== null) return
  // Abruptly, as a crash or a stopped container would: nothing is closed cleanly for the app.
  current.child.kill('SIGKILL')
  await current.exited
}

db = await startDb()
t.teardown(stopDb)
// A crashed test process must not leave the database behind.
process.once('exit', () => { if (db && db.child.exitCode === null) db.child.kill('SIGKILL') })

const dbName = 'db_away'
const client = new MongoClient(db.uri, { serverSelectionTimeoutMS: 5000 })
t.teardown(() => client.close())
// Short, so the test is quick; the default (5 s) is the same path.
const { app, logs } = await startTestApp(t, { MONGODB_SERVER_SELECTION_TIMEOUT_MS: 500 }, {
  database: { uri: db.uri, dbName, client, db: client.db(dbName), close: async () => {} },
})
const owner = await registerUser(app)

type Method = 'GET' | 'POST' | 'PUT'
const call = async (method: Method, url: string, payload?: object) => {
  const res = await app.inject({ method, url, headers: owner.headers, ...(payload && { payload }) })
  return { status: res.statusCode, headers: res.headers, body: res.body ? res.json() : undefined }
}

const graph = { nodes: [{ id: 'web', type: 'deployment', position: { x: 0, y: 0 }, data: { name: 'web', namespace: 'default', image: 'nginx:1.27', replicas: 1 } }], edges: [] }
const created = await call('POST', '/v1/api/workflows', { name: 'before the outage' })
if (created.status !== 201) throw new Error(`workflow: ${created.status}`)
const existing = created.body.id as string
const acknowledged: string[] = []

const WHILE_AWAY: Array<{ method: Method; url: string; body?: object; audited: boolean }> = [
  { method: 'GET', url: '/v1/api/workflows', audited: false },
  { method: 'GET', url: `/v1/api/workflows/${existing}`, audited: false },
  { method: 'GET', url: '/v1/api/profile', audited: false },
  { method: 'POST', url: '/v1/api/workflows', body: { name: 'during the outage' }, audited: true },
  { method: 'POST', url: `/v1/api/workflows/${existing}/save`, body: graph, audited: true },
  { method: 'GET', url: '/kubeorch/v1/api/workflows', audited: false },
  { method: 'GET', url: `/kubeorch/v1/api/workflows/${existing}`, audited: false },
  { method: 'POST', url: '/kubeorch/v1/api/workflows', body: { name: 'during the outage (UI)' }, audited: true },
  { method: 'POST', url: `/kubeorch/v1/api/workflows/${existing}/save`, body: graph, audited: true },
]

t.test('writes acknowledged just before the database goes', async (t) => {
  // Their audit entries are still queued (the recorder writes a moment later) when it goes.
  for (let i = 0; i < 3; i++) {
    const res = await call('POST', '/v1/api/workflows', { name: `acknowledged ${i}` })
    t.equal(res.status, 201, `write ${i} acknowledged`)
    acknowledged.push(res.body.id)
  }
  await stopDb()
})

t.test('while the database is away, reads and writes on both prefixes answer 503 with Retry-After, never 500', async (t) => {
  for (const r of WHILE_AWAY) {
    const started = performance.now()
    const res = await call(r.method, r.url, r.body)
    const ms = Math.round(performance.now() - started)
    t.equal(res.status, 503, `${r.method} ${r.url}: 503`)
    t.match(res.headers['retry-after'], /^[1-9]\d*$/, `${r.method} ${r.url}: Retry-After in seconds`)
    t.equal(res.body?.error, 'the database is unavailable', `${r.method} ${r.url}: the one error text`)
    if (r.url.startsWith('/kubeorch/')) t.equal(res.body?.message, 'the database is unavailable', 'the UI\'s `message` too')
    t.notMatch(JSON.stringify(res.body), /Mongo|ECONNREFUSED|127\.0\.0\.1|server selection/i, 'no driver text')
    t.comment(`${r.method} ${r.url}: 503 after ${ms} ms`)
  }
  t.notOk(logs.some((l) => l.includes('"unhandled error"')), 'nothing is logged as a bug')
  // The recorder writes in the background: its first try at the refused writes' entries may still be on its way.
  await waitFor('the audit entries held for the database', () => app.audit.recorder.waitingForDatabase)
  t.ok(app.audit.recorder.waitingForDatabase, 'the audit entries are held for the database')
})

t.test('once the database is back, the service answers again and the held audit entries are written, once each', async (t) => {
  db = await startDb()
  // The first request makes the driver look for the server at once (and its heartbeat wakes the recorder).
  const again = await call('GET', `/v1/api/workflows/${existing}`)
  t.equal(again.status, 200, 'reads work again')
  await app.audit.recorder.flush()
  t.notOk(app.audit.recorder.waitingForDatabase)
  const audit = app.db.collection<AuditDoc>('audit')
  for (const id of acknowledged) {
    t.equal(await audit.countDocuments({ action: 'workflow.create', target_id: id, outcome: 'ok', status: 201 }), 1, `the acknowledged write ${id} has its entry`)
  }
  // By status: a request refused while its token's account could not be looked up has no actor.
  const refused = await audit.find({ status: 503 }).toArray()
  const expected = WHILE_AWAY.filter((r) => r.audited).length
  t.equal(refused.length, expected, `the ${expected} writes refused meanwhile each have one entry`)
  t.ok(refused.every((e) => e.outcome === 'failed'), 'recorded as failed')
  t.same(refused.map((e) => e.action).sort(), ['workflow.create', 'workflow.create', 'workflow.save', 'workflow.save'])
  t.same(new Set(refused.map((e) => e.request_id)).size, expected, 'no entry twice')
  t.match(logs.join(''), /the database is away: audit entries are held until it answers/)
  t.notMatch(logs.join(''), /audit entries could not be written/, 'nothing given up on')
})
