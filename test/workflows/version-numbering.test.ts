// Version numbers have no holes made by crashes: a number is taken by storing its version record (one
// write), and the workflow's counter follows the records. A crash is simulated by doing, through the
// repositories, only the writes made before the crash point; a restart by building a new app on the same
// database. Then the next version is contiguous, the list has no holes, and the counter agrees.
import t from 'tap'
import { buildApp } from '../../src/app.ts'
import { testConfig } from '../../src/config.ts'
import { startTestDatabase } from '../helpers/database.ts'
import { registerUser, type TestUser } from '../helpers/auth.ts'
import { VersionRepository, repairVersionCounters } from '../../src/repositories/versions.ts'
import { WorkflowRepository } from '../../src/repositories/workflows.ts'
import type { App } from '../../src/app-types.ts'

const database = await startTestDatabase(t)
// Fixed keys: the user's token must still be good after a "restart".
const config = testConfig({ JWT_SECRET: 'k'.repeat(40), ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64'), LOG_LEVEL: 'silent', MONGODB_URI: database.uri, MONGODB_DB: database.dbName, CLUSTER_HEALTH_CRON: '0 0 1 1 *', STATS_REFRESH_CRON: '0 0 1 1 *' })

/** The app on the test database; "restarting" builds another on the same data. */
async function start(): Promise<App> {
  const app = await buildApp(config)
  await app.ready()
  return app
}

let app = await start()
t.teardown(() => app.close())
const user: TestUser = await registerUser(app)
const versions = new VersionRepository(database.db)
const workflows = new WorkflowRepository(database.db)
const node = (id: string, data: Record<string, unknown>) => ({ id, type: 'configmap', position: { x: 0, y: 0 }, data })

async function call(method: 'GET' | 'POST', url: string, payload?: object) {
  const res = await app.inject({ method, url, headers: user.headers, ...(payload && { payload }) })
  return { status: res.statusCode, body: res.body ? res.json() : undefined }
}
async function newWorkflow(name: string): Promise<string> {
  const res = await call('POST', '/v1/api/workflows', { name })
  await call('POST', `/v1/api/workflows/${res.body.id}/save`, { nodes: [node('cm', { name: 'cm', data: { A: name } })], edges: [] })
  return res.body.id
}
const numbers = async (id: string) => (await call('GET', `/v1/api/workflows/${id}/versions?limit=100&sort=version&order=asc`)).body.versions.map((v: { version: number }) => v.version)
const counter = async (id: string) => (await call('GET', `/v1/api/workflows/${id}`)).body.current_version
const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1)
async function restart(): Promise<void> {
  await app.close()
  app = await start()
}

// Each crash point is set up first, then one restart (start-up runs the repair), then each is checked.
const make = (v: number) => ({ owner_id: user.user.id, name: `Version ${v}`, tag: '', description: '', nodes: [], edges: [], metadata: {}, is_automatic: false, restored_from: null, run_id: null, run_status: null, created_by: user.user.id })
const listed = async (id: string) => (await call('GET', `/v1/api/workflows/${id}/versions?limit=100&sort=version&order=asc`)).body.versions.map((v: { id: string; version: number }) => [v.id, v.version])
const crash = { afterRecord: '', counterAhead: '', restore: '', run: '' }
let storedBefore: unknown[] = []

t.test('the crash points, as the writes made before each leave the data', async (t) => {
  // After a version's record, before its counter: the record alone.
  crash.afterRecord = await newWorkflow('crash-after-record')
  for (let i = 0; i < 3; i++) t.equal((await call('POST', `/v1/api/workflows/${crash.afterRecord}/versions`, {})).status, 201)
  t.equal((await versions.createNext(crash.afterRecord, make)).version, 4)
  t.equal(await counter(crash.afterRecord), 3, 'the counter is one behind its records')

  // The old numbering, killed twice between bumping the counter and writing the record.
  crash.counterAhead = await newWorkflow('counter-ahead')
  for (let i = 0; i < 3; i++) await call('POST', `/v1/api/workflows/${crash.counterAhead}/versions`, {})
  await database.db.collection('workflows').updateOne({ _id: crash.counterAhead as never }, { $inc: { current_version: 2 } })
  t.equal(await counter(crash.counterAhead), 5)
  // Even before any repair the next number follows the records, not the counter.
  t.equal((await call('POST', `/v1/api/workflows/${crash.counterAhead}/versions`, {})).body.version, 4, 'the next version follows the records, whatever the counter says')
  storedBefore = await listed(crash.counterAhead)

  // A restore's first write (the graph of version 1 back in the workflow), not its version.
  crash.restore = await newWorkflow('restore-crash')
  await call('POST', `/v1/api/workflows/${crash.restore}/versions`, {})
  await call('POST', `/v1/api/workflows/${crash.restore}/save`, { nodes: [node('cm', { name: 'cm', data: { A: 'changed' } })], edges: [] })
  await call('POST', `/v1/api/workflows/${crash.restore}/versions`, {})
  const v1 = await versions.get(user.user.id, crash.restore, 1)
  await workflows.update(user.user.id, crash.restore, { nodes: v1!.nodes, edges: v1!.edges, metadata: v1!.metadata })

  // A run that took its lock and died before recording its version.
  crash.run = await newWorkflow('run-crash')
  await call('POST', `/v1/api/workflows/${crash.run}/versions`, {})
  const locked = await workflows.lockForRun(user.user.id, crash.run, 'run-that-died')
  t.ok(locked && 'workflow' in locked)

  await restart()
})

t.test('after the record, before the counter: start-up raised the counter; the next version is contiguous', async (t) => {
  const id = crash.afterRecord
  t.equal(await counter(id), 4, 'start-up set the counter to the highest record')
  t.equal((await call('POST', `/v1/api/workflows/${id}/versions`, {})).body.version, 5)
  t.same(await numbers(id), range(5), 'no holes')
  t.equal(await counter(id), 5)
})

t.test('a counter left ahead of its records: start-up lowered it; no stored version was renumbered', async (t) => {
  const id = crash.counterAhead
  t.equal(await counter(id), 4, 'start-up lowered the counter to the highest record')
  t.equal((await call('POST', `/v1/api/workflows/${id}/versions`, {})).body.version, 5)
  t.same((await listed(id)).slice(0, 4), storedBefore, 'the stored versions kept their ids and numbers')
  t.same(await numbers(id), range(5))
})

t.test('a restore cut after its workflow write: it took no number; the next is contiguous', async (t) => {
  const id = crash.restore
  t.equal(await counter(id), 2)
  const restored = await call('POST', `/v1/api/workflows/${id}/versions/1/restore`)
  t.equal(restored.body.version.version, 3)
  t.equal(restored.body.workflow.current_version, 3, 'the restore\'s reply shows the counter it raised')
  t.same(await numbers(id), range(3))
})

t.test('a run cut after its lock: the lock was released at start-up; numbering is untouched', async (t) => {
  const id = crash.run
  t.same((await workflows.lockedForRuns()).filter((x) => x.id === id), [], 'the dead run\'s lock was released')
  t.equal((await call('POST', `/v1/api/workflows/${id}/versions`, {})).body.version, 2)
  t.same(await numbers(id), range(2))
})

t.test('concurrent manual versions and restores get distinct contiguous numbers; the counter is the highest', async (t) => {
  const id = await newWorkflow('concurrent')
  await call('POST', `/v1/api/workflows/${id}/versions`, { name: 'base' })
  const made = await Promise.all([
    ...Array.from({ length: 16 }, (_, i) => call('POST', `/v1/api/workflows/${id}/versions`, { name: `m${i}` })),
    ...Array.from({ length: 4 }, () => call('POST', `/v1/api/workflows/${id}/versions/1/restore`)),
  ])
  t.same(made.map((r) => r.status), [...Array(16).fill(201), ...Array(4).fill(200)])
  const taken = made.map((r) => r.body.version?.version ?? r.body.version).sort((a: number, b: number) => a - b)
  t.same(taken, range(21).slice(1), 'versions 2..21, each once')
  t.same(await numbers(id), range(21))
  t.equal(await counter(id), 21)
})

t.test('two writers on the same data (two replicas): numbers stay distinct and contiguous', async (t) => {
  const id = await newWorkflow('two-writers')
  const other = new VersionRepository(database.db)
  const made = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? versions : other).createNext(id, make)))
  t.same(made.map((v) => v.version).sort((a, b) => a - b), range(20))
  t.equal(await repairVersionCounters(database.db), 1, 'the counter this test never raised is the one repaired')
  t.equal(await counter(id), 20)
  t.equal(await repairVersionCounters(database.db), 0, 'a second pass has nothing to do')
})
