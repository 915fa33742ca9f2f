// A process that dies mid-run (SIGKILL: no shutdown hook runs) leaves its run `running`; the next start marks
// it failed ("interrupted"), keeps what it had recorded, releases the workflow's run lock and says so in one
// log line. A graceful shutdown gives a run in flight SHUTDOWN_GRACE_MS, then records it as interrupted; on
// SIGTERM the run's final `complete` reaches a subscriber of its workflow's stream before the stream ends.
import t from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { randomBytes } from 'node:crypto'
import { Writable } from 'node:stream'
import { startTestDatabase } from '../helpers/database.ts'
import { startTestCluster, simClusterBody } from '../helpers/kube.ts'
import { freePort } from '../helpers/ports.ts'
import { waitFor } from '../kube-sim/test-helpers.ts'
import { buildApp } from '../../src/app.ts'
import { testConfig } from '../../src/config.ts'
import { shopGraph, TRIGGER, SECRET_VALUE, ENV_VALUE } from './fixture.ts'
import { openStream } from '../streams/sse-client.ts'

const root = new URL('../..', import.meta.url).pathname
const sim = await startTestCluster(t)
const db = await startTestDatabase(t)
const secrets = { JWT_SECRET: randomBytes(32).toString('hex'), ENCRYPTION_KEY: randomBytes(32).toString('base64') }

function startServer(port: number, env: Record<string, string> = {}): { child: ChildProcess; output: () => string; base: string } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: root,
    env: {
      ...process.env, ...secrets, PORT: String(port), HOST: '127.0.0.1', MONGODB_URI: db.uri, MONGODB_DB: db.dbName,
      NODE_ENV: 'development', LOG_LEVEL: 'info', RUN_REPLY_WAIT_MS: '0', RUN_READY_TIMEOUT_MS: '3000', RUN_HEARTBEAT_MS: '200',
      CLUSTER_HEALTH_CRON: '0 0 1 1 *', STATS_REFRESH_CRON: '0 0 1 1 *', ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout!.on('data', (d) => { output += d })
  child.stderr!.on('data', (d) => { output += d })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  return { child, output: () => output, base: `http://127.0.0.1:${port}` }
}

async function healthy(server: ReturnType<typeof startServer>): Promise<void> {
  await waitFor('the server to answer', async () => {
    if (server.child.exitCode !== null) throw new Error(`exited early:\n${server.output()}`)
    return fetch(`${server.base}/healthz`).then((r) => r.ok, () => false)
  }, 90_000, 100)
}

const api = async (base: string, token: string | null, method: string, path: string, body?: object) => {
  const res = await fetch(`${base}${path}`, {
    method, headers: { ...(token && { authorization: `Bearer ${token}` }), ...(body && { 'content-type': 'application/json' }) },
    ...(body && { body: JSON.stringify(body) }),
  })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers }
}

t.test('SIGKILL mid-run: the next start fails the run as interrupted, keeps its records and frees the workflow', async (t) => {
  const port = await freePort()
  const first = startServer(port)
  await healthy(first)
  const reg = await api(first.base, null, 'POST', '/v1/api/auth/register', { email: 'ops@example.test', password: 'pw-restart-0123456', name: 'Ops' })
  t.equal(reg.status, 201, JSON.stringify(reg.body))
  const token = reg.body.token as string
  t.equal((await api(first.base, token, 'POST', '/v1/api/clusters', simClusterBody(sim, 'sim'))).status, 201)
  const wf = await api(first.base, token, 'POST', '/v1/api/workflows', { name: 'slow', cluster_id: 'sim' })
  t.equal((await api(first.base, token, 'POST', `/v1/api/workflows/${wf.body.id}/save`, shopGraph({ namespace: 'slow' }))).status, 200)

  // Every API request now takes a while: the run is still applying when the process dies.
  sim.faults.setLatency(250)
  t.teardown(() => sim.faults.reset())
  const started = await api(first.base, token, 'POST', `/v1/api/workflows/${wf.body.id}/run`, { trigger_data: TRIGGER })
  t.equal(started.status, 202)
  const runPath = started.headers.get('location')!
  const progressed = await waitFor('the run to record its first object', async () => {
    const r = await api(first.base, token, 'GET', runPath)
    return r.body.nodes.length > 0 && r.body
  }, 60_000, 50)
  t.equal(progressed.status, 'running')
  const exited = once(first.child, 'exit')
  first.child.kill('SIGKILL')
  await exited
  const stored = await db.db.collection('workflow_runs').findOne({ _id: started.body.id })
  t.equal(stored?.status, 'running', 'the dead process left it running')
  sim.faults.reset()

  const second = startServer(await freePort())
  await healthy(second)
  // At start-up, or within three heartbeats if the dead process had just said it was alive.
  const run = await waitFor('the run to be failed', async () => {
    const r = (await api(second.base, token, 'GET', runPath)).body
    return r.status !== 'running' && r
  }, 10_000, 50)
  t.equal(run.status, 'failed')
  t.match(run.error, /^interrupted: /)
  t.ok(run.finished_at)
  t.ok(run.nodes.length >= progressed.nodes.length, 'the node results recorded before the crash are kept')
  t.same(run.nodes.slice(0, progressed.nodes.length).map((n: { node_id: string }) => n.node_id), progressed.nodes.map((n: { node_id: string }) => n.node_id))
  t.ok(run.logs.length >= progressed.logs.length, 'so are the log lines')
  const lines = second.output().split('\n').filter((l) => l.includes(started.body.id) && /interrupted/.test(l))
  t.equal(lines.length, 1, 'one log line for the interrupted run')
  t.match(await api(second.base, token, 'GET', `/v1/api/workflows/${wf.body.id}`), { body: { run_count: 1, failure_count: 1, current_version: 1 } })
  t.match((await api(second.base, token, 'GET', `/v1/api/workflows/${wf.body.id}/versions/1`)).body, { run_id: started.body.id, run_status: 'failed' })

  const again = await api(second.base, token, 'POST', `/v1/api/workflows/${wf.body.id}/run`, { trigger_data: TRIGGER })
  t.equal(again.status, 202, 'the lock was released: a new run starts')
  const done = await waitFor('the new run to finish', async () => {
    const r = await api(second.base, token, 'GET', again.headers.get('location')!)
    return r.body.status !== 'running' && r.body
  }, 60_000, 100)
  t.equal(done.status, 'completed', JSON.stringify(done.error))
  const everything = JSON.stringify(await db.db.collection('workflow_runs').find({}).toArray()) + first.output() + second.output()
  t.notOk(everything.includes(SECRET_VALUE) || everything.includes(ENV_VALUE), 'no secret in the runs or either process\'s log')
  const exit = once(second.child, 'exit')
  second.child.kill('SIGTERM')
  await exit
})

t.test('graceful shutdown: a run still going after the grace period is recorded as interrupted; a second instance on the database leaves it alone meanwhile', async (t) => {
  const config = testConfig({ RUN_HEARTBEAT_MS: 100, MONGODB_URI: db.uri, MONGODB_DB: db.dbName, RUN_REPLY_WAIT_MS: 60_000, SHUTDOWN_GRACE_MS: 300, LOG_LEVEL: 'info', CLUSTER_HEALTH_CRON: '0 0 1 1 *', STATS_REFRESH_CRON: '0 0 1 1 *', ...secrets })
  const logs: string[] = []
  const app = await buildApp(config, { logStream: new Writable({ write(c, _e, done) { logs.push(String(c)); done() } }) })
  await app.ready()
  const login = await app.inject({ method: 'POST', url: '/v1/api/auth/login', payload: { email: 'ops@example.test', password: 'pw-restart-0123456' } })
  const headers = { authorization: `Bearer ${login.json().token}` }
  const wf = await app.inject({ method: 'POST', url: '/v1/api/workflows', headers, payload: { name: 'graceful', cluster_id: 'sim' } })
  await app.inject({ method: 'POST', url: `/v1/api/workflows/${wf.json().id}/save`, headers, payload: shopGraph({ namespace: 'graceful' }) })
  // Slow enough that the run is still applying after a second instance has started, even on a loaded machine.
  sim.faults.setLatency(2000)
  t.teardown(() => sim.faults.reset())
  // Over a real connection: the server must not wait a minute for this reply when it shuts down.
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  const runStarted = app.bus.next('run.started', (e) => e.workflow_id === wf.json().id)
  const reply = fetch(`${address}/v1/api/workflows/${wf.json().id}/run`, {
    method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ trigger_data: TRIGGER }),
  })
  await runStarted
  // Another replica starting on the same database: the run is alive (heartbeats), so its recovery leaves it.
  const other = await buildApp(config, { logStream: new Writable({ write(_c, _e, done) { done() } }) })
  await other.ready()
  const runId = (await db.db.collection('workflow_runs').findOne({ workflow_id: wf.json().id }))!._id
  t.equal((await db.db.collection('workflow_runs').findOne({ _id: runId }))?.status, 'running', 'a live run of another instance is not interrupted')
  await other.close()
  const closed = app.close()
  const res = await reply
  t.equal(res.status, 202, 'the waiting reply answers at once when shutdown begins')
  t.equal(res.headers.get('location'), `/v1/api/workflows/${wf.json().id}/runs/${runId}`)
  await closed
  sim.faults.reset()
  const run = await db.db.collection('workflow_runs').findOne({ _id: runId })
  t.equal(run?.status, 'failed')
  t.match(run?.error, /^interrupted: the service shut down/)
  const workflow = await db.db.collection('workflows').findOne({ _id: wf.json().id })
  t.notOk(workflow?.running_run_id, 'the lock is released')
})

t.test('SIGTERM mid-run: the workflow stream\'s subscriber receives the run\'s complete (its recorded status), then the stream ends and the process exits 0', async (t) => {
  const server = startServer(await freePort(), { SHUTDOWN_GRACE_MS: '4000' })
  await healthy(server)
  const login = await api(server.base, null, 'POST', '/v1/api/auth/login', { email: 'ops@example.test', password: 'pw-restart-0123456' })
  t.equal(login.status, 200)
  const token = login.body.token as string
  const wf = await api(server.base, token, 'POST', '/v1/api/workflows', { name: 'sigterm', cluster_id: 'sim' })
  t.equal((await api(server.base, token, 'POST', `/v1/api/workflows/${wf.body.id}/save`, shopGraph({ namespace: 'sigterm' }))).status, 200)
  const stream = await openStream(server.base, `/v1/api/workflows/${wf.body.id}/status/stream`, { authorization: `Bearer ${token}` })
  t.teardown(() => stream.close())
  t.equal(stream.status, 200)
  await stream.until('metadata', (e) => e.some((x) => x.type === 'metadata'))
  // Every API request now takes a while: the run is still applying when the signal comes.
  sim.faults.setLatency(250)
  t.teardown(() => sim.faults.reset())
  const started = await api(server.base, token, 'POST', `/v1/api/workflows/${wf.body.id}/run`, { trigger_data: TRIGGER })
  t.equal(started.status, 202)
  await waitFor('the run to record its first object', async () => (await api(server.base, token, 'GET', started.headers.get('location')!)).body.nodes.length > 0, 60_000, 50)
  const exited = once(server.child, 'exit')
  server.child.kill('SIGTERM')
  const [code] = await exited
  await stream.ended
  sim.faults.reset()
  const run = await db.db.collection('workflow_runs').findOne({ _id: started.body.id })
  t.not(run?.status, 'running', 'the run was finished or interrupted')
  const completes = stream.events.filter((e) => e.type === 'complete')
  t.same(completes.map((e) => e.data), [{ run_id: started.body.id, status: run?.status }], 'one complete, with the run\'s recorded status')
  t.equal(stream.events.at(-1)?.type, 'complete', 'before the stream ended')
  t.equal(code, 0, 'a clean exit within the grace period')
})
