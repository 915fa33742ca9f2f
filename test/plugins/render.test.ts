// A plugin at work: once enabled, a canvas node of type `plugin` naming it renders into its custom resource
// through GET /workflows/:id/manifests (config values from the node, defaults for the rest); once disabled,
// the same node is a per-node error and renders nothing.
import t from 'tap'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'
import { widget } from './fixtures.ts'

const { app } = await startTestApp(t)
const admin = await registerUser(app, { role: 'admin' })
const user = await registerUser(app, { role: 'user' })

const plugin = (await app.inject({ method: 'POST', url: '/v1/api/plugins', headers: admin.headers, payload: widget() })).json()
const wf = (await app.inject({ method: 'POST', url: '/v1/api/workflows', headers: user.headers, payload: { name: 'with a widget' } })).json()
const saved = await app.inject({
  method: 'POST', url: `/v1/api/workflows/${wf.id}/save`, headers: user.headers,
  payload: { nodes: [{ id: 'w1', type: 'plugin', position: { x: 0, y: 0 }, data: { name: 'big-widget', namespace: 'apps', pluginId: plugin.id, size: 7, owner: 'team-a' } }], edges: [] },
})
const manifests = () => app.inject({ url: `/v1/api/workflows/${wf.id}/manifests`, headers: { ...user.headers, accept: 'application/json' } })

t.test('the workflow saves with a plugin node', async (t) => {
  t.equal(saved.statusCode, 200, saved.body)
})

t.test('an enabled plugin\'s node renders its custom resource from the node\'s values and the defaults', async (t) => {
  await app.inject({ method: 'POST', url: `/v1/api/plugins/${plugin.id}/enable`, headers: admin.headers })
  const res = await manifests()
  t.equal(res.statusCode, 200, res.body)
  const body = res.json()
  t.same(body.diagnostics.filter((d: { severity: string }) => d.severity === 'error'), [])
  const widgets = body.objects.filter((o: { object: { kind: string } }) => o.object.kind === 'Widget')
  t.equal(widgets.length, 1)
  t.match(widgets[0], {
    node_id: 'w1',
    object: { apiVersion: 'widgets.example.com/v1beta1', metadata: { name: 'big-widget', namespace: 'apps' }, spec: { size: 7, mode: 'safe', verbose: false, owner: 'team-a' } },
  })
})

t.test('after disabling, the node is a per-node error naming the plugin and renders nothing', async (t) => {
  await app.inject({ method: 'POST', url: `/v1/api/plugins/${plugin.id}/disable`, headers: admin.headers })
  const body = (await manifests()).json()
  t.notOk(body.objects.some((o: { object: { kind: string } }) => o.object.kind === 'Widget'))
  t.match(body.diagnostics, [{ node_id: 'w1', severity: 'error', message: /widget.*disabled/ }])
})
