// The run records and the workflow's run lock, on the database alone: one holder at a time, released only by
// its holder, counters, where a workflow was deployed, and abandoned runs told apart from live ones.
import t from 'tap'
import { startTestDatabase } from '../helpers/database.ts'
import { RunRepository, type RunDoc } from '../../src/repositories/runs.ts'
import { WorkflowRepository } from '../../src/repositories/workflows.ts'

const db = await startTestDatabase(t)
const runs = new RunRepository(db.db)
const workflows = new WorkflowRepository(db.db)
const base = (over: Partial<RunDoc> = {}): Omit<RunDoc, '_id'> => ({
  owner_id: 'o', workflow_id: 'w', version: 1, cluster: 'c1', cluster_id: 'id1', namespace: null, status: 'completed', dry_run: false,
  started_at: new Date(), finished_at: new Date(), duration_ms: 1, triggered_by: 'o', nodes: [], logs: [], error: null, ...over,
})
const node = (namespace: string | null, action: 'created' | 'failed' = 'created') => ({ node_id: 'n', kind: 'ConfigMap', name: 'x', namespace, action, message: '' })

t.test('the run lock: one holder among concurrent takers; only the holder releases it; it takes no version number', async (t) => {
  const wf = await workflows.create('o', { name: 'w', description: '', cluster_id: null })
  const results = await Promise.all(['r1', 'r2', 'r3', 'r4'].map((id) => workflows.lockForRun('o', wf.id, id)))
  const won = results.filter((r) => r && 'workflow' in r)
  t.equal(won.length, 1)
  const holder = ['r1', 'r2', 'r3', 'r4'][results.findIndex((r) => r && 'workflow' in r)]
  t.ok(results.filter((r) => r && 'locked' in r).every((r) => (r as { locked: string }).locked === holder), 'the losers are told who holds it')
  t.equal((won[0] as { workflow: { current_version: number } }).workflow.current_version, 0, 'numbers are taken by the version record (VersionRepository.createNext)')
  t.notOk('running_run_id' in (won[0] as { workflow: object }).workflow, 'the lock never shows in the workflow')
  await workflows.unlockRun(wf.id, 'someone-else')
  t.ok('locked' in (await workflows.lockForRun('o', wf.id, 'r5'))!, 'not released by another')
  await workflows.unlockRun(wf.id, holder)
  const next = await workflows.lockForRun('o', wf.id, 'r6')
  t.match(next, { workflow: { id: wf.id } }, 'taken again')
  t.same(await workflows.lockedForRuns(), [{ id: wf.id, run_id: 'r6' }])
  t.equal(await workflows.lockForRun('intruder', wf.id, 'r7'), null, 'another owner\'s workflow is not found')
  await workflows.countRun('o', wf.id, 'completed', new Date())
  await workflows.countRun('o', wf.id, 'failed', new Date())
  t.match(await workflows.get('o', wf.id), { run_count: 2, success_count: 1, failure_count: 1 })
})

t.test('where a workflow was deployed: real runs only, per cluster, with their namespaces; the latest that applied something', async (t) => {
  const old = new Date(Date.now() - 60_000)
  await runs.create(base({ started_at: old, nodes: [node('a')] }))
  await runs.create(base({ cluster: 'c2', cluster_id: 'id2', namespace: 'override', nodes: [node('override')] }))
  await runs.create(base({ dry_run: true, cluster: 'c3', cluster_id: 'id3', nodes: [node('dry')] }))
  const last = await runs.create(base({ started_at: new Date(Date.now() + 1000), nodes: [node('b'), node(null)] }))
  await runs.create(base({ started_at: new Date(Date.now() + 2000), nodes: [node('c', 'failed')], status: 'failed' }))
  t.same(await runs.deployments('o', 'w'), [
    { cluster: 'c1', cluster_id: 'id1', namespaces: ['a', 'b', 'c'] },
    { cluster: 'c2', cluster_id: 'id2', namespaces: ['override'] },
  ])
  t.same(await runs.deployments('o', 'w', { recent: 1 }), [{ cluster: 'c1', cluster_id: 'id1', namespaces: ['c'] }])
  t.same(await runs.lastDeployment('o', 'w'), { cluster: 'c1', cluster_id: 'id1', namespace: null, run_id: last.id }, 'a run that applied nothing is not a deployment')
  t.same(await runs.deployments('someone', 'w'), [])
  t.equal(await runs.lastDeployment('someone', 'w'), null)
})

t.test('abandoned runs: another process\'s runs that stopped beating, never this one\'s or a live one\'s', async (t) => {
  const long = new Date(Date.now() - 60_000)
  const dead = await runs.create(base({ workflow_id: 'h', status: 'running', instance_id: 'dead', heartbeat_at: long }))
  const legacy = await runs.create(base({ workflow_id: 'h', status: 'running' }))
  const live = await runs.create(base({ workflow_id: 'h', status: 'running', instance_id: 'other', heartbeat_at: long }))
  await runs.create(base({ workflow_id: 'h', status: 'running', instance_id: 'me', heartbeat_at: long }))
  await runs.heartbeat([live.id], new Date())
  const abandoned = (await runs.abandoned('me', new Date(Date.now() - 10_000))).map((d) => d._id).sort()
  t.same(abandoned, [dead.id, legacy.id].sort())
  const shown = await runs.get('o', 'h', live.id)
  t.notOk(shown && ('instance_id' in shown || 'heartbeat_at' in shown || 'applied_count' in shown), 'internal fields never show')
  const finished = await runs.finish(dead.id, { status: 'failed', nodes: [], logs: [], error: 'interrupted: x', finished_at: new Date(), duration_ms: 5 })
  t.equal(finished?.status, 'failed')
  t.equal(await runs.finish(dead.id, { status: 'completed', nodes: [], logs: [], error: null, finished_at: new Date(), duration_ms: 6 }), null, 'a finished run is never finished again')
})
