// A node's live status (`data._status`) is written by the resource watchers about the objects on the
// cluster. It is never copied: a clone that was never deployed shows none; no version holds it (manual, by a
// run, by a restore); a restore keeps the workflow's current status rather than bringing back a stored one.
import t from 'tap'
import { watchFixture, deployment } from '../watch/fixture.ts'

const f = await watchFixture(t)
const { owner, call } = f
const graph = { nodes: [deployment('n-web', 'web', 'live', 'ghcr.io/acme/web:1.0')], edges: [] }
const id = await f.workflow(graph, 'live')
const hasStatus = (nodes: Array<{ data?: Record<string, unknown> }>) => nodes.some((n) => n.data && '_status' in n.data)

t.test('deployed: the watchers write the node\'s live status', async (t) => {
  // The fixture's runs do not wait for readiness (the run itself then fails: not ready after 0 s), so the
  // watch sees the Deployment go from pending to running and writes the node's status.
  const { run_id } = await f.deploy(id)
  const run = (await call(owner, 'GET', `/v1/api/workflows/${id}/runs/${run_id}`)).body
  t.match(run.nodes, [{ kind: 'Namespace' }, { kind: 'Deployment', message: /^created/ }], 'the Deployment was created')
  await f.status('web running', (e) => e.workflow_id === id && e.name === 'web' && e.new_status === 'running')
  const wf = (await call(owner, 'GET', `/v1/api/workflows/${id}`)).body
  t.ok(hasStatus(wf.nodes), `the workflow shows it: ${JSON.stringify(wf.nodes[0].data._status)}`)
})

t.test('a clone that was never deployed shows no status; the rest of the node is copied', async (t) => {
  const clone = await call(owner, 'POST', `/v1/api/workflows/${id}/clone`, { name: 'live copy' })
  t.equal(clone.status, 201)
  t.notOk(hasStatus(clone.body.nodes), 'the reply has none')
  t.notOk(hasStatus((await call(owner, 'GET', `/v1/api/workflows/${clone.body.id}`)).body.nodes), 'nor the stored clone')
  t.same(clone.body.nodes, graph.nodes, 'otherwise the same graph')
})

t.test('a manual version holds no status', async (t) => {
  const v = await call(owner, 'POST', `/v1/api/workflows/${id}/versions`, { name: 'manual' })
  t.equal(v.status, 201)
  t.notOk(hasStatus(v.body.nodes))
  t.notOk(hasStatus((await call(owner, 'GET', `/v1/api/workflows/${id}/versions/${v.body.version}`)).body.nodes), 'as stored')
  t.same(v.body.nodes, graph.nodes)
})

t.test('the version a run records holds no status (the graph had one from the run before)', async (t) => {
  const { run_id } = await f.deploy(id)
  const run = (await call(owner, 'GET', `/v1/api/workflows/${id}/runs/${run_id}`)).body
  t.ok(run.version > 1)
  t.notOk(hasStatus((await call(owner, 'GET', `/v1/api/workflows/${id}/versions/${run.version}`)).body.nodes))
})

t.test('a restore: the version it records holds no status; the workflow keeps its current one, not a stored one', async (t) => {
  // A version stored with a status (as versions were before they left it out), different from the live one.
  await f.app.db.collection('workflow_versions').updateOne({ workflow_id: id, version: 1 }, { $set: { 'nodes.0.data._status': { state: 'stale-from-the-past' } } })
  const live = (await call(owner, 'GET', `/v1/api/workflows/${id}`)).body.nodes[0].data._status
  t.ok(live)
  const restored = await call(owner, 'POST', `/v1/api/workflows/${id}/versions/1/restore`)
  t.equal(restored.status, 200)
  t.notOk(hasStatus(restored.body.version.nodes), 'the recorded version has none')
  t.same(restored.body.workflow.nodes[0].data._status, live, 'the workflow keeps the live status')
  t.notMatch(JSON.stringify((await call(owner, 'GET', `/v1/api/workflows/${id}`)).body), /stale-from-the-past/)
})
