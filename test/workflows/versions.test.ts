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
  t.same(diff, { from_version: 21, to_version: 23, added_nodes: [], removed_nodes: [], modified_nodes: [], added_edges: [], removed_edges: [] })
})
