// GET /v1/api/workflows/:id/manifests: YAML by default and JSON on request, in apply order, owner-scoped,
// never a secret value.
import t from 'tap'
import { parseAllDocuments } from 'yaml'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'
import { negotiate } from '../../src/routes/workflows/manifests.ts'
import { fullCanvas } from './canvas.ts'

const { app, logs } = await startTestApp(t)
const alice = await registerUser(app)
const bob = await registerUser(app)
const admin = await registerUser(app, { role: 'admin' })

const canvas = fullCanvas()
// Whatever a canvas stores next to a secret node, no value of it is ever rendered.
const secretNode = canvas.nodes.find((n) => n.type === 'secret')!
secretNode.data = { ...secretNode.data, DB_PASSWORD: 'leak-me-1', value: 'leak-me-2', values: { API_KEY: 'leak-me-3' } }
const wf = (await app.inject({ method: 'POST', url: '/v1/api/workflows', headers: alice.headers, payload: { name: 'shop "main"\n---' } })).json()
const saved = await app.inject({ method: 'POST', url: `/v1/api/workflows/${wf.id}/save`, headers: alice.headers, payload: canvas })
t.equal(saved.statusCode, 200, 'canvas saved')
const url = `/v1/api/workflows/${wf.id}/manifests`

t.test('YAML by default, with no Accept, */* or application/yaml: the objects in apply order', async (t) => {
  const json = (await app.inject({ url, headers: { ...alice.headers, accept: 'application/json' } })).json()
  for (const accept of [undefined, '*/*', 'application/yaml', 'text/html;q=0.5, application/yaml']) {
    const res = await app.inject({ url, headers: { ...alice.headers, ...(accept !== undefined && { accept }) } })
    t.equal(res.statusCode, 200, `Accept ${accept}`)
    t.match(res.headers['content-type'], /^application\/yaml/)
    const docs = parseAllDocuments(res.body, { version: '1.1' })
    t.same(docs.map((d) => d.errors), docs.map(() => []))
    t.same(docs.map((d) => d.toJS()), json.objects.map((o: { object: unknown }) => o.object), 'the same objects as the JSON form, in order')
  }
  const res = await app.inject({ url, headers: alice.headers })
  t.match(res.body, /^# Workflow "shop \\"main\\"\\n---" \(/, 'the header names the workflow, escaped')
  t.equal(parseAllDocuments(res.body).length, 17, 'no document from the workflow name')
})

t.test('JSON on request: objects with their node ids, and diagnostics', async (t) => {
  const res = await app.inject({ url, headers: { ...alice.headers, accept: 'application/json' } })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^application\/json/)
  const body = res.json()
  t.equal(body.workflow_id, wf.id)
  t.equal(body.namespace, null)
  t.same(body.diagnostics, [])
  t.equal(body.objects.length, 17)
  t.same(body.objects.slice(0, 2).map((o: any) => o.object.kind), ['Namespace', 'ServiceAccount'])
  const deployment = body.objects.find((o: any) => o.object.kind === 'Deployment')
  t.equal(deployment.node_id, 'n-deployment')
  t.equal(deployment.object.spec.template.spec.containers[0].image, 'ghcr.io/acme/api:1.4.2', 'nested fields survive serialization')
})

t.test('secret values never appear; the secret shows its keys', async (t) => {
  for (const accept of ['application/yaml', 'application/json']) {
    const res = await app.inject({ url, headers: { ...alice.headers, accept } })
    t.notMatch(res.body, /leak-me/, accept)
  }
  const secret = (await app.inject({ url, headers: { ...alice.headers, accept: 'application/json' } })).json().objects.find((o: any) => o.object.kind === 'Secret')
  t.same(secret.object.data, { DB_PASSWORD: '', API_KEY: '' })
  t.notMatch(logs.join(''), /leak-me/, 'nor in the log')
})

t.test('?namespace previews a run\'s namespace override; an invalid one is a 400', async (t) => {
  const body = (await app.inject({ url: `${url}?namespace=staging`, headers: { ...alice.headers, accept: 'application/json' } })).json()
  t.equal(body.namespace, 'staging')
  t.ok(body.objects.every((o: any) => (o.object.kind === 'Namespace' ? o.object.metadata.name : o.object.metadata.namespace) === 'staging'))
  const bad = await app.inject({ url: `${url}?namespace=Not_Valid`, headers: alice.headers })
  t.equal(bad.statusCode, 400)
  t.match(bad.json(), { error: /namespace/ })
})

t.test('per-node diagnostics: in JSON, and as leading comments in YAML', async (t) => {
  const wf2 = (await app.inject({ method: 'POST', url: '/v1/api/workflows', headers: alice.headers, payload: { name: 'broken' } })).json()
  await app.inject({ method: 'POST', url: `/v1/api/workflows/${wf2.id}/save`, headers: alice.headers, payload: {
    nodes: [{ id: 'w', type: 'deployment', data: { name: 'w' } }, { id: 'p', type: 'plugin', data: { name: 'cert', pluginId: 'cert-manager-certificate', dnsName: 'a.example.com', secretName: 'a-tls' } }], edges: [],
  } })
  const body = (await app.inject({ url: `/v1/api/workflows/${wf2.id}/manifests`, headers: { ...alice.headers, accept: 'application/json' } })).json()
  t.same(body.objects, [])
  t.same(body.diagnostics, [
    { node_id: 'w', severity: 'error', message: 'image: required' },
    { node_id: 'p', severity: 'error', message: 'pluginId: plugin cert-manager-certificate is disabled; an administrator must enable it' },
  ])
  const yaml = (await app.inject({ url: `/v1/api/workflows/${wf2.id}/manifests`, headers: alice.headers })).body
  t.match(yaml, /\n# error in node "w": image: required\n/)
  // Once an admin enables the catalogue's cert-manager plugin, the same node renders its Certificate.
  const list = (await app.inject({ url: '/v1/api/plugins?search=cert-manager-certificate', headers: admin.headers })).json()
  const plugin = list.plugins.find((p: { name: string }) => p.name === 'cert-manager-certificate')
  t.equal((await app.inject({ method: 'POST', url: `/v1/api/plugins/${plugin.id}/enable`, headers: admin.headers })).statusCode, 200)
  const after = (await app.inject({ url: `/v1/api/workflows/${wf2.id}/manifests`, headers: { ...alice.headers, accept: 'application/json' } })).json()
  t.same(after.objects.map((o: any) => [o.node_id, o.object.kind]), [['p', 'Certificate']])
})

t.test('another user\'s workflow, a missing one and a malformed id are all 404', async (t) => {
  for (const [who, id] of [[bob, wf.id], [alice, '665f1c2ab4d3e9a1c0ffee99'], [alice, 'nope']] as const) {
    const res = await app.inject({ url: `/v1/api/workflows/${id}/manifests`, headers: who.headers })
    t.equal(res.statusCode, 404)
    t.same(res.json(), { error: 'workflow not found' })
  }
})

t.test('no token is a 401; an Accept naming neither YAML nor JSON is a 406', async (t) => {
  t.equal((await app.inject({ url })).statusCode, 401)
  const res = await app.inject({ url, headers: { ...alice.headers, accept: 'text/html' } })
  t.equal(res.statusCode, 406)
  t.match(res.json(), { error: /application\/yaml or application\/json/ })
})

t.test('Accept negotiation honours q-values and prefers a named type over a wildcard', async (t) => {
  t.equal(negotiate(undefined), 'yaml')
  t.equal(negotiate('application/json'), 'json')
  t.equal(negotiate('application/json, */*;q=0.1'), 'json')
  t.equal(negotiate('*/*, application/json'), 'json')
  t.equal(negotiate('application/json;q=0.2, application/yaml'), 'yaml')
  t.equal(negotiate('application/yaml;q=0, application/json;q=0.1'), 'json')
  t.equal(negotiate('text/yaml'), 'yaml')
  t.equal(negotiate('image/png'), null)
})
