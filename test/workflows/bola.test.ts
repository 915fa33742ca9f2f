// Another user's ids behave exactly like missing ones on every workflow and version route, and nothing of
// the owner's changes. The routes are read off the OpenAPI document, so a new route must join this table.
import t from 'tap'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'
import { AUDIT_COLLECTION, type AuditDoc } from '../../src/repositories/audit.ts'
import { nameRoute, outcomeOf } from '../../src/services/lifecycle/audit/index.ts'

const { app } = await startTestApp(t)
const alice = await registerUser(app)
const bob = await registerUser(app)
const as = (u: { token: string }) => ({ authorization: `Bearer ${u.token}` })

const wf = (await app.inject({ method: 'POST', url: '/v1/api/workflows', headers: as(alice), payload: { name: 'private' } })).json()
await app.inject({ method: 'POST', url: `/v1/api/workflows/${wf.id}/save`, headers: as(alice), payload: { nodes: [{ id: 'web', type: 'deployment', data: { name: 'web', image: 'nginx' } }], edges: [] } })
await app.inject({ method: 'POST', url: `/v1/api/workflows/${wf.id}/versions`, headers: as(alice), payload: { name: 'v' } })

const requests: Record<string, { body?: object; query?: string }> = {
  getWorkflow: {}, updateWorkflow: { body: { name: 'stolen' } }, deleteWorkflow: {}, cloneWorkflow: { body: {} },
  setWorkflowStatus: { body: { status: 'archived' } }, saveWorkflow: { body: { nodes: [], edges: [] } }, listWorkflowRuns: {},
  listVersions: {}, getVersion: {}, createVersion: { body: {} }, updateVersion: { body: { name: 'stolen' } },
  restoreVersion: {}, compareVersions: { query: 'v1=1&v2=1' }, getWorkflowManifests: {},
  runWorkflow: { body: { dry_run: true } }, getWorkflowRun: {},
  getNodeDiagnostics: {}, getNodeFixTemplate: {}, applyNodeFix: { body: { fix_type: 'dns-name' } },
  streamWorkflowStatus: {},
  rollbackWorkflow: { body: { version: 1 } }, syncWorkflow: { body: {} },
  getWorkflowDrift: {},
}

async function snapshot() {
  const w = (await app.inject({ url: `/v1/api/workflows/${wf.id}`, headers: as(alice) })).json()
  const v = (await app.inject({ url: `/v1/api/workflows/${wf.id}/versions`, headers: as(alice) })).json()
  return JSON.stringify({ w, v })
}

t.test('user B gets 404 on every route that takes user A\'s workflow id, and A\'s data is unchanged', async (t) => {
  const before = await snapshot()
  const paths = (app.swagger() as unknown as { paths: Record<string, Record<string, { operationId: string }>> }).paths
  let checked = 0
  for (const [path, ops] of Object.entries(paths)) {
    if (!path.startsWith('/v1/api/workflows/{id}')) continue
    for (const [method, op] of Object.entries(ops)) {
      const req = requests[op.operationId]
      if (!t.ok(req, `${op.operationId} is in the BOLA table`)) continue
      const url = path.replace('{id}', wf.id).replace('{version}', '1').replace('{nodeId}', 'web').replace('{fixType}', 'dns-name') + (req.query ? `?${req.query}` : '')
      const res = await app.inject({ method: method.toUpperCase() as 'GET', url, headers: as(bob), ...(req.body && { payload: req.body }) })
      t.equal(res.statusCode, 404, `${method.toUpperCase()} ${path} → 404`)
      t.match(res.json().error, /not found/)
      checked++
    }
  }
  t.equal(checked, Object.keys(requests).length, 'every route in the table was exercised')
  t.equal(await snapshot(), before, 'nothing of A\'s changed')
  const mine = (await app.inject({ url: '/v1/api/workflows', headers: as(bob) })).json()
  t.equal(mine.total, 0, 'B has no workflow (clone refused)')
})

t.test('a malformed id is a plain 404 too', async (t) => {
  const res = await app.inject({ url: '/v1/api/workflows/not-an-id', headers: as(alice) })
  t.equal(res.statusCode, 404)
})

// The audit log (API.md §12) sees the same attempts: one `denied` entry per state-changing request of B,
// naming A's workflow; A's own requests are never `denied`; reads leave nothing.
t.test('audit: each non-GET request of B leaves one denied entry on A\'s workflow, A\'s own never denied, GETs none', async (t) => {
  const audit = app.db.collection<AuditDoc>(AUDIT_COLLECTION)
  const paths = (app.swagger() as unknown as { paths: Record<string, Record<string, { operationId: string }>> }).paths
  const ops: Array<{ method: string; path: string; url: string; operationId: string; req: { body?: object } }> = []
  for (const [path, byMethod] of Object.entries(paths)) {
    if (!path.startsWith('/v1/api/workflows/{id}')) continue
    for (const [method, op] of Object.entries(byMethod)) {
      const req = requests[op.operationId]
      if (!req) continue // the test above fails for it
      const url = path.replace('{id}', wf.id).replace('{version}', '1').replace('{nodeId}', 'web').replace('{fixType}', 'dns-name') + (req.query ? `?${req.query}` : '')
      ops.push({ method: method.toUpperCase(), path, url, operationId: op.operationId, req })
    }
  }
  // A's delete last: her workflow is the target of the others.
  ops.sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'))
  const entriesOf = async (send: () => Promise<unknown>) => {
    await app.audit.recorder.flush()
    const since = await audit.countDocuments()
    await send()
    await app.audit.recorder.flush()
    return audit.find({}).sort({ at: 1, _id: 1 }).skip(since).toArray()
  }
  const expectedAction = (op: typeof ops[number]) => nameRoute(op.method, op.path.replace(/\{(\w+)\}/g, ':$1'), op.operationId)!.action
  let denied = 0
  for (const op of ops) {
    let status = 0
    const entries = await entriesOf(async () => { status = (await app.inject({ method: op.method as 'GET', url: op.url, headers: as(bob), ...(op.req.body && { payload: op.req.body }) })).statusCode })
    if (op.method === 'GET') { t.same(entries, [], `${op.operationId}: a read leaves no entry`); continue }
    t.equal(status, 404, `${op.operationId}: B gets 404`)
    t.equal(entries.length, 1, `${op.operationId}: one entry`)
    t.match(entries[0], { actor_id: bob.user.id, action: expectedAction(op), target_type: 'workflow', target_id: wf.id, outcome: 'denied', status: 404 }, `${op.operationId}: B's attempt`)
    denied++
  }
  t.ok(denied >= 10, `${denied} state-changing routes checked`)
  const named = Object.fromEntries(ops.map((op) => [op.operationId, expectedAction(op)]))
  t.match(named, { runWorkflow: 'workflow.run', deleteWorkflow: 'workflow.delete', restoreVersion: 'workflow.restore_version' })
  if (named.rollbackWorkflow) t.equal(named.rollbackWorkflow, 'workflow.rollback')

  // A saves her graph as it is (the table's empty save would leave the fix no node to fix: a 404).
  const ownBodies: Record<string, object> = { saveWorkflow: { nodes: [{ id: 'web', type: 'deployment', data: { name: 'web', image: 'nginx' } }], edges: [] } }
  let ok = 0
  for (const op of ops.filter((o) => o.method !== 'GET')) {
    let status = 0
    const payload = ownBodies[op.operationId] ?? op.req.body
    const entries = await entriesOf(async () => { status = (await app.inject({ method: op.method as 'POST', url: op.url, headers: as(alice), ...(payload && { payload }) })).statusCode })
    t.equal(entries.length, 1, `${op.operationId}: one entry for A`)
    t.not(entries[0]?.outcome, 'denied', `${op.operationId}: A is never denied on her own workflow (${status})`)
    t.match(entries[0], { actor_id: alice.user.id, action: expectedAction(op), target_id: wf.id, status, outcome: outcomeOf(status) })
    if (status < 400) ok++
  }
  t.ok(ok >= denied / 2, `${ok} of A's ${denied} requests answered ok (runs need a cluster: 400, failed)`)
})
