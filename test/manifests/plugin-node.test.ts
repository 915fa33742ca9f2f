// Plugin nodes render through the template engine with the node's config values (defaults filling the
// gaps), secret fields only from the run, documents confined to the plugin's API group, and an unknown or
// disabled plugin as a per-node error.
import t from 'tap'
import { parseAllDocuments } from 'yaml'
import { Certificate } from '@kubernetes-models/cert-manager/cert-manager.io/v1/Certificate'
import { renderWorkflow, toYaml, MANAGED_BY, MANAGED_BY_LABEL, NODE_ID_ANNOTATION, WORKFLOW_ID_ANNOTATION } from '../../src/manifests/index.ts'
import type { PluginForRender } from '../../src/manifests/types.ts'
import { security } from '../../src/services/plugin-catalogue/security.ts'
import { ctx, node, WORKFLOW_ID } from './canvas.ts'

const certManager: PluginForRender = { id: 'p1', enabled: true, ...security[0] } as PluginForRender
const withSecret: PluginForRender = {
  id: 'p2', name: 'db-user', enabled: true,
  crd: { group: 'db.example.com', version: 'v1', kind: 'User', plural: 'users' },
  config_fields: [
    { name: 'username', type: 'string', required: true },
    { name: 'password', type: 'secret', required: true },
    { name: 'replicas', type: 'number', required: false, default: 1 },
    { name: 'tier', type: 'select', required: false, options: ['small', 'large'], default: 'small' },
  ],
  template: 'apiVersion: db.example.com/v1\nkind: User\nmetadata:\n  name: {{ .name }}\n  namespace: {{ .namespace }}\nspec:\n  username: {{ .username }}\n  password: {{ .password }}\n  replicas: {{ .replicas }}\n  tier: {{ .tier }}\n',
}
const plugins = (...list: PluginForRender[]) => (id: string) => list.find((p) => p.id === id || p.name === id) ?? null

t.test('a plugin node renders its custom resource with defaults, our labels and annotations, valid for the operator', async (t) => {
  const r = await renderWorkflow({ nodes: [node('c', 'plugin', { name: 'www', namespace: 'web', pluginId: 'p1', dnsName: 'www.example.com', secretName: 'www-tls', labels: { team: 'web' } })], edges: [] }, ctx({ plugins: plugins(certManager) }))
  t.same(r.diagnostics, [])
  const cert = r.objects.find((o) => o.object.kind === 'Certificate')!.object
  t.match(cert, { apiVersion: 'cert-manager.io/v1', metadata: { name: 'www', namespace: 'web' }, spec: { dnsNames: ['www.example.com'], secretName: 'www-tls', issuerRef: { name: 'letsencrypt', kind: 'ClusterIssuer' }, privateKey: { algorithm: 'ECDSA' } } })
  t.equal(cert.metadata.labels?.[MANAGED_BY_LABEL], MANAGED_BY)
  t.equal(cert.metadata.labels?.team, 'web')
  t.equal(cert.metadata.annotations?.[WORKFLOW_ID_ANNOTATION], WORKFLOW_ID)
  t.equal(cert.metadata.annotations?.[NODE_ID_ANNOTATION], 'c')
  t.doesNotThrow(() => new Certificate(structuredClone(cert) as never).validate(), 'cert-manager\'s schema accepts it')
  t.equal(r.objects[r.objects.length - 1].object.kind, 'Certificate', 'custom resources go last, after the Namespace')
})

t.test('custom resources are applied after every built-in object', async (t) => {
  const r = await renderWorkflow({ nodes: [
    node('c', 'plugin', { name: 'www', pluginId: 'p1', dnsName: 'www.example.com', secretName: 'www-tls' }),
    node('np', 'networkpolicy', { name: 'np', podSelector: { a: 'b' } }), node('cm', 'configmap', { name: 'cm' }),
  ], edges: [] }, ctx({ plugins: plugins(certManager) }))
  t.same(r.objects.map((o) => o.object.kind), ['ConfigMap', 'NetworkPolicy', 'Certificate'])
})

t.test('an unknown or disabled plugin is a per-node error', async (t) => {
  let r = await renderWorkflow({ nodes: [node('x', 'plugin', { name: 'x', pluginId: 'nope' })], edges: [] }, ctx({ plugins: plugins(certManager) }))
  t.same(r.objects, [])
  t.same(r.diagnostics, [{ node_id: 'x', severity: 'error', message: 'pluginId: no plugin "nope"' }])
  r = await renderWorkflow({ nodes: [node('x', 'plugin', { name: 'x', pluginId: 'p1', dnsName: 'a.b', secretName: 's' })], edges: [] }, ctx({ plugins: plugins({ ...certManager, enabled: false }) }))
  t.same(r.objects, [])
  t.match(r.diagnostics, [{ node_id: 'x', severity: 'error', message: /disabled/ }])
})

t.test('a missing required field or a value of the wrong type is an error naming the field', async (t) => {
  const r = await renderWorkflow({ nodes: [node('x', 'plugin', { name: 'x', pluginId: 'p2', replicas: 'many', tier: 'huge' })], edges: [] }, ctx({ plugins: plugins(withSecret) }))
  t.same(r.objects, [])
  t.same(r.diagnostics.map((d) => d.message).sort(), ['replicas: must be a number', 'tier: must be one of "small", "large"', 'username: required'])
})

t.test('secret fields: masked in a preview, the run\'s value when revealed, never the workflow\'s', async (t) => {
  const nodes = [node('x', 'plugin', { name: 'x', pluginId: 'p2', username: 'app', password: 'from-the-workflow' })]
  const preview = await renderWorkflow({ nodes, edges: [] }, ctx({ plugins: plugins(withSecret), secrets: { x: { password: 'run-secret-42' } } }))
  const text = toYaml(preview) + JSON.stringify(preview)
  t.notMatch(text, /run-secret-42|from-the-workflow/)
  t.equal((preview.objects[0].object.spec as any).password, '********')
  t.match(preview.diagnostics, [{ severity: 'warning', message: /password: a secret field's value comes from the run/ }])
  const run = await renderWorkflow({ nodes, edges: [] }, ctx({ plugins: plugins(withSecret), secrets: { x: { password: 'run-secret-42' } }, revealSecrets: true }))
  t.equal((run.objects[0].object.spec as any).password, 'run-secret-42')
  const missing = await renderWorkflow({ nodes, edges: [] }, ctx({ plugins: plugins(withSecret), revealSecrets: true }))
  t.same(missing.objects, [])
  t.ok(missing.diagnostics.some((d) => d.severity === 'error' && /^password: no value supplied/.test(d.message)))
})

t.test('a template producing an object outside the plugin\'s API group renders nothing for the node', async (t) => {
  const sneaky = { ...withSecret, id: 'p3', template: `${withSecret.template}---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: stolen\n` }
  const r = await renderWorkflow({ nodes: [node('x', 'plugin', { name: 'x', pluginId: 'p3', username: 'u' })], edges: [] }, ctx({ plugins: plugins(sneaky) }))
  t.same(r.objects, [])
  t.match(r.diagnostics, [{ severity: 'error', message: /outside the plugin's API group db\.example\.com/ }])
})

t.test('hostile config values stay single strings', async (t) => {
  const hostile = 'u\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: stolen\n{{ .password }}'
  const r = await renderWorkflow({ nodes: [node('x', 'plugin', { name: 'x', pluginId: 'p2', username: hostile })], edges: [] }, ctx({ plugins: plugins(withSecret) }))
  t.same(r.diagnostics.filter((d) => d.severity === 'error'), [])
  t.equal(r.objects.length, 1)
  t.equal((r.objects[0].object.spec as any).username, hostile)
  t.same(parseAllDocuments(toYaml(r)).map((d) => d.toJS()), r.objects.map((o) => o.object))
})

t.test('a plugin node wired to anything gets a warning: plugins have no wiring', async (t) => {
  const r = await renderWorkflow({ nodes: [node('x', 'plugin', { name: 'x', pluginId: 'p1', dnsName: 'a.example.com', secretName: 's' }), node('w', 'deployment', { name: 'w', image: 'nginx' })], edges: [{ id: 'e', source: 'x', target: 'w' }] }, ctx({ plugins: plugins(certManager) }))
  t.same(r.diagnostics, [{ node_id: 'x', severity: 'warning', message: 'edge "e": a plugin cannot be wired to a deployment; the edge has no effect' }])
})
