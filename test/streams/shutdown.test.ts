// Shutdown publishes the final event of every run it finishes or interrupts before any stream closes (API.md
// §14): a subscriber of the workflow's stream (a real socket) receives `complete {run_id, status}` with the
// run's recorded status and only then sees its stream end, whether the run is interrupted when the grace
// period runs out (failed) or finishes during it (completed); with two replicas on one database, closing
// the run's replica puts its `complete` in the event log, so a subscriber on the other replica gets it too.
//
// Runs are slow here through the simulator's pod readiness (PODS_READY_MS): a run waits for its workloads,
// so closing right after it started finds it in flight, and the run cannot end before the pods are ready.
import t, { type Test } from 'tap'
import { randomBytes } from 'node:crypto'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import { startTestDatabase } from '../helpers/database.ts'
import { startTestCluster, simClusterBody } from '../helpers/kube.ts'
import { registerUser, type TestUser } from '../helpers/auth.ts'
import { listen, openStream, type SseStream } from './sse-client.ts'
import { shopGraph, TRIGGER } from '../runs/fixture.ts'
import type { App } from '../../src/app-types.ts'

const PODS_READY_MS = 2500
t.setTimeout(180_000)
const sim = await startTestCluster(t, { timing: { podReadyMs: PODS_READY_MS } })
const database = await startTestDatabase(t)
// Every app of the file is a replica of one service: same secrets, so tokens and sealed credentials carry over.
const common = {
  JWT_SECRET: randomBytes(32).toString('hex'), ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  RUN_REPLY_WAIT_MS: 0, RUN_READY_TIMEOUT_MS: 60_000,
}
const start = (overrides: Record<string, unknown>) => startTestApp(t, { ...common, ...overrides }, { database })

const first = await start({ SHUTDOWN_GRACE_MS: 300 })
const owner = await registerUser(first.app)
const registered = await first.app.inject({ method: 'POST', url: '/v1/api/clusters', headers: owner.headers, payload: simClusterBody(sim, 'sim') })
if (registered.statusCode !== 201) throw new Error(`cluster: ${registered.statusCode} ${registered.body}`)

async function call(app: App, user: TestUser, method: 'GET' | 'POST', url: string, payload?: object) {
  const res = await app.inject({ method, url, headers: user.headers, ...(payload && { payload }) })
  return { status: res.statusCode, body: res.body ? res.json() : undefined }
}

/** A saved workflow on the simulator, in its own namespace. */
async function workflow(app: App, name: string): Promise<string> {
  const wf = await call(app, owner, 'POST', '/v1/api/workflows', { name, cluster_id: 'sim' })
  if (wf.status !== 201) throw new Error(`workflow: ${wf.status} ${JSON.stringify(wf.body)}`)
  const saved = await call(app, owner, 'POST', `/v1/api/workflows/${wf.body.id}/save`, shopGraph({ namespace: name }))
  if (saved.status !== 200) throw new Error(`save: ${saved.status} ${JSON.stringify(saved.body)}`)
  return wf.body.id as string
}

async function subscribe(t: Test, base: string, workflowId: string): Promise<SseStream> {
  const s = await openStream(base, `/v1/api/workflows/${workflowId}/status/stream`, owner.headers)
  t.teardown(() => s.close())
  t.equal(s.status, 200)
  await s.until('metadata', (e) => e.some((x) => x.type === 'metadata'))
  return s
}

/** Starts a run on `app` and resolves once it is in flight there. */
async function runOn(app: App, workflowId: string): Promise<string> {
  const started = app.bus.next('run.started', (e) => e.workflow_id === workflowId)
  const res = await call(app, owner, 'POST', `/v1/api/workflows/${workflowId}/run`, { trigger_data: TRIGGER })
  if (res.status !== 202) throw new Error(`run: ${res.status} ${JSON.stringify(res.body)}`)
  return (await started).run_id
}

const stored = async (runId: string) => database.db.collection<{ _id: string; status: string; error?: string | null; finished_at?: Date }>('workflow_runs').findOne({ _id: runId })

/** The stream ended, and its last event is the run's `complete`. */
async function completeThenEnded(t: Test, s: SseStream, runId: string, what: string) {
  await s.ended
  const completes = s.events.filter((e) => e.type === 'complete')
  t.equal(completes.length, 1, `${what}: one complete`)
  t.same(completes[0]?.data, { run_id: runId, status: (await stored(runId))?.status }, `${what}: complete carries the run's recorded status`)
  t.equal(s.events.at(-1)?.type, 'complete', `${what}: it came before the stream ended`)
}

t.test('a run interrupted at shutdown: the local subscriber receives complete (failed) before its stream ends', async (t) => {
  const { app } = first
  const base = await listen(app)
  const id = await workflow(app, 'interrupted')
  const s = await subscribe(t, base, id)
  const runId = await runOn(app, id)
  await app.close()
  const run = await stored(runId)
  t.equal(run?.status, 'failed')
  t.match(run?.error, /^interrupted: the service shut down/)
  await completeThenEnded(t, s, runId, 'the subscriber')
  t.ok(s.events.some((e) => e.type === 'error'), 'the failed run\'s error came first')
})

t.test('a run that finishes during the grace period: complete (completed) before the stream ends', async (t) => {
  const { app } = await start({ SHUTDOWN_GRACE_MS: 60_000 })
  const base = await listen(app)
  const id = await workflow(app, 'graceful')
  const s = await subscribe(t, base, id)
  const runId = await runOn(app, id)
  const closing = Date.now()
  await app.close()
  const run = await stored(runId)
  t.equal(run?.status, 'completed', JSON.stringify(run?.error))
  t.ok(run!.finished_at!.getTime() > closing, 'it finished while the app was closing')
  await completeThenEnded(t, s, runId, 'the subscriber')
})

t.test('two replicas on one database: closing the run\'s replica delivers its complete to subscribers on both', async (t) => {
  const shared = { REPLICA_MODE: 'shared', EVENT_POLL_MS: 20 }
  const a: TestApp = await start({ ...shared, SHUTDOWN_GRACE_MS: 300 })
  const b: TestApp = await start(shared)
  t.ok(a.app.replica.shared && b.app.replica.shared && a.app.replica.id !== b.app.replica.id, 'two shared replicas')
  const id = await workflow(a.app, 'replicas')
  const onA = await subscribe(t, await listen(a.app), id)
  const onB = await subscribe(t, await listen(b.app), id)
  const runId = await runOn(a.app, id)
  await a.app.close()
  t.equal((await stored(runId))?.status, 'failed', 'interrupted')
  await completeThenEnded(t, onA, runId, 'the subscriber on the closed replica')
  const events = await onB.until('the run\'s complete on the other replica', (e) => e.some((x) => x.type === 'complete'))
  t.same(events.find((x) => x.type === 'complete')!.data, { run_id: runId, status: 'failed' })
  t.notOk(onB.isEnded, 'the other replica\'s stream stays open')
  const logged = await database.db.collection('events').findOne({ key: `workflow:${id}`, type: 'complete' })
  t.ok(logged, 'the complete is in the shared event log')
})
