// The Plugins group over HTTP: who may do what, registration and duplicates, lists and filters, enablement
// feeding the palette, search, and the version rules of PUT.
import t from 'tap'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'
import { widget, WIDGET_TEMPLATE } from './fixtures.ts'
import { PLUGIN_CATEGORIES } from '../../schemas/plugin.ts'

const { app } = await startTestApp(t)
const admin = await registerUser(app, { role: 'admin' })
const user = await registerUser(app, { role: 'user' })

type Method = 'GET' | 'POST' | 'PUT'
const call = (who: { headers: Record<string, string> } | null, method: Method, url: string, payload?: object) =>
  app.inject({ method, url, ...(who && { headers: who.headers }), ...(payload && { payload }) })

const created = await call(admin, 'POST', '/v1/api/plugins', widget())
const plugin = created.json()

t.test('an admin registers a plugin: 201, disabled, version 1.0.0, with id and timestamps', async (t) => {
  t.equal(created.statusCode, 201, created.body)
  t.match(plugin, { name: 'widget', enabled: false, builtin: false, version: '1.0.0', category: 'networking', crd: { kind: 'Widget' } })
  t.match(plugin.id, /^[0-9a-f]{24}$/)
  t.equal(plugin.created_at, plugin.updated_at)
  t.same(plugin.config_fields.map((f: { name: string }) => f.name), ['size', 'mode', 'verbose', 'note', 'token', 'owner'])
  t.equal(plugin.config_fields[3].required, false)
})

t.test('the same name again is 409, whatever else differs', async (t) => {
  const res = await call(admin, 'POST', '/v1/api/plugins', widget({ display_name: 'Another widget' }))
  t.equal(res.statusCode, 409)
  t.same(res.json(), { error: 'a plugin named "widget" exists' })
})

t.test('two racing registrations of one name: exactly one is created, the other is 409', async (t) => {
  const [a, b] = await Promise.all([0, 1].map(() => call(admin, 'POST', '/v1/api/plugins', widget({ name: 'racer', display_name: 'Racer', description: 'Races.' }))))
  t.same([a.statusCode, b.statusCode].sort(), [201, 409])
  t.equal((await call(admin, 'GET', '/v1/api/plugins?search=racer')).json().total, 1)
})

t.test('a plain user reads plugins but cannot write them; anonymous callers get 401', async (t) => {
  t.equal((await call(user, 'GET', `/v1/api/plugins/${plugin.id}`)).statusCode, 200)
  for (const [method, url, body] of [
    ['POST', '/v1/api/plugins', widget({ name: 'mine' })],
    ['POST', '/v1/api/plugins', { nonsense: true }],
    ['PUT', `/v1/api/plugins/${plugin.id}`, widget({ display_name: 'Hijacked' })],
    ['POST', `/v1/api/plugins/${plugin.id}/enable`, undefined],
    ['POST', `/v1/api/plugins/${plugin.id}/disable`, undefined],
  ] as Array<[Method, string, object | undefined]>) {
    const res = await call(user, method, url, body)
    t.equal(res.statusCode, 403, `${method} ${url} as a user`)
    t.same(res.json(), { error: 'admin role required' })
    t.equal((await call(null, method, url, body)).statusCode, 401, `${method} ${url} anonymously`)
  }
  const after = (await call(admin, 'GET', `/v1/api/plugins/${plugin.id}`)).json()
  t.match(after, { display_name: 'Widget', enabled: false, version: '1.0.0' }, 'nothing changed')
  t.equal((await call(admin, 'GET', '/v1/api/plugins?search=mine')).json().total, 0)
})

t.test('GET /plugins pages and filters by category, enabled and search; sort is allow-listed', async (t) => {
  const all = (await call(user, 'GET', '/v1/api/plugins?limit=100')).json()
  t.ok(all.total >= 15, 'the catalogue, the widget and the racer')
  t.match(all, { page: 1, limit: 100 })
  const networking = (await call(user, 'GET', '/v1/api/plugins?category=networking&limit=100')).json()
  t.ok(networking.plugins.length >= 2)
  t.ok(networking.plugins.every((p: { category: string }) => p.category === 'networking'))
  const found = (await call(user, 'GET', '/v1/api/plugins?search=widget')).json()
  t.same(found.plugins.map((p: { id: string }) => p.id), [plugin.id])
  t.equal((await call(user, 'GET', '/v1/api/plugins?enabled=true')).json().total, 0, 'nothing is enabled yet')
  t.equal((await call(user, 'GET', '/v1/api/plugins?enabled=false')).json().total, all.total, 'everything is disabled')
  const byName = (await call(user, 'GET', '/v1/api/plugins?sort=name&order=asc&limit=3')).json()
  const names = byName.plugins.map((p: { name: string }) => p.name)
  t.same(names, [...names].sort())
  t.equal((await call(user, 'GET', '/v1/api/plugins?sort=template')).statusCode, 400)
  t.equal((await call(user, 'GET', '/v1/api/plugins?category=gaming')).statusCode, 400)
  t.equal((await call(user, 'GET', '/v1/api/plugins?limit=101')).statusCode, 400)
})

t.test('GET /plugins/categories lists the spec\'s 13 categories, with descriptions', async (t) => {
  const res = await call(user, 'GET', '/v1/api/plugins/categories')
  t.equal(res.statusCode, 200)
  t.same(res.json().categories, ['virtualization', 'networking', 'storage', 'monitoring', 'security', 'workflow', 'database', 'messaging', 'backup', 'ci-cd', 'ml', 'policy', 'scaling'])
  t.same(res.json().details.map((d: { name: string }) => d.name), PLUGIN_CATEGORIES)
  t.ok(res.json().details.every((d: { description: string }) => d.description.length > 0))
})

t.test('GET /plugins/:id answers 404 for an unknown or malformed id', async (t) => {
  for (const id of ['0123456789abcdef01234567', 'not-an-id']) {
    const res = await call(user, 'GET', `/v1/api/plugins/${id}`)
    t.equal(res.statusCode, 404)
    t.same(res.json(), { error: 'plugin not found' })
  }
  t.equal((await call(admin, 'POST', '/v1/api/plugins/0123456789abcdef01234567/enable')).statusCode, 404)
  t.equal((await call(admin, 'PUT', '/v1/api/plugins/0123456789abcdef01234567', widget())).statusCode, 404)
})

const paletteEntry = async () => (await call(user, 'GET', '/v1/api/templates')).json().templates.find((x: { plugin_id: string | null }) => x.plugin_id === plugin.id)

t.test('enabling puts the node type in /templates and /plugins/enabled; disabling takes it out', async (t) => {
  t.notOk(await paletteEntry(), 'a new plugin is not in the palette')
  const enabled = await call(admin, 'POST', `/v1/api/plugins/${plugin.id}/enable`)
  t.equal(enabled.statusCode, 200)
  t.equal(enabled.json().enabled, true)
  const again = await call(admin, 'POST', `/v1/api/plugins/${plugin.id}/enable`)
  t.match(again.json(), { enabled: true, updated_at: enabled.json().updated_at }, 'enabling twice changes nothing')

  const entry = await paletteEntry()
  t.match(entry, { id: `plugin:${plugin.id}`, name: 'widget', display_name: 'Widget', category: 'networking', is_plugin: true, plugin_id: plugin.id, version: '1.0.0' })
  const params = Object.fromEntries(entry.parameters.map((p: { name: string }) => [p.name, p]))
  t.match(params.pluginId, { required: true, default: plugin.id }, 'the canvas learns which pluginId to put in the node')
  t.match(params.name, { required: true, type: 'string' })
  t.match(params.size, { type: 'number', default: 3, required: true })
  t.match(params.mode, { type: 'select', options: ['fast', 'safe'], default: 'safe' })
  t.match(params.token, { type: 'secret', default: null })
  t.same((await call(user, 'GET', '/v1/api/plugins/enabled')).json().plugins.map((p: { id: string }) => p.id), [plugin.id])
  t.equal((await call(user, 'GET', '/v1/api/plugins?enabled=true')).json().total, 1)

  const disabled = await call(admin, 'POST', `/v1/api/plugins/${plugin.id}/disable`)
  t.equal(disabled.json().enabled, false)
  t.notOk(await paletteEntry(), 'gone from the palette')
  t.same((await call(user, 'GET', '/v1/api/plugins/enabled')).json().plugins, [])
  t.equal((await call(user, 'GET', '/v1/api/templates')).json().templates.length, 16, 'only the built-in node types remain')
})

t.test('global search finds plugins for every signed-in user', async (t) => {
  const res = await call(user, 'GET', '/v1/api/search?q=widg')
  t.equal(res.statusCode, 200)
  t.same(res.json().plugins, [{ id: plugin.id, name: 'widget' }])
  const cert = (await call(user, 'GET', '/v1/api/search?q=cert-manager')).json()
  t.ok(cert.plugins.some((p: { name: string }) => p.name === 'cert-manager-certificate'), 'built-in plugins are found too')
})

t.test('the plugin service finds a plugin for rendering by id or by name, enabled or not', async (t) => {
  const service = app.services.plugins
  t.match(await service.getForRender(plugin.id), { id: plugin.id, enabled: false })
  t.match(await service.getForRender('widget'), { id: plugin.id })
  t.equal(await service.getForRender('no-such-plugin'), null)
  t.equal(await service.getForRender('0123456789abcdef01234567'), null)
})

t.test('PUT: version moves by minor on field changes, by patch on template-only changes, not otherwise', async (t) => {
  const put = (body: object) => call(admin, 'PUT', `/v1/api/plugins/${plugin.id}`, body)
  let current = (await call(admin, 'GET', `/v1/api/plugins/${plugin.id}`)).json()

  const cosmetic = await put(widget({ display_name: 'Widget (renamed)', description: 'new words', icon: 'cube', version: current.version }))
  t.equal(cosmetic.statusCode, 200, cosmetic.body)
  t.match(cosmetic.json(), { display_name: 'Widget (renamed)', icon: 'cube', version: '1.0.0' }, 'label, description and icon: no bump')
  current = cosmetic.json()

  const template = await put(widget({ display_name: current.display_name, description: current.description, icon: 'cube', template: WIDGET_TEMPLATE + '  tier: gold\n' }))
  t.match(template.json(), { version: '1.0.1', template: /tier: gold/ }, 'template only: patch')

  const base = widget({ display_name: current.display_name, description: current.description, icon: 'cube', template: WIDGET_TEMPLATE + '  tier: gold\n' })
  const fields = [...base.config_fields, { name: 'tier', label: 'Tier', type: 'string', default: 'gold', required: false }]
  const withField = await put({ ...base, config_fields: fields })
  t.match(withField.json(), { version: '1.1.0' }, 'config fields: minor, patch reset')

  const both = await put({ ...base, config_fields: fields, template: WIDGET_TEMPLATE + '  tier: {{ .tier }}\n' })
  t.match(both.json(), { version: '1.1.1' }, 'template change with the same fields: patch')
  const bothChanged = await put({ ...base, config_fields: fields.slice(0, -1), template: WIDGET_TEMPLATE })
  t.match(bothChanged.json(), { version: '1.2.0' }, 'fields and template: minor once')

  const same = await put({ ...base, config_fields: fields.slice(0, -1), template: WIDGET_TEMPLATE, version: '1.2.0' })
  t.match(same.json(), { version: '1.2.0', updated_at: bothChanged.json().updated_at }, 'an identical definition changes nothing')

  const reordered = await put({ ...base, config_fields: fields.slice(0, -1).map((f) => Object.fromEntries(Object.entries(f).reverse())), template: WIDGET_TEMPLATE })
  t.match(reordered.json(), { version: '1.2.0' }, 'key order inside a field is not a change')
})

t.test('PUT refuses a stale version (409), a rename or an invalid definition (400), and keeps the stored one', async (t) => {
  const before = (await call(admin, 'GET', `/v1/api/plugins/${plugin.id}`)).json()
  const stale = await call(admin, 'PUT', `/v1/api/plugins/${plugin.id}`, widget({ template: WIDGET_TEMPLATE + '  x: y\n', version: '1.0.0' }))
  t.equal(stale.statusCode, 409)
  t.match(stale.json().error, /version 1\.2\.0, not 1\.0\.0/)
  const renamed = await call(admin, 'PUT', `/v1/api/plugins/${plugin.id}`, widget({ name: 'gadget' }))
  t.equal(renamed.statusCode, 400)
  t.match(renamed.json().error, /name cannot change/)
  const broken = await call(admin, 'PUT', `/v1/api/plugins/${plugin.id}`, widget({ template: WIDGET_TEMPLATE + '  colour: {{ .colour }}\n' }))
  t.equal(broken.statusCode, 400)
  t.match(broken.json().error, /\.colour/)
  const badDefault = await call(admin, 'PUT', `/v1/api/plugins/${plugin.id}`, widget({ config_fields: [{ name: 'size', label: 'Size', type: 'number', default: 'big', required: true }] }))
  t.equal(badDefault.statusCode, 400)
  t.same((await call(admin, 'GET', `/v1/api/plugins/${plugin.id}`)).json(), before, 'the stored plugin is unchanged')
})

t.test('every operation of the Plugins group is in the role matrix: 401 anonymous, 403 for users on writes', async (t) => {
  const matrix: Record<string, { write: boolean; body?: object }> = {
    registerPlugin: { write: true, body: widget({ name: 'matrix' }) }, listPlugins: { write: false }, listEnabledPlugins: { write: false },
    listPluginCategories: { write: false }, getPlugin: { write: false }, updatePlugin: { write: true, body: widget() },
    enablePlugin: { write: true }, disablePlugin: { write: true },
  }
  const paths = (app.swagger() as unknown as { paths: Record<string, Record<string, { operationId: string; responses: Record<string, unknown> }>> }).paths
  const seen = new Set<string>()
  for (const [path, ops] of Object.entries(paths)) {
    if (!path.startsWith('/v1/api/plugins')) continue
    for (const [method, op] of Object.entries(ops)) {
      const entry = matrix[op.operationId]
      if (!t.ok(entry, `${op.operationId} is in the matrix`)) continue
      seen.add(op.operationId)
      const url = path.replace('{id}', plugin.id)
      const m = method.toUpperCase() as Method
      t.equal((await call(null, m, url, entry.body)).statusCode, 401, `${m} ${path} anonymous`)
      const asUser = await call(user, m, url, entry.body)
      t.equal(asUser.statusCode, entry.write ? 403 : 200, `${m} ${path} as a user`)
      if (entry.write) t.ok(op.responses['403'], `${m} ${path} documents 403`)
      t.ok(op.responses['401'], `${m} ${path} documents 401`)
    }
  }
  t.same([...seen].sort(), Object.keys(matrix).sort(), 'every operation in the matrix exists')
})
