// The KubeOrch UI's component palette and plugins page against the adapter (CONTRACT.md §2.10, §2.11, §3;
// OBSERVED.md rows 8, 8b, 21): every field the UI reads, with its type and allowed values, the palette's
// own search run over the reply, a plugin node made the way the canvas makes it and rendered by this
// service, and the refusals with both `error` and `message`.
import t, { type Test } from 'tap'
import { startTestApp } from '../../helpers/app.ts'
import { registerUser } from '../../helpers/auth.ts'
import { widget } from '../../plugins/fixtures.ts'

const { app } = await startTestApp(t)
const admin = await registerUser(app, { role: 'admin' })
const user = await registerUser(app, { role: 'user' })
const API = '/kubeorch/v1/api'

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each test reads the fields it checks
type Body = Record<string, any>
async function ui(method: 'GET' | 'POST', path: string, who = user, payload?: object) {
  const res = await app.inject({ method, url: `${API}${path}`, headers: who.headers, ...(payload && { payload }) })
  return { status: res.statusCode, body: (res.body ? res.json() : undefined) as Body }
}

function refused(t: Test, res: { status: number; body: Body }, status: number, text?: RegExp) {
  t.equal(res.status, status)
  t.type(res.body.error, 'string')
  t.equal(res.body.message, res.body.error, 'message beside error')
  if (text) t.match(res.body.message, text)
}

// CONTRACT.md §3: the 12 built-in identifiers the canvas creates nodes for.
const CANVAS = ['deployment', 'service', 'ingress', 'configmap', 'secret', 'persistentvolumeclaim', 'statefulset', 'job', 'cronjob', 'daemonset', 'hpa', 'networkpolicy']
// CONTRACT.md §2.10 (palette colours) and §2.11 (the UI's PluginCategory type).
const PALETTE_CATEGORIES = ['core', 'networking', 'storage', 'configuration', 'security', 'monitoring', 'virtualization', 'database', 'messaging', 'backup', 'cicd', 'ml', 'policy', 'scaling', 'workflow']
const PLUGIN_CATEGORIES = ['virtualization', 'networking', 'storage', 'monitoring', 'security', 'workflow', 'database', 'messaging', 'backup', 'cicd', 'ml', 'policy', 'scaling']
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

/** The palette's search filter, as the UI runs it on every keystroke (CommandPalette: normalizeForSearch). */
function paletteSearch(templates: Body[], query: string): Body[] {
  const norm = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, '')
  const q = norm(query)
  return templates.filter((tpl) => norm(tpl.name).includes(q) || norm(tpl.displayName).includes(q) || norm(tpl.description).includes(q)
    || norm(tpl.category).includes(q) || tpl.tags.some((tag: string) => norm(tag).includes(q)))
}

function paletteEntry(t: Test, tpl: Body) {
  for (const key of ['id', 'name', 'displayName', 'category', 'description', 'icon', 'version', 'usageFrequency']) t.type(tpl[key], 'string', `${tpl.name}.${key}`)
  t.ok(tpl.displayName.length > 0, `${tpl.name}: a title for the card`)
  t.ok(Array.isArray(tpl.tags) && tpl.tags.every((tag: unknown) => typeof tag === 'string'), `${tpl.name}: tags[] of strings`)
  t.type(tpl.isPlugin, 'boolean')
  t.ok(CANVAS.includes(tpl.name) !== tpl.isPlugin, `${tpl.name}: a canvas identifier, or a plugin (and not both)`)
  t.ok(Array.isArray(tpl.parameters), 'parameters[]')
  for (const p of tpl.parameters) {
    t.match(p, { name: String, label: String, description: String, type: String, required: Boolean }, `${tpl.name}.${p.name}`)
    t.ok(Array.isArray(p.options) && p.options.every((o: Body) => typeof o.value === 'string' && typeof o.label === 'string'), 'options as {value, label}')
    t.not(p.default, null, 'no null default (the canvas copies defaults into the node)')
  }
}

t.test('GET /templates: the 12 canvas types, each a full palette entry', async (t) => {
  const res = await ui('GET', '/templates')
  t.equal(res.status, 200)
  const templates = res.body.templates as Body[]
  t.same(templates.map((x) => x.name).sort(), [...CANVAS].sort(), 'exactly the types the canvas can create (no plugin is enabled yet)')
  for (const tpl of templates) {
    paletteEntry(t, tpl)
    t.ok(PALETTE_CATEGORIES.includes(tpl.category), `${tpl.name}: category ${tpl.category} has a colour`)
    t.equal(tpl.pluginId, null)
  }
  const deployment = templates.find((x) => x.name === 'deployment')!
  t.equal(deployment.category, 'core')
  t.equal(deployment.icon, 'Package', 'an icon the palette draws')
  t.equal(templates.find((x) => x.name === 'configmap')!.category, 'configuration')
})

t.test('the palette search runs over every entry without a crash (OBSERVED.md row 8b)', async (t) => {
  const templates = (await ui('GET', '/templates')).body.templates as Body[]
  t.same(paletteSearch(templates, 'zzz-matches-nothing'), [])
  t.same(paletteSearch(templates, 'Volume claim').map((x) => x.name), ['persistentvolumeclaim'])
  t.ok(paletteSearch(templates, 'network').some((x) => x.name === 'networkpolicy'))
})

let widgetId = ''

t.test('GET /plugins: every plugin in the page\'s camelCase shape, none crashing it (OBSERVED.md row 21)', async (t) => {
  widgetId = ((await app.inject({ method: 'POST', url: '/v1/api/plugins', headers: admin.headers, payload: widget({ category: 'ci-cd' }) })).json() as Body).id
  const res = await ui('GET', '/plugins')
  t.equal(res.status, 200)
  const plugins = res.body.plugins as Body[]
  const total = (await app.inject({ url: '/v1/api/plugins', headers: user.headers })).json().total
  t.equal(plugins.length, total, 'all of them, though the UI asks for no page')
  t.ok(plugins.length > 10)
  for (const p of plugins) {
    for (const key of ['id', 'name', 'displayName', 'description', 'icon', 'version', 'crdGroup']) t.type(p[key], 'string', `${p.name}.${key}`)
    t.ok(PLUGIN_CATEGORIES.includes(p.category), `${p.name}: category ${p.category} is one of the UI's`)
    t.ok(Array.isArray(p.crdKinds) && p.crdKinds.length > 0 && p.crdKinds.every((k: unknown) => typeof k === 'string'), `${p.name}: crdKinds[]`)
    t.type(p.enabled, 'boolean')
    t.match(p.createdAt, ISO)
    t.match(p.updatedAt, ISO)
    t.ok(Array.isArray(p.nodeTypes) && p.nodeTypes.length === 1, `${p.name}: nodeTypes[]`)
    for (const n of p.nodeTypes) {
      t.match(n, { name: p.name, displayName: p.displayName, description: String, icon: String, category: p.category })
      t.ok(Array.isArray(n.fields))
      for (const f of n.fields) t.match(f, { id: String, label: String, type: String, required: Boolean })
    }
  }
  const mine = plugins.find((p) => p.id === widgetId)!
  t.match(mine, { name: 'widget', displayName: 'Widget', category: 'cicd', crdGroup: 'widgets.example.com', crdKinds: ['Widget'], enabled: false })
  t.same(mine.nodeTypes[0].fields.find((f: Body) => f.id === 'mode'), { id: 'mode', label: 'Mode', type: 'select', required: false, default: 'safe', options: ['fast', 'safe'] })
  t.notOk(JSON.stringify(plugins).includes('"ci-cd"'), 'no category outside the UI\'s set')
})

t.test('POST /plugins/:id/enable puts its node type in the palette; a node made as the canvas makes it renders', async (t) => {
  const enabled = await ui('POST', `/plugins/${widgetId}/enable`, admin)
  t.equal(enabled.status, 200)
  t.type(enabled.body.message, 'string')
  t.equal(enabled.body.enabled, true)

  const templates = (await ui('GET', '/templates')).body.templates as Body[]
  const tpl = templates.find((x) => x.isPlugin)!
  paletteEntry(t, tpl)
  t.match(tpl, { name: 'widget', displayName: 'Widget', isPlugin: true, pluginId: widgetId, category: 'cicd' })
  t.notOk(tpl.parameters.some((p: Body) => p.name === 'pluginId'), 'the canvas sets pluginId itself')
  t.same(tpl.parameters.find((p: Body) => p.name === 'mode').options, [{ value: 'fast', label: 'fast' }, { value: 'safe', label: 'safe' }])
  t.equal(tpl.parameters.find((p: Body) => p.name === 'token').type, 'password', 'a secret field is masked')

  // WorkflowCanvas: a plugin template becomes a `plugin` node seeded from the template's parameters.
  const data: Body = {
    id: 'node-1', name: `${tpl.name}-1`, namespace: 'default', templateId: tpl.id, pluginId: tpl.pluginId,
    pluginCategory: tpl.category, displayName: tpl.displayName,
    _pluginFields: tpl.parameters.map((p: Body) => ({ id: p.name, label: p.label, type: p.type, required: p.required, default: p.default, options: p.options, placeholder: p.description })),
  }
  for (const p of tpl.parameters) if (p.default !== undefined) data[p.name] = p.default
  t.equal(data.name, 'widget-1', 'the name the canvas gave is kept')
  const wf = (await app.inject({ method: 'POST', url: '/v1/api/workflows', headers: user.headers, payload: { name: 'palette' } })).json() as Body
  const saved = await app.inject({ method: 'POST', url: `/v1/api/workflows/${wf.id}/save`, headers: user.headers, payload: { nodes: [{ id: 'node-1', type: 'plugin', position: { x: 0, y: 0 }, data }], edges: [] } })
  t.equal(saved.statusCode, 200, saved.body)
  const preview = (await app.inject({ url: `/v1/api/workflows/${wf.id}/manifests`, headers: { ...user.headers, accept: 'application/json' } })).json() as Body
  t.same(preview.diagnostics, [])
  t.match(preview.objects, [{ node_id: 'node-1', object: { kind: 'Widget', metadata: { name: 'widget-1', namespace: 'default' }, spec: { size: 3, mode: 'safe' } } }])

  const disabled = await ui('POST', `/plugins/${widgetId}/disable`, admin)
  t.equal(disabled.status, 200)
  t.equal(disabled.body.enabled, false)
  t.notOk(((await ui('GET', '/templates')).body.templates as Body[]).some((x) => x.isPlugin), 'gone from the palette')
})

t.test('a plugin named like a canvas type is still made as a plugin node', async (t) => {
  const job = (await app.inject({ method: 'POST', url: '/v1/api/plugins', headers: admin.headers, payload: widget({ name: 'job', display_name: 'Job widget' }) })).json() as Body
  t.equal((await ui('POST', `/plugins/${job.id}/enable`, admin)).status, 200)
  const templates = (await ui('GET', '/templates')).body.templates as Body[]
  t.equal(templates.filter((x) => x.name === 'job').length, 1, 'the built-in job only')
  t.match(templates.find((x) => x.pluginId === job.id), { name: 'job-plugin', isPlugin: true })
  t.equal((await ui('POST', `/plugins/${job.id}/disable`, admin)).status, 200)
})

t.test('plugin refusals: a plain user may not enable, an unknown id is 404, bad queries are 400', async (t) => {
  refused(t, await ui('POST', `/plugins/${widgetId}/enable`, user), 403)
  refused(t, await ui('POST', '/plugins/no-such-plugin/enable', admin), 404, /plugin not found/)
  refused(t, await ui('GET', '/plugins?limit=0'), 400, /limit/)
  refused(t, await ui('GET', '/plugins?category=gardening'), 400, /category/)
  refused(t, await ui('GET', '/plugins?bogus=1'), 400, /bogus/)
  const anonymous = await app.inject({ url: `${API}/templates` })
  refused(t, { status: anonymous.statusCode, body: anonymous.json() }, 401)
})

t.test('GET /plugins honours the UI\'s category name and offset paging when sent', async (t) => {
  const cicd = (await ui('GET', '/plugins?category=cicd')).body
  t.ok(cicd.plugins.length >= 2, 'the catalogue\'s CI/CD plugins and the widget')
  t.ok(cicd.plugins.every((p: Body) => p.category === 'cicd'))
  const all = (await ui('GET', '/plugins?sort=name&order=asc')).body.plugins as Body[]
  const page = (await ui('GET', '/plugins?sort=name&order=asc&limit=5&offset=5')).body
  t.same(page.plugins.map((p: Body) => p.id), all.slice(5, 10).map((p) => p.id), 'limit/offset is one page')
})

t.test('GET /plugins gathers more than one page when there are over 100 plugins', async (t) => {
  const before = (await ui('GET', '/plugins')).body.plugins.length
  for (let i = 0; i < 101 - before + 5; i++) await app.services.plugins.register(widget({ name: `widget-${i}`, display_name: `Widget ${i}` }) as never)
  const res = await ui('GET', '/plugins')
  const ids = (res.body.plugins as Body[]).map((p) => p.id)
  t.equal(ids.length, before + 101 - before + 5)
  t.equal(new Set(ids).size, ids.length, 'no plugin twice')
  t.equal(res.body.total, ids.length)
})
