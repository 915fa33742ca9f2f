// Registration refuses every definition that could not work, one rule at a time, with a 400 that says which
// rule, and writes nothing. The same checks guard PUT (proved in routes.test.ts).
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'
import { widget, withField, WIDGET_TEMPLATE } from './fixtures.ts'

const { app } = await startTestApp(t)
const admin = await registerUser(app, { role: 'admin' })

const register = (body: unknown) => app.inject({ method: 'POST', url: '/v1/api/plugins', headers: admin.headers, payload: body as object })
const countWidgets = async () => (await app.inject({ url: '/v1/api/plugins?search=widget', headers: admin.headers })).json().total as number

const crd = (patch: Record<string, string>) => widget({ crd: { ...widget().crd, ...patch } })

const refusals: Array<[string, unknown, RegExp]> = [
  ['a category outside the set', widget({ category: 'gaming' }), /category/],
  ['a field type outside the set', withField(0, { name: 'size', label: 'Size', type: 'date', required: true }), /config_fields\/0\/type/],
  ['options on a field that is not a select', withField(5, { name: 'owner', label: 'Owner', type: 'string', options: ['a'], required: false }), /options are only for select fields/],
  ['a select without options', withField(1, { name: 'mode', label: 'Mode', type: 'select', required: false }), /select field needs options/],
  ['a select with an empty options list', withField(1, { name: 'mode', label: 'Mode', type: 'select', options: [], required: false }), /options/],
  ['a select with duplicate options', withField(1, { name: 'mode', label: 'Mode', type: 'select', options: ['fast', 'fast'], required: false }), /options must be unique/],
  ['a select with non-string options', withField(1, { name: 'mode', label: 'Mode', type: 'select', options: ['fast', 2], required: false }), /options/],
  ['a select default outside the options', withField(1, { name: 'mode', label: 'Mode', type: 'select', options: ['fast', 'safe'], default: 'slow', required: false }), /"slow" is not one of the options/],
  ['a select default that is a number (options are strings)', withField(1, { name: 'mode', label: 'Mode', type: 'select', options: ['1', '2'], default: 1, required: false }), /default must be a string for a select field/],
  ['a number default that is a string', withField(0, { name: 'size', label: 'Size', type: 'number', default: '3', required: true }), /default must be a number for a number field/],
  ['a boolean default that is a string', withField(2, { name: 'verbose', label: 'Verbose', type: 'boolean', default: 'false', required: false }), /default must be a boolean for a boolean field/],
  ['a string default that is a number', withField(5, { name: 'owner', label: 'Owner', type: 'string', default: 5, required: false }), /default must be a string for a string field/],
  ['a textarea default that is a boolean', withField(3, { name: 'note', label: 'Note', type: 'textarea', default: true, required: false }), /default must be a string for a textarea field/],
  ['a secret field with a default', withField(4, { name: 'token', label: 'Token', type: 'secret', default: 'hunter2', required: false }), /secret field has no default/],
  ['a field name that is not a template identifier', withField(5, { name: 'owner-name', label: 'Owner', type: 'string', required: false }), /config_fields\/5\/name/],
  ['a field name starting with a digit', withField(5, { name: '1owner', label: 'Owner', type: 'string', required: false }), /config_fields\/5\/name/],
  ['a field named name', withField(5, { name: 'name', label: 'Name', type: 'string', required: false }), /reserved/],
  ['a field named namespace', withField(5, { name: 'namespace', label: 'Namespace', type: 'string', required: false }), /reserved/],
  ['two fields with the same name', withField(5, { name: 'size', label: 'Size again', type: 'number', required: false }), /same name/],
  ['an unknown key in a field', withField(5, { name: 'owner', label: 'Owner', type: 'string', required: false, colour: 'red' }), /additional properties|colour/],
  ['a crd group that is not a DNS subdomain', crd({ group: 'Widgets.Example.com' }), /crd\/group/],
  ['a crd group without a dot', crd({ group: 'widgets' }), /crd\/group/],
  ['a crd version that is not v1/v1beta1-style', crd({ version: '1.0' }), /crd\/version/],
  ['a crd version with an unknown stage', crd({ version: 'v1gamma1' }), /crd\/version/],
  ['a crd kind that is not PascalCase', crd({ kind: 'widget' }), /crd\/kind/],
  ['a crd plural that is not lower-case', crd({ plural: 'Widgets' }), /crd\/plural/],
  ['a plugin name that is not a DNS label', widget({ name: 'Widget Plugin' }), /body\/name/],
  ['a missing template', (({ template: _t, ...rest }) => rest)(widget()), /template/],
  ['a template that does not parse', widget({ template: WIDGET_TEMPLATE + '{{ if .size }}\n' }), /template does not parse: .*line \d+, column \d+/],
  ['a template with an unknown function', widget({ template: WIDGET_TEMPLATE + '{{ exec "ls" }}\n' }), /template does not parse: .*line \d+, column \d+/],
  ['a template reading a field that is not declared', widget({ template: WIDGET_TEMPLATE + '  colour: {{ .colour }}\n' }), /reads \.colour, which is not a config field/],
  ['a template rendering another kind', widget({ template: WIDGET_TEMPLATE.replace('kind: Widget', 'kind: Gadget') }), /every document must be widgets\.example\.com\/v1beta1 Widget/],
  ['a template rendering another apiVersion', widget({ template: WIDGET_TEMPLATE.replace('v1beta1', 'v1') }), /every document must be widgets\.example\.com\/v1beta1 Widget/],
  ['a template with a second document of another kind', widget({ template: WIDGET_TEMPLATE + '---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ .name }}\n' }), /document 2 is v1 Secret/],
  ['a template rendering no document', widget({ template: '{{/* nothing */}}\n' }), /renders no document/],
  ['a template whose output is not a manifest (no metadata.name)', widget({ template: 'apiVersion: widgets.example.com/v1beta1\nkind: Widget\nspec:\n  size: {{ .size }}\n' }), /does not render/],
  ['a template that fails when an optional field is left empty', widget({ template: WIDGET_TEMPLATE + '  ownerRef: {{ required "owner is needed" .owner }}\n' }), /with only required fields and defaults\) does not render/],
]

t.test('registration refuses each broken rule with a 400 naming it, and stores nothing', async (t) => {
  for (const [rule, body, message] of refusals) {
    const res = await register(body)
    t.equal(res.statusCode, 400, `${rule}: 400`)
    t.match(res.json(), { error: message }, `${rule}: ${res.json().error}`)
    t.same(Object.keys(res.json()), ['error'], `${rule}: the body is {error} only`)
  }
  t.equal(await countWidgets(), 0, 'no refused definition was stored')
})

t.test('the untouched definition is accepted, so each refusal above is down to its one change', async (t) => {
  const res = await register(widget())
  t.equal(res.statusCode, 201, res.body)
  t.match(res.json(), { name: 'widget', enabled: false, version: '1.0.0' })
  t.equal(await countWidgets(), 1)
})

t.test('numeric-looking select options stay strings and a matching string default is accepted', async (t) => {
  const res = await register({ ...withField(1, { name: 'mode', label: 'Mode', type: 'select', options: ['1', '2'], default: '2', required: false }), name: 'widget-numeric' })
  t.equal(res.statusCode, 201, res.body)
  t.same(res.json().config_fields[1].options, ['1', '2'])
  t.equal(res.json().config_fields[1].default, '2')
})

t.test('the complete example definition in docs/plugins.md registers as documented', async (t) => {
  const guide = await readFile(new URL('../../docs/plugins.md', import.meta.url), 'utf8')
  const example = /<<'JSON'[^\n]*\n([\s\S]*?)\nJSON\n/.exec(guide)
  if (!t.ok(example, 'the plugins guide has an example definition')) return
  const res = await register(JSON.parse(example![1]))
  t.equal(res.statusCode, 201, res.body)
  t.match(res.json(), { name: 'redis-failover', version: '1.0.0', enabled: false, builtin: false })
})
