import t from 'tap'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'
import { WorkflowRepository } from '../../src/repositories/workflows.ts'

const { app } = await startTestApp(t)
const alice = await registerUser(app)
const auth = (token: string) => ({ authorization: `Bearer ${token}` })
const as = alice.token

async function create(body: Record<string, unknown>, token = as) {
  const res = await app.inject({ method: 'POST', url: '/v1/api/workflows', headers: auth(token), payload: body })
  t.equal(res.statusCode, 201, `create ${JSON.stringify(body)}: ${res.body}`)
  return res.json()
}

// A cluster to point workflows at; adding one makes no connection.
await app.inject({ method: 'POST', url: '/v1/api/clusters', headers: auth(as), payload: { name: 'prod', server: 'https://10.0.0.1:6443', auth_type: 'token', token: 'x' } })

t.test('create returns the full draft document', async (t) => {
  const wf = await create({ name: 'shop', description: 'web shop', cluster_id: 'prod' })
  t.match(wf, {
    id: /^[0-9a-f]{24}$/, name: 'shop', description: 'web shop', cluster_id: 'prod', nodes: [], edges: [], metadata: {},
    status: 'draft', owner_id: alice.user.id, current_version: 0, run_count: 0, success_count: 0, failure_count: 0, last_run_at: null,
  })
  t.ok(Date.parse(wf.created_at) && wf.created_at === wf.updated_at)
  const again = await app.inject({ url: `/v1/api/workflows/${wf.id}`, headers: auth(as) })
  t.same(again.json(), wf)
})

t.test('cluster_id must name a cluster the caller may deploy to', async (t) => {
  let res = await app.inject({ method: 'POST', url: '/v1/api/workflows', headers: auth(as), payload: { name: 'x', cluster_id: 'nowhere' } })
  t.equal(res.statusCode, 400)
  t.same(res.json(), { error: 'cluster_id names no cluster you may deploy to' })
  const carol = await registerUser(app)
  res = await app.inject({ method: 'POST', url: '/v1/api/workflows', headers: auth(carol.token), payload: { name: 'x', cluster_id: 'prod' } })
  t.equal(res.statusCode, 400, 'another user\'s cluster cannot be named')
  await app.inject({ method: 'POST', url: '/v1/api/clusters/prod/share', headers: auth(as), payload: { email: carol.user.email, role: 'viewer' } })
  res = await app.inject({ method: 'POST', url: '/v1/api/workflows', headers: auth(carol.token), payload: { name: 'x', cluster_id: 'prod' } })
  t.equal(res.statusCode, 400, 'a viewer may not deploy to it')
  await app.inject({ method: 'POST', url: '/v1/api/clusters/prod/share', headers: auth(as), payload: { email: carol.user.email, role: 'deployer' } })
  res = await app.inject({ method: 'POST', url: '/v1/api/workflows', headers: auth(carol.token), payload: { name: 'x', cluster_id: 'prod' } })
  t.equal(res.statusCode, 201, 'a deployer may')
  const id = (await app.inject({ url: '/v1/api/clusters/prod', headers: auth(as) })).json().id
  res = await app.inject({ method: 'PUT', url: `/v1/api/workflows/${res.json().id}`, headers: auth(carol.token), payload: { cluster_id: id } })
  t.equal(res.statusCode, 200, 'by id as well as by name')
  res = await app.inject({ method: 'PUT', url: `/v1/api/workflows/${res.json().id}`, headers: auth(carol.token), payload: { cluster_id: 'nowhere' } })
  t.equal(res.statusCode, 400)
})

t.test('create refuses bad input with 400 naming the field', async (t) => {
  for (const [body, field] of [[{}, 'name'], [{ name: '' }, 'name'], [{ name: 'x', status: 'published' }, 'additional'], [{ name: 'x'.repeat(201) }, 'name']] as const) {
    const res = await app.inject({ method: 'POST', url: '/v1/api/workflows', headers: auth(as), payload: body })
    t.equal(res.statusCode, 400)
    t.match(res.json().error, field)
  }
})

t.test('a canvas document comes back byte-for-byte as it was saved (but for the live status, which is the watchers\' own)', async (t) => {
  const wf = await create({ name: 'canvas' })
  const graph = {
    nodes: [
      { type: 'deployment', id: 'web', position: { x: 10.5, y: -3 }, data: { name: 'web', image: 'nginx:1.27', replicas: 2, ui: { colour: '#f00', collapsed: false }, _status: null }, width: 180, height: null, selected: true, dragging: false },
      { id: 'svc', type: 'service', data: { name: 'web', port: 80, extra: [1, 'two', { three: 3 }] }, position: { x: 0, y: 0 }, zIndex: 4 },
    ],
    edges: [{ id: 'e1', source: 'web', target: 'svc', sourceHandle: null, targetHandle: null, animated: true, style: { stroke: '#000' } }],
    metadata: { viewport: { x: 1, y: 2, zoom: 0.75 }, tags: ['a'] },
  }
  const saved = await app.inject({ method: 'POST', url: `/v1/api/workflows/${wf.id}/save`, headers: auth(as), payload: graph })
  t.equal(saved.statusCode, 200, saved.body)
  const got = (await app.inject({ url: `/v1/api/workflows/${wf.id}`, headers: auth(as) })).json()
  // All but the live status a client sends (`_status: null` here): a save keeps the stored one (API.md §14), and a new node has none.
  const expected = structuredClone(graph.nodes)
  delete (expected[0]!.data as { _status?: unknown })._status
  t.equal(JSON.stringify(got.nodes), JSON.stringify(expected))
  t.equal(JSON.stringify(got.edges), JSON.stringify(graph.edges))
  t.equal(JSON.stringify(got.metadata), JSON.stringify(graph.metadata))
  t.equal(got.current_version, 0, 'save creates no version')
  const versions = (await app.inject({ url: `/v1/api/workflows/${wf.id}/versions`, headers: auth(as) })).json()
  t.equal(versions.total, 0)
})

t.test('save refuses structural faults with 400 naming the node or edge, and writes nothing', async (t) => {
  const wf = await create({ name: 'faults' })
  const node = (id: string, type = 'deployment') => ({ id, type, position: { x: 0, y: 0 }, data: { name: id } })
  const cases: Array<[unknown, RegExp]> = [
    [{ nodes: [node('a'), node('a')], edges: [] }, /duplicate node id "a"/],
    [{ nodes: [node('a', 'warp-drive')], edges: [] }, /node "a" has unknown type "warp-drive"/],
    [{ nodes: [node('a')], edges: [{ id: 'e', source: 'a', target: 'zz' }] }, /edge "e" ends at missing node "zz"/],
    [{ nodes: [{ type: 'pod' }], edges: [] }, /id/],
    [{ nodes: Array.from({ length: 2001 }, (_, i) => ({ id: `n${i}`, type: 'pod' })), edges: [] }, /2000/],
  ]
  for (const [body, message] of cases) {
    const res = await app.inject({ method: 'POST', url: `/v1/api/workflows/${wf.id}/save`, headers: auth(as), payload: body as object })
    t.equal(res.statusCode, 400)
    t.match(res.json().error, message)
  }
  const after = (await app.inject({ url: `/v1/api/workflows/${wf.id}`, headers: auth(as) })).json()
  t.same(after.nodes, [])
  t.equal(after.updated_at, wf.updated_at)
})

t.test('save accepts known keys with wrong types: those are diagnostics, not save errors', async (t) => {
  const wf = await create({ name: 'lenient' })
  const res = await app.inject({ method: 'POST', url: `/v1/api/workflows/${wf.id}/save`, headers: auth(as), payload: { nodes: [{ id: 'a', type: 'deployment', data: { replicas: 'many' } }], edges: [] } })
  t.equal(res.statusCode, 200)
})

t.test('update, status, clone and delete', async (t) => {
  const wf = await create({ name: 'ops', description: 'd' })
  let res = await app.inject({ method: 'PUT', url: `/v1/api/workflows/${wf.id}`, headers: auth(as), payload: { name: 'ops2', metadata: { k: 1 } } })
  t.equal(res.statusCode, 200)
  t.match(res.json(), { name: 'ops2', description: 'd', metadata: { k: 1 } })
  res = await app.inject({ method: 'PUT', url: `/v1/api/workflows/${wf.id}`, headers: auth(as), payload: {} })
  t.equal(res.statusCode, 400, 'an empty update is refused')

  const archived = app.bus.next('workflow.archived', (e) => e.workflow_id === wf.id)
  res = await app.inject({ method: 'PUT', url: `/v1/api/workflows/${wf.id}/status`, headers: auth(as), payload: { status: 'archived' } })
  t.equal(res.statusCode, 200)
  t.equal(res.json().status, 'archived')
  t.same(await archived, { owner_id: alice.user.id, workflow_id: wf.id }, 'archiving announces it on the bus (watchers stop on it)')
  res = await app.inject({ method: 'PUT', url: `/v1/api/workflows/${wf.id}/status`, headers: auth(as), payload: { status: 'gone' } })
  t.equal(res.statusCode, 400)

  res = await app.inject({ method: 'POST', url: `/v1/api/workflows/${wf.id}/clone`, headers: auth(as) })
  t.equal(res.statusCode, 201)
  t.match(res.json(), { name: 'ops2 (copy)', status: 'draft', owner_id: alice.user.id, metadata: { k: 1 }, current_version: 0 })
  t.not(res.json().id, wf.id)
  res = await app.inject({ method: 'POST', url: `/v1/api/workflows/${wf.id}/clone`, headers: auth(as), payload: { name: 'named' } })
  t.equal(res.json().name, 'named')

  res = await app.inject({ method: 'DELETE', url: `/v1/api/workflows/${wf.id}`, headers: auth(as) })
  t.equal(res.statusCode, 204)
  t.equal(res.body, '')
  res = await app.inject({ url: `/v1/api/workflows/${wf.id}`, headers: auth(as) })
  t.equal(res.statusCode, 404)
  t.same(res.json(), { error: 'workflow not found' })
})

t.test('list: paginated, searchable literally, filterable by status, only the caller\'s', async (t) => {
  const bob = await registerUser(app)
  for (let i = 0; i < 25; i++) await create({ name: `listed ${String(i).padStart(2, '0')}`, description: i % 2 ? 'odd (one)' : 'even' }, bob.token)
  await create({ name: 'other user' })
  let res = await app.inject({ url: '/v1/api/workflows', headers: auth(bob.token) })
  t.equal(res.statusCode, 200)
  let body = res.json()
  t.match(body, { total: 25, page: 1, limit: 20 })
  t.equal(body.workflows.length, 20)
  t.equal(body.workflows[0].name, 'listed 24', 'newest first')
  res = await app.inject({ url: '/v1/api/workflows?page=2&limit=20&sort=name&order=asc', headers: auth(bob.token) })
  body = res.json()
  t.same(body.workflows.map((w: { name: string }) => w.name), ['listed 20', 'listed 21', 'listed 22', 'listed 23', 'listed 24'])
  res = await app.inject({ url: `/v1/api/workflows?search=${encodeURIComponent('(one)')}`, headers: auth(bob.token) })
  t.equal(res.json().total, 12, 'parentheses match literally')
  res = await app.inject({ url: `/v1/api/workflows?search=${encodeURIComponent('.*')}`, headers: auth(bob.token) })
  t.equal(res.json().total, 0)
  res = await app.inject({ url: '/v1/api/workflows?status=published', headers: auth(bob.token) })
  t.equal(res.json().total, 0)
  res = await app.inject({ url: '/v1/api/workflows?limit=101', headers: auth(bob.token) })
  t.equal(res.statusCode, 400)
  res = await app.inject({ url: '/v1/api/workflows?sort=owner_id', headers: auth(bob.token) })
  t.equal(res.statusCode, 400)
})

t.test('every workflow route needs a token', async (t) => {
  const res = await app.inject({ url: '/v1/api/workflows' })
  t.equal(res.statusCode, 401)
  t.same(Object.keys(res.json()), ['error'])
})

t.test('runs: sort=created_at is accepted and is the default (a run is created as it starts)', async (t) => {
  const wf = await create({ name: 'with runs' })
  const run = (n: number) => ({
    _id: `aaaaaaaaaaaaaaaaaaaaaa${String(n).padStart(2, '0')}` as never, owner_id: alice.user.id, workflow_id: wf.id, version: n, cluster: 'prod', namespace: null,
    status: 'completed', dry_run: false, started_at: new Date(Date.UTC(2026, 0, n)), finished_at: null, duration_ms: null, triggered_by: alice.user.id,
    nodes: [], logs: [], error: null,
  })
  // Inserted out of order, so neither insertion order nor id order can pass for time order.
  await app.db.collection('workflow_runs').insertMany([run(2), run(3), run(1)])
  const versions = async (query: string) => {
    const res = await app.inject({ url: `/v1/api/workflows/${wf.id}/runs${query}`, headers: auth(as) })
    t.equal(res.statusCode, 200, `${query}: ${res.body}`)
    return res.json().runs.map((r: { version: number }) => r.version)
  }
  t.same(await versions('?sort=created_at&order=asc'), [1, 2, 3])
  t.same(await versions('?sort=created_at'), [3, 2, 1])
  t.same(await versions(''), [3, 2, 1], 'newest first by default')
  t.same(await versions('?sort=started_at&order=asc'), [1, 2, 3])
})

t.test('status: the reply carries exactly the stored updated_at', async (t) => {
  const wf = await create({ name: 'timed' })
  const res = await app.inject({ method: 'PUT', url: `/v1/api/workflows/${wf.id}/status`, headers: auth(as), payload: { status: 'published' } })
  const stored = (await app.inject({ url: `/v1/api/workflows/${wf.id}`, headers: auth(as) })).json()
  t.equal(res.json().updated_at, stored.updated_at)
  // A clock that moves on every reading shows any second reading of it.
  let tick = 0
  const repo = new WorkflowRepository(app.db, () => new Date(Date.UTC(2030, 0, 1) + tick++))
  const changed = await repo.setStatus(alice.user.id, wf.id, 'archived')
  const doc = await app.db.collection('workflows').findOne({ _id: wf.id as never })
  t.equal(changed!.workflow.updated_at, doc!.updated_at.toISOString())
})
