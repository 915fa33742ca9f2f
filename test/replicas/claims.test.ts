// Work claimed once across replicas (issue 25 item 3), with two apps in shared mode on one database and one
// simulated cluster: a storm of run requests split across both starts exactly one run (the workflow's run
// lock), and when both replicas sweep the same abandoned run or import at once, exactly one fails it and
// notifies; a run or import whose process marked it alive again after the sweep read it is left alone; a run
// lock with no run behind it is released only when old enough not to be a live replica's start or delete.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { startTestApp } from '../helpers/app.ts'
import { startTestDatabase } from '../helpers/database.ts'
import { registerUser } from '../helpers/auth.ts'
import { startTestCluster, simClusterBody } from '../helpers/kube.ts'
import { waitFor } from '../kube-sim/test-helpers.ts'
import { shopGraph, TRIGGER } from '../runs/fixture.ts'
import { ObjectId } from 'mongodb'
import { newId } from '../../src/repositories/ids.ts'
import { RunRepository, type RunDoc } from '../../src/repositories/runs.ts'
import { ImportSessionRepository, type ImportSessionDoc } from '../../src/repositories/import-sessions.ts'
import type { App } from '../../src/app-types.ts'

// Stale after three periods (1.5 s): shorter, a replica whose event loop a loaded machine holds that long is
// taken for dead and its live run failed by the other.
const HEARTBEAT_MS = 500
const sim = await startTestCluster(t)
// Replicas of one service share their secrets: a token or a sealed credential from one is good on the other.
const shared = {
  REPLICA_MODE: 'shared', JWT_SECRET: randomBytes(32).toString('hex'), ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  RUN_READY_TIMEOUT_MS: 5000, RUN_HEARTBEAT_MS: HEARTBEAT_MS,
}
const a = await startTestApp(t, shared)
const b = await startTestApp(t, shared, { database: a.database })
const replicas: App[] = [a.app, b.app]
const db = a.database.db
const owner = await registerUser(a.app)
const call = async (app: App, method: 'GET' | 'POST', url: string, payload?: object) => {
  const res = await app.inject({ method, url, headers: owner.headers, ...(payload && { payload }) })
  return { status: res.statusCode, body: res.body ? res.json() : undefined }
}
const cluster = await call(a.app, 'POST', '/v1/api/clusters', simClusterBody(sim, 'sim'))
if (cluster.status !== 201) throw new Error(`cluster: ${cluster.status} ${[...a.logs, ...b.logs].filter((l) => /"level":50/.test(l)).join("").slice(0, 2000)}`)

/** Bus events of one type from both replicas, as [replica index, payload]. */
function collect<K extends 'run.finished' | 'import.finished'>(event: K): Array<[number, unknown]> {
  const seen: Array<[number, unknown]> = []
  replicas.forEach((app, i) => { const off = app.bus.on(event, (e) => { seen.push([i, e]) }); t.teardown(off) })
  return seen
}
const runFinished = collect('run.finished')
const importFinished = collect('import.finished')
const logLines = (pattern: RegExp) => [...a.logs, ...b.logs].join('').split('\n').filter((l) => pattern.test(l))

t.test('20 concurrent run requests split across two replicas: one run, the other 19 answer 409', async (t) => {
  t.ok(a.app.replica.shared && b.app.replica.shared && a.app.replica.id !== b.app.replica.id, 'two shared replicas')
  const wf = await call(b.app, 'POST', '/v1/api/workflows', { name: 'storm', cluster_id: 'sim' })
  t.equal(wf.status, 201)
  const id = wf.body.id as string
  const saved = await call(a.app, 'POST', `/v1/api/workflows/${id}/save`, shopGraph({ namespace: 'storm' }))
  t.equal(saved.status, 200)
  const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => call(replicas[i % 2], 'POST', `/v1/api/workflows/${id}/run`, { trigger_data: TRIGGER })))
  const started = replies.filter((r) => r.status === 200 || r.status === 202)
  t.equal(started.length, 1, `one run started (statuses: ${replies.map((r) => r.status).join(',')})`)
  t.equal(replies.filter((r) => r.status === 409).length, 19, 'every other request was refused as conflicting')
  for (const r of replies) if (r.status === 409) t.match(r.body, { error: /already running/ })
  const runId = started[0].body.id as string
  const run = await waitFor('the run to finish', async () => {
    const doc = await db.collection<RunDoc>('workflow_runs').findOne({ _id: runId })
    return doc && doc.status !== 'running' && doc
  }, 20_000, 20)
  t.equal(run.status, 'completed', run.error ?? '')
  t.equal(await db.collection('workflow_runs').countDocuments({ workflow_id: id }), 1, 'one run record')
  const applied = run.nodes.map((n) => `${n.node_id}:${n.kind}`)
  t.equal(applied.length, 8, 'seven nodes and their namespace')
  t.equal(new Set(applied).size, applied.length, 'each object applied once')
  t.ok(run.nodes.every((n) => n.action === 'created'), 'all created by that one run')
  t.equal(runFinished.filter(([, e]) => (e as { run_id: string }).run_id === runId).length, 1, 'one run.finished')
  const wfAfter = await db.collection('workflows').findOne({ _id: id as never })
  t.match(wfAfter, { running_run_id: null, run_count: 1 }, 'the lock is released and the run counted once')
  // The lock is free for the next run, whichever replica takes it.
  const next = await call(b.app, 'POST', `/v1/api/workflows/${id}/run`, { trigger_data: TRIGGER })
  t.equal(next.status, 200, JSON.stringify(next.body))
  t.ok(next.body.nodes.every((n: { action: string }) => n.action === 'unchanged'), 'the second run changed nothing')
})

function deadRunDoc(runId: string, workflowId: string, agoMs: number): RunDoc {
  const at = new Date(Date.now() - agoMs)
  return {
    _id: runId, owner_id: owner.user.id, workflow_id: workflowId, version: 1, cluster: 'sim', cluster_id: cluster.body.id, namespace: null,
    status: 'running', dry_run: false, started_at: at, finished_at: null, duration_ms: null, triggered_by: owner.user.id,
    nodes: [], logs: ['Applying ConfigMap a'], error: null, instance_id: 'replica-that-died', heartbeat_at: at,
  }
}

/** A run left `running` by a replica that died `agoMs` ago (its last heartbeat), holding its workflow's lock. */
async function deadRun(agoMs: number): Promise<{ runId: string; workflowId: string }> {
  const wf = await call(a.app, 'POST', '/v1/api/workflows', { name: `dead-${newId()}`, cluster_id: 'sim' })
  const workflowId = wf.body.id as string
  const runId = newId()
  // Locked first, as a run is: the replicas' periodic sweeps may fail the run the moment it is inserted.
  await db.collection('workflows').updateOne({ _id: workflowId as never }, { $set: { running_run_id: runId } })
  await db.collection<RunDoc>('workflow_runs').insertOne(deadRunDoc(runId, workflowId, agoMs))
  return { runId, workflowId }
}

t.test('both replicas sweep one abandoned run at once: exactly one fails it and notifies', async (t) => {
  const runs = await Promise.all(Array.from({ length: 5 }, () => deadRun(10 * HEARTBEAT_MS)))
  // recover() is each replica's sweep (the heartbeat runs the same one every period): raced here on purpose.
  const failed = await Promise.all(replicas.flatMap((app) => [app.services.runs.recover(), app.services.runs.recover()]))
  for (const { runId, workflowId } of runs) {
    const doc = await db.collection<RunDoc>('workflow_runs').findOne({ _id: runId })
    t.match(doc, { status: 'failed', error: /^interrupted/ })
    t.equal(doc!.logs.filter((l) => /^Run failed/.test(l)).length, 1, 'one failure line')
    t.equal(runFinished.filter(([, e]) => (e as { run_id: string }).run_id === runId).length, 1, 'one run.finished across both replicas')
    t.equal(logLines(new RegExp(`run ${runId} was running`)).length, 1, 'one log line')
    t.match(await db.collection('workflows').findOne({ _id: workflowId as never }), { running_run_id: null, failure_count: 1 }, 'lock released, failure counted once')
  }
  // Each replica's periodic sweeps may have taken some before the raced calls: together they failed each run once.
  t.ok(failed.reduce((n, c) => n + c, 0) <= runs.length, `the sweeps' counts add up to at most the runs (${failed.join('+')})`)
})

t.test('a run whose replica beat again after the sweep read it is not failed', async (t) => {
  // Its own database: the two replicas' periodic sweeps would fail the run before the steps below.
  const { db } = await startTestDatabase(t)
  const runId = newId()
  await db.collection<RunDoc>('workflow_runs').insertOne(deadRunDoc(runId, newId(), 10 * HEARTBEAT_MS))
  const repo = new RunRepository(db)
  const [seen] = (await repo.abandoned('sweeper', new Date(Date.now() - 3 * HEARTBEAT_MS))).filter((d) => d._id === runId)
  t.ok(seen, 'the sweep saw it abandoned')
  // Its replica was only slow: it marks the run alive between the sweep's read and its write.
  await db.collection<RunDoc>('workflow_runs').updateOne({ _id: runId }, { $set: { heartbeat_at: new Date() } })
  const outcome = { status: 'failed' as const, nodes: [], logs: [], error: 'interrupted', finished_at: new Date(), duration_ms: 1 }
  t.equal(await repo.settleAbandoned(seen, outcome), null, 'the sweep\'s write does not match')
  t.equal((await db.collection<RunDoc>('workflow_runs').findOne({ _id: runId }))?.status, 'running', 'the run goes on')
  // Taken over by someone else meanwhile (another instance id) is the same: not this sweep's to fail.
  await db.collection<RunDoc>('workflow_runs').updateOne({ _id: runId }, { $set: { instance_id: 'another', heartbeat_at: seen.heartbeat_at } })
  t.equal(await repo.settleAbandoned(seen, outcome), null)
  await db.collection<RunDoc>('workflow_runs').updateOne({ _id: runId }, { $set: { instance_id: seen.instance_id } })
  t.ok(await repo.settleAbandoned(seen, outcome), 'as read: failed')
  t.equal(await repo.settleAbandoned(seen, outcome), null, 'and only once')
})

function deadImport(agoMs: number): ImportSessionDoc {
  const at = new Date(Date.now() - agoMs)
  return {
    _id: newId(), owner_id: owner.user.id, source: 'compose', status: 'analyzing', progress: 50, message: 'analyzing', error: null, analysis_json: null,
    filename: null, url: null, branch: null, path: null, commit: null, logs: [], created_at: at, updated_at: at, finished_at: null,
    expires_at: new Date(Date.now() + 3600_000), instance_id: 'replica-that-died', heartbeat_at: at,
  }
}

t.test('both replicas sweep one abandoned import at once: exactly one fails it and notifies', async (t) => {
  const docs = Array.from({ length: 5 }, () => deadImport(10 * HEARTBEAT_MS))
  await db.collection<ImportSessionDoc>('import_sessions').insertMany(docs)
  await Promise.all(replicas.flatMap((app) => [app.services.imports.recover(), app.services.imports.recover()]))
  for (const doc of docs) {
    t.match(await db.collection<ImportSessionDoc>('import_sessions').findOne({ _id: doc._id }), { status: 'failed', error: /^interrupted/ })
    t.equal(importFinished.filter(([, e]) => (e as { import_id: string }).import_id === doc._id).length, 1, 'one import.finished across both replicas')
    t.equal(logLines(new RegExp(`import ${doc._id} was analyzing`)).length, 1, 'one log line')
  }
  // Its own database, away from the replicas' periodic sweeps.
  const own = await startTestDatabase(t)
  const repo = new ImportSessionRepository(own.db)
  const alive = deadImport(10 * HEARTBEAT_MS)
  await own.db.collection<ImportSessionDoc>('import_sessions').insertOne(alive)
  const outcome = { status: 'failed' as const, progress: 50, message: 'failed', error: 'interrupted', logs: [], analysis_json: null }
  await own.db.collection<ImportSessionDoc>('import_sessions').updateOne({ _id: alive._id }, { $set: { heartbeat_at: new Date() } })
  t.equal(await repo.settleAbandoned(alive, outcome), null, 'a session marked alive after the sweep read it is left alone')
  t.equal((await own.db.collection<ImportSessionDoc>('import_sessions').findOne({ _id: alive._id }))?.status, 'analyzing')
  await own.db.collection<ImportSessionDoc>('import_sessions').updateOne({ _id: alive._id }, { $set: { heartbeat_at: alive.heartbeat_at } })
  t.ok(await repo.settleAbandoned(alive, outcome), 'as read: failed')
})

t.test('run locks with no unfinished run behind them: a live replica\'s fresh ones are kept, a dead one\'s old ones released', async (t) => {
  const lockedBy = async (holder: string) => {
    const wf = await call(a.app, 'POST', '/v1/api/workflows', { name: `locked-${newId()}`, cluster_id: 'sim' })
    await db.collection('workflows').updateOne({ _id: wf.body.id as never }, { $set: { running_run_id: holder } })
    return wf.body.id as string
  }
  const agedId = (ms: number) => ObjectId.createFromTime(Math.floor((Date.now() - ms) / 1000)).toHexString()
  // Another replica between locking and recording its run, and another deleting a workflow with its objects.
  const starting = await lockedBy(newId())
  const deleting = await lockedBy(`delete-${newId()}`)
  // A replica that died between the two, or mid-delete, eleven minutes ago.
  const deadStart = await lockedBy(agedId(11 * 60_000))
  const deadDelete = await lockedBy(`delete-${agedId(11 * 60_000)}`)
  await Promise.all(replicas.map((app) => app.services.runs.recover()))
  const holder = async (id: string) => (await db.collection('workflows').findOne({ _id: id as never }))?.running_run_id ?? null
  t.not(await holder(starting), null, 'a fresh lock with no run yet is kept')
  t.not(await holder(deleting), null, 'a delete in progress keeps its lock')
  t.equal(await holder(deadStart), null, 'an old lock with no run is released')
  t.equal(await holder(deadDelete), null, 'an old delete lock is released')
  t.ok(logLines(new RegExp(`"workflow_id":"${deadStart}".*released the run lock`)).length >= 1, 'said so')

  // Alone on the database (single mode) every such lock is a dead process's, as before: released at start.
  const single = await startTestApp(t, { REPLICA_MODE: 'single', JWT_SECRET: shared.JWT_SECRET, ENCRYPTION_KEY: shared.ENCRYPTION_KEY }, { database: a.database })
  t.equal(single.app.replica.shared, false)
  t.equal(await holder(starting), null)
  t.equal(await holder(deleting), null)
})
