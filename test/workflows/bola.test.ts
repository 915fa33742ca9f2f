// Another user's ids behave exactly like missing ones on every workflow and version route, and nothing of
// the owner's changes. The routes are read off the OpenAPI document, so a new route must join this table.
import t from 'tap'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'

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
