import t from 'tap'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'

const { app } = await startTestApp(t)
const { token } = await registerUser(app)
const headers = { authorization: `Bearer ${token}` }
const call = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => {
  const res = await app.inject({ method, url, headers, ...(payload && { payload }) })
  return { status: res.statusCode, body: res.body ? res.json() : undefined }
}

const wf = (await call('POST', '/v1/api/workflows', { name: 'versioned' })).body
const base = `/v1/api/workflows/${wf.id}`
const node = (id: string, data: Record<string, unknown>) => ({ id, type: 'deployment', position: { x: 0, y: 0 }, data })

t.test('20 concurrent manual versions get 20 distinct consecutive numbers', async (t) => {
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => call('POST', `${base}/versions`, { name: `v${i}` })))
  t.same(results.map((r) => r.status), Array(20).fill(201))
  t.same(results.map((r) => r.body.version).sort((a, b) => a - b), Array.from({ length: 20 }, (_, i) => i + 1))
  const current = (await call('GET', base)).body.current_version
  t.equal(current, 20)
  const page = await call('GET', `${base}/versions?limit=100&sort=version&order=asc`)
  t.equal(page.body.total, 20)
  t.same(page.body.versions.map((v: { version: number }) => v.version), Array.from({ length: 20 }, (_, i) => i + 1))
})

t.test('a version is a snapshot: later saves do not change it', async (t) => {
  await call('POST', `${base}/save`, { nodes: [node('web', { name: 'web', image: 'nginx:1.0', replicas: 1 })], edges: [] })
  const v = (await call('POST', `${base}/versions`, { name: 'first graph', tag: 'stable', description: 'd' })).body
  t.match(v, { version: 21, name: 'first graph', tag: 'stable', description: 'd', is_automatic: false, restored_from: null, workflow_id: wf.id })
  await call('POST', `${base}/save`, { nodes: [node('web', { name: 'web', image: 'nginx:2.0', replicas: 3 })], edges: [] })
  const got = (await call('GET', `${base}/versions/21`)).body
  t.equal(got.nodes[0].data.image, 'nginx:1.0')
})

t.test('update metadata; unknown version is 404; non-numeric version is 400', async (t) => {
  const res = await call('PUT', `${base}/versions/21`, { tag: 'gold' })
  t.equal(res.status, 200)
  t.match(res.body, { tag: 'gold', name: 'first graph' })
  t.equal((await call('GET', `${base}/versions/999`)).status, 404)
  t.equal((await call('GET', `${base}/versions/abc`)).status, 400)
  t.equal((await call('PUT', `${base}/versions/21`, { nodes: [] })).status, 400, 'the graph of a version cannot be edited')
})

t.test('compare reports exactly the changed fields', async (t) => {
  await call('POST', `${base}/save`, {
    nodes: [node('web', { name: 'web', image: 'nginx:2.0', replicas: 3 }), { id: 'svc', type: 'service', data: { name: 'web' } }],
    edges: [{ id: 'e1', source: 'web', target: 'svc' }],
  })
  const v22 = (await call('POST', `${base}/versions`)).body
  t.equal(v22.version, 22)
  const diff = await call('GET', `${base}/versions/compare?v1=21&v2=22`)
  t.equal(diff.status, 200)
  t.same(diff.body, {
    from_version: 21, to_version: 22,
    added_nodes: [{ id: 'svc', type: 'service', data: { name: 'web' } }],
    removed_nodes: [],
    modified_nodes: [{ node_id: 'web', type: 'deployment', changes: [{ path: '/data/image', old: 'nginx:1.0', new: 'nginx:2.0' }, { path: '/data/replicas', old: 1, new: 3 }] }],
    added_edges: [{ id: 'e1', source: 'web', target: 'svc' }],
    removed_edges: [],
    modified_edges: [],
  })
  t.equal((await call('GET', `${base}/versions/compare?v1=21`)).status, 400)
  t.equal((await call('GET', `${base}/versions/compare?v1=21&v2=500`)).status, 404)
})

t.test('restore copies the graph back and records a new version; then compare shows no difference', async (t) => {
  const res = await call('POST', `${base}/versions/21/restore`)
  t.equal(res.status, 200)
  t.match(res.body.version, { version: 23, restored_from: 21, is_automatic: true })
  t.equal(res.body.workflow.nodes[0].data.image, 'nginx:1.0')
  t.equal(res.body.workflow.current_version, 23)
  const diff = (await call('GET', `${base}/versions/compare?v1=21&v2=23`)).body
  t.same(diff, { from_version: 21, to_version: 23, added_nodes: [], removed_nodes: [], modified_nodes: [], added_edges: [], removed_edges: [], modified_edges: [] })
})

t.test('compare: an edge that kept its id but changed is modified, not removed and added', async (t) => {
  const nodes = [node('web', { name: 'web' }), node('api', { name: 'api' }), { id: 'svc', type: 'service', data: { name: 'svc' } }]
  await call('POST', `${base}/save`, { nodes, edges: [{ id: 'e1', source: 'web', target: 'svc' }, { id: 'e2', source: 'api', target: 'svc' }] })
  const before = (await call('POST', `${base}/versions`)).body.version
  await call('POST', `${base}/save`, { nodes, edges: [{ id: 'e1', source: 'api', target: 'svc', sourceHandle: 'out' }, { id: 'e2', source: 'api', target: 'svc' }] })
  const after = (await call('POST', `${base}/versions`)).body.version
  const diff = (await call('GET', `${base}/versions/compare?v1=${before}&v2=${after}`)).body
  t.same(diff.added_edges, [])
  t.same(diff.removed_edges, [])
  t.same(diff.modified_edges, [{ edge_id: 'e1', changes: [{ path: '/source', old: 'web', new: 'api' }, { path: '/sourceHandle', new: 'out' }] }])
})

t.test('restore and save never interleave: the restored version holds the restored graph, the workflow one whole graph', async (t) => {
  const graphA = { nodes: [node('a', { name: 'a', image: 'nginx:a' })], edges: [], metadata: { from: 'a' } }
  const graphB = { nodes: [node('b', { name: 'b', image: 'nginx:b' }), node('b2', { name: 'b2' })], edges: [{ id: 'eb', source: 'b', target: 'b2' }], metadata: { from: 'b' } }
  await call('POST', `${base}/save`, graphA)
  const source = (await call('POST', `${base}/versions`, { name: 'graph A' })).body.version
  const pick = (g: { nodes: unknown; edges: unknown; metadata: unknown }) => JSON.stringify({ nodes: g.nodes, edges: g.edges, metadata: g.metadata })
  const whole = [pick(graphA), pick(graphB)]

  // A save started the moment the restore has written (its update announcement) is the tightest race.
  const saved: Array<Promise<unknown>> = []
  const off = app.bus.on('workflow.updated', (e) => {
    if (e.workflow_id === wf.id && saved.length === 0) saved.push(app.services.workflows.save(wf.owner_id, wf.id, graphB))
  })
  const raced = await call('POST', `${base}/versions/${source}/restore`)
  off()
  await Promise.all(saved)
  t.equal(raced.status, 200)
  t.equal(pick(raced.body.version), pick(graphA), 'the version recorded for the restore is graph A')
  t.ok(whole.includes(pick((await call('GET', base)).body)), 'the workflow holds one whole graph')

  for (let round = 0; round < 10; round++) {
    await call('POST', `${base}/save`, graphB)
    const [restored, save] = await Promise.all([call('POST', `${base}/versions/${source}/restore`), call('POST', `${base}/save`, graphB)])
    t.equal(restored.status, 200)
    t.equal(save.status, 200)
    t.equal(pick(restored.body.version), pick(graphA), `round ${round}: the restored version is graph A`)
    t.equal(pick(restored.body.workflow), pick(graphA), `round ${round}: the restore's reply shows what it wrote`)
    const stored = (await call('GET', `${base}/versions/${restored.body.version.version}`)).body
    t.equal(pick(stored), pick(graphA), `round ${round}: as stored`)
    t.ok(whole.includes(pick((await call('GET', base)).body)), `round ${round}: the workflow holds one whole graph`)
  }
})

t.test('compare leaves out a node\'s live status (data._status), which the watchers write, not the user', async (t) => {
  const graph = (status: string) => ({ nodes: [node('web', { name: 'web', image: 'nginx:3.0', _status: { state: status, message: status } })], edges: [] })
  await call('POST', `${base}/save`, graph('pending'))
  const a = (await call('POST', `${base}/versions`)).body.version
  await call('POST', `${base}/save`, graph('running'))
  const b = (await call('POST', `${base}/versions`)).body.version
  const diff = (await call('GET', `${base}/versions/compare?v1=${a}&v2=${b}`)).body
  t.same(diff.modified_nodes, [], 'only the live status differs')
  await call('POST', `${base}/save`, { nodes: [node('web', { name: 'web', image: 'nginx:3.1', _status: { state: 'failed' } })], edges: [] })
  const c = (await call('GET', `${base}/versions/compare?v1=${b}&v2=${(await call('POST', `${base}/versions`)).body.version}`)).body
  t.same(c.modified_nodes, [{ node_id: 'web', type: 'deployment', changes: [{ path: '/data/image', old: 'nginx:3.0', new: 'nginx:3.1' }] }], 'a real edit still shows, without the status')
})
