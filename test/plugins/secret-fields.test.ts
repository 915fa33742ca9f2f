// A plugin's `secret` fields are never stored in a workflow: their values come from the run's
// trigger_data.secrets. A save whose plugin node carries a value for one is refused, naming the node and
// the field, and writes nothing; empty fields (absent, null, '') are what the canvas sends and are kept.
import t from 'tap'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'
import { PluginRepository } from '../../src/repositories/plugins.ts'
import { widget } from './fixtures.ts'

const { app, logs } = await startTestApp(t)
const admin = await registerUser(app, { role: 'admin' })
const user = await registerUser(app, { role: 'user' })

const register = async (def: Record<string, unknown>) => {
  const res = await app.inject({ method: 'POST', url: '/v1/api/plugins', headers: admin.headers, payload: def })
  if (res.statusCode !== 201) throw new Error(`registration failed: ${res.body}`)
  return res.json() as { id: string; name: string }
}
// Widget's `token` is a secret field; gadget keeps it under another name so each plugin's own fields count.
const widgetPlugin = await register(widget())
const gadgetPlugin = await register(widget({
  name: 'gadget', display_name: 'Gadget',
  config_fields: [
    { name: 'size', label: 'Size', type: 'number', default: 3, required: true },
    { name: 'mode', label: 'Mode', type: 'select', options: ['fast', 'safe'], default: 'safe', required: false },
    { name: 'verbose', label: 'Verbose', type: 'boolean', default: false, required: false },
    { name: 'owner', label: 'Owner', type: 'string', required: false },
    { name: 'token', label: 'Token', type: 'string', required: false },
    { name: 'apiKey', label: 'API key', type: 'secret', required: false },
  ],
}))
await app.inject({ method: 'POST', url: `/v1/api/plugins/${gadgetPlugin.id}/enable`, headers: admin.headers })

const SECRET = 's3cr3t-value-never-stored'
const baseline = { nodes: [{ id: 'keep', type: 'deployment', position: { x: 0, y: 0 }, data: { name: 'web', image: 'nginx:1.27' } }], edges: [] }

async function freshWorkflow() {
  const wf = (await app.inject({ method: 'POST', url: '/v1/api/workflows', headers: user.headers, payload: { name: 'secrets' } })).json()
  const res = await app.inject({ method: 'POST', url: `/v1/api/workflows/${wf.id}/save`, headers: user.headers, payload: baseline })
  if (res.statusCode !== 200) throw new Error(res.body)
  return wf.id as string
}
const save = (id: string, nodes: unknown[]) => app.inject({ method: 'POST', url: `/v1/api/workflows/${id}/save`, headers: user.headers, payload: { nodes, edges: [] } })
const stored = async (id: string) => (await app.inject({ url: `/v1/api/workflows/${id}`, headers: user.headers })).json()
const pluginNode = (id: string, pluginId: string, extra: Record<string, unknown>) =>
  ({ id, type: 'plugin', position: { x: 0, y: 0 }, data: { name: id, namespace: 'apps', pluginId, size: 2, ...extra } })

t.test('a secret field\'s value on a node naming the plugin by id is refused with 400 naming node and field; nothing is written', async (t) => {
  const id = await freshWorkflow()
  const res = await save(id, [pluginNode('kafka-1', widgetPlugin.id, { token: SECRET })])
  t.equal(res.statusCode, 400)
  t.equal(res.json().error, 'nodes/0: node "kafka-1": "token" is a secret field; its value is supplied at run time (trigger_data.secrets), never saved')
  t.same((await stored(id)).nodes, baseline.nodes, 'the previous graph is still the stored one')
})

t.test('the same holds when the node names the plugin by name, and whether the plugin is enabled or not', async (t) => {
  const id = await freshWorkflow()
  const disabled = await save(id, [pluginNode('w', 'widget', { token: SECRET })])
  t.equal(disabled.statusCode, 400)
  t.match(disabled.json().error, /node "w": "token" is a secret field/)
  const enabled = await save(id, [pluginNode('g', 'gadget', { apiKey: SECRET })])
  t.equal(enabled.statusCode, 400)
  t.match(enabled.json().error, /node "g": "apiKey" is a secret field/)
  t.same((await stored(id)).nodes, baseline.nodes)
})

t.test('any non-empty value counts, not only strings', async (t) => {
  const id = await freshWorkflow()
  for (const value of [0, false, ' ', ['a'], { key: 'v' }]) {
    const res = await save(id, [pluginNode('w', widgetPlugin.id, { token: value })])
    t.equal(res.statusCode, 400, JSON.stringify(value))
  }
  t.same((await stored(id)).nodes, baseline.nodes)
})

t.test('among several plugin nodes the offending one is named, with its own plugin\'s field', async (t) => {
  const id = await freshWorkflow()
  const res = await save(id, [
    pluginNode('w-ok', widgetPlugin.id, { owner: 'team-a' }),
    // `token` is an ordinary string field of gadget: allowed here, though it is widget's secret.
    pluginNode('g-ok', gadgetPlugin.id, { token: 'not-a-secret-here' }),
    pluginNode('g-bad', gadgetPlugin.name, { apiKey: SECRET }),
  ])
  t.equal(res.statusCode, 400)
  t.match(res.json().error, /^nodes\/2: node "g-bad": "apiKey" is a secret field/)
})

t.test('an empty secret field (absent, null or empty string) is saved: the canvas sends its empty fields', async (t) => {
  const id = await freshWorkflow()
  const nodes = [
    pluginNode('absent', widgetPlugin.id, {}),
    pluginNode('null', widgetPlugin.id, { token: null }),
    pluginNode('empty', 'widget', { token: '' }),
    pluginNode('gadget', gadgetPlugin.id, { apiKey: '', token: 'plain field value' }),
  ]
  const res = await save(id, nodes)
  t.equal(res.statusCode, 200, res.body)
  t.same((await stored(id)).nodes, nodes)
})

t.test('a node of an unknown plugin saves: a half-drawn canvas may name a plugin not registered yet', async (t) => {
  const id = await freshWorkflow()
  const res = await save(id, [pluginNode('ghost', 'no-such-plugin', { token: SECRET })])
  t.equal(res.statusCode, 200, res.body)
})

t.test('the secret value appears in no response and no log line', async (t) => {
  const id = await freshWorkflow()
  const res = await save(id, [pluginNode('w', widgetPlugin.id, { token: SECRET })])
  t.equal(res.statusCode, 400)
  t.notMatch(res.body, SECRET)
  t.notOk(logs.some((line) => line.includes(SECRET)))
})

t.test('the plugin lookup resolves every id and name of a graph in one call, unknown references dropped', async (t) => {
  const repo = new PluginRepository(app.db)
  const found = await repo.findByRefs([widgetPlugin.id, 'gadget', 'no-such-plugin', '0123456789abcdef01234567'])
  t.same(found.map((d) => d.name).sort(), ['gadget', 'widget'])
  t.same(await repo.findByRefs([]), [])
})

t.test('a graph stored with a secret value before this check cannot come back through restore or clone', async (t) => {
  const id = await freshWorkflow()
  t.equal((await app.inject({ method: 'POST', url: `/v1/api/workflows/${id}/versions`, headers: user.headers })).statusCode, 201)
  // As a version saved before save refused secret values would look (written directly, as old data is).
  const withSecret = [pluginNode('old', widgetPlugin.id, { token: SECRET })]
  await app.db.collection('workflow_versions').updateOne({ workflow_id: id, version: 1 }, { $set: { nodes: withSecret } })
  const restored = await app.inject({ method: 'POST', url: `/v1/api/workflows/${id}/versions/1/restore`, headers: user.headers })
  t.equal(restored.statusCode, 400)
  t.match(restored.json().error, /^version 1 cannot be restored: it was saved with a secret value: nodes\/0: node "old": "token" is a secret field/)
  t.same((await stored(id)).nodes, baseline.nodes, 'the workflow keeps its graph')
  t.equal((await stored(id)).current_version, 1, 'no version was recorded for the refused restore')

  // A workflow saved with one before the check: inserted as a copy of this one under a new id.
  const doc = await app.db.collection('workflows').findOne({ _id: id as never })
  const oldId = '0123456789abcdef0123beef'
  await app.db.collection('workflows').insertOne({ ...doc, _id: oldId as never, name: 'legacy', nodes: withSecret })
  const total = async () => (await app.inject({ url: '/v1/api/workflows', headers: user.headers })).json().total
  const before = await total()
  const cloned = await app.inject({ method: 'POST', url: `/v1/api/workflows/${oldId}/clone`, headers: user.headers, payload: {} })
  t.equal(cloned.statusCode, 400)
  t.match(cloned.json().error, /^this workflow cannot be cloned until the value is removed/)
  t.equal(await total(), before, 'no copy was made')
})
