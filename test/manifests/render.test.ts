// The whole-graph properties: a canvas using every node type and every edge renders with no error, in apply
// order, with a Namespace first where one is needed; run-time secrets and variables appear only when the
// caller asks for them; the YAML form parses back to the same objects.
import t from 'tap'
import { parseAllDocuments } from 'yaml'
import { renderWorkflow, toYaml, WIRING_RULES, APPLY_ORDER } from '../../src/manifests/index.ts'
import { wire } from '../../src/manifests/wiring.ts'
import type { NodeView } from '../../src/manifests/build-context.ts'
import type { NodeType } from '../../schemas/nodes.ts'
import { ctx, fullCanvas, node, edge } from './canvas.ts'
import { validateObject } from './models.ts'

t.test('a graph using every node type and every wiring rule renders with no error and no warning', async (t) => {
  const canvas = fullCanvas()
  const views = new Map<string, NodeView>(canvas.nodes.map((n, order) => [n.id, { id: n.id, type: n.type as NodeType, data: n.data!, name: String(n.data!.name), namespace: 'shop', order }]))
  const used = new Set([...wire(views, canvas.edges).links.values()].flat().map((l) => l.rule))
  t.same([...used].sort(), WIRING_RULES.map((r) => r.name).sort(), 'the canvas exercises every rule')
  const result = await renderWorkflow(canvas, ctx())
  t.same(result.diagnostics, [])
  t.equal(result.objects.length, 17, '16 nodes and their namespace')
  for (const { object } of result.objects) t.doesNotThrow(() => validateObject(object), `${object.kind} ${object.metadata.name} is valid`)
})

t.test('objects come in apply order: namespace, identity, config, storage, workloads, services, ingresses, autoscalers, policies', async (t) => {
  const canvas = fullCanvas()
  canvas.nodes.reverse()
  const { objects } = await renderWorkflow(canvas, ctx())
  const rank = (kind: string) => APPLY_ORDER.findIndex((kinds) => (kinds as readonly string[]).includes(kind))
  const ranks = objects.map((o) => rank(o.object.kind))
  t.notOk(ranks.includes(-1), 'every kind has a rank')
  t.same(ranks, [...ranks].sort((a, b) => a - b), 'ranks never go down')
  t.equal(objects[0].object.kind, 'Namespace')
  t.equal(objects[0].object.metadata.name, 'shop')
})

t.test('a Namespace object for each namespace other than the cluster\'s own, and none for default or kube-*', async (t) => {
  const { objects } = await renderWorkflow({ nodes: [
    node('a', 'configmap', { name: 'a', namespace: 'team-a' }), node('b', 'configmap', { name: 'b', namespace: 'team-b' }),
    node('c', 'configmap', { name: 'c', namespace: 'team-a' }), node('d', 'configmap', { name: 'd' }), node('e', 'configmap', { name: 'e', namespace: 'kube-system' }),
  ], edges: [] }, ctx())
  const namespaces = objects.filter((o) => o.object.kind === 'Namespace')
  t.same(namespaces.map((o) => [o.object.metadata.name, o.node_id]), [['team-a', 'a'], ['team-b', 'b']])
  t.same(namespaces.map((o) => o.object.metadata.namespace), [undefined, undefined], 'cluster-scoped')
})

t.test('a preview shows secret keys with empty values, even when the run\'s values are at hand', async (t) => {
  const canvas = { nodes: [node('s', 'secret', { name: 's', keys: ['PASSWORD'] })], edges: [] }
  const r = await renderWorkflow(canvas, ctx({ secrets: { s: { PASSWORD: 'hunter2-very-secret', TOKEN: 'tok-9999' } } }))
  const secret = r.objects[0].object
  t.same(secret.data, { PASSWORD: '', TOKEN: '' })
  const text = JSON.stringify(r) + toYaml(r)
  t.notMatch(text, /hunter2|tok-9999|aHVudGVy|dG9rLTk5/, 'no value, plain or base64')
})

t.test('a run (revealSecrets) sends the values, base64-encoded, and a declared key without a value is an error', async (t) => {
  const canvas = { nodes: [node('s', 'secret', { name: 's', keys: ['PASSWORD'] })], edges: [] }
  let r = await renderWorkflow(canvas, ctx({ revealSecrets: true, secrets: { s: { PASSWORD: 'hunter2' } } }))
  t.same(r.objects[0].object.data, { PASSWORD: Buffer.from('hunter2').toString('base64') })
  r = await renderWorkflow(canvas, ctx({ revealSecrets: true }))
  t.same(r.objects, [])
  t.match(r.diagnostics, [{ node_id: 's', severity: 'error', message: /^keys: no value supplied for "PASSWORD"/ }])
})

t.test('secret keys kept as the KubeOrch canvas keeps them ({id, name} rows) name the same keys as plain strings', async (t) => {
  const canvas = { nodes: [node('s', 'secret', { name: 's', keys: [{ id: 'k1', name: 'PASSWORD' }, 'TOKEN'] })], edges: [] }
  const r = await renderWorkflow(canvas, ctx({ revealSecrets: true, secrets: { s: { PASSWORD: 'hunter2', TOKEN: 't' } } }))
  t.same(r.diagnostics, [])
  t.same(r.objects[0].object.data, { PASSWORD: Buffer.from('hunter2').toString('base64'), TOKEN: Buffer.from('t').toString('base64') })
  const missing = await renderWorkflow(canvas, ctx({ revealSecrets: true, secrets: { s: { TOKEN: 't' } } }))
  t.match(missing.diagnostics, [{ node_id: 's', severity: 'error', message: /^keys: no value supplied for "PASSWORD"/ }], 'a row without a value is refused like a string key')
})

t.test('run-time envVars add container env, override the workflow\'s, and are masked in a preview', async (t) => {
  const canvas = { nodes: [node('w', 'deployment', { name: 'w', image: 'nginx', env: [{ name: 'MODE', value: 'dev' }, { name: 'KEEP', value: 'k' }] })], edges: [] }
  const envOf = (r: Awaited<ReturnType<typeof renderWorkflow>>) => (r.objects[0].object.spec as any).template.spec.containers[0].env
  const run = await renderWorkflow(canvas, ctx({ revealSecrets: true, envVars: { w: { MODE: 'prod', EXTRA: 'x' } } }))
  t.same(envOf(run), [{ name: 'MODE', value: 'prod' }, { name: 'KEEP', value: 'k' }, { name: 'EXTRA', value: 'x' }])
  const preview = await renderWorkflow(canvas, ctx({ envVars: { w: { MODE: 'prod', EXTRA: 'x' } } }))
  t.same(envOf(preview), [{ name: 'MODE', value: '' }, { name: 'KEEP', value: 'k' }, { name: 'EXTRA', value: '' }])
})

t.test('two nodes rendering the same object: the second is an error and renders nothing', async (t) => {
  const r = await renderWorkflow({ nodes: [node('a', 'configmap', { name: 'same' }), node('b', 'configmap', { name: 'same' }), node('c', 'configmap', { name: 'same', namespace: 'other' })], edges: [] }, ctx())
  t.same(r.objects.filter((o) => o.object.kind === 'ConfigMap').map((o) => o.node_id), ['a', 'c'])
  t.match(r.diagnostics, [{ node_id: 'b', severity: 'error', message: /node "a" already renders ConfigMap same/ }])
})

t.test('an edge to a node with errors is not wired, and says why', async (t) => {
  const r = await renderWorkflow({ nodes: [node('w', 'deployment', { name: 'w', image: 'nginx' }), node('cm', 'configmap', {})], edges: [edge('cm', 'w')] }, ctx())
  t.match(r.diagnostics, [{ node_id: 'cm', severity: 'error', message: 'name: required' }, { node_id: 'cm', severity: 'warning', message: /not wired because this node has errors/ }])
  t.equal(r.objects.length, 1)
})

t.test('the YAML form: diagnostics as leading comments, then the objects in order, parsing back to the same', async (t) => {
  const canvas = fullCanvas()
  canvas.edges.push({ id: 'odd\n---\nkind: Secret', source: 'n-configmap', target: 'n-service' })
  const r = await renderWorkflow(canvas, ctx())
  const text = toYaml(r)
  t.ok(text.startsWith('# warning in node "n-configmap": edge "odd\\n---\\nkind: Secret"'), 'a comment, hostile edge id escaped')
  const docs = parseAllDocuments(text)
  t.same(docs.map((d) => d.errors), docs.map(() => []), 'no YAML errors')
  t.same(docs.map((d) => d.toJS()), r.objects.map((o) => o.object))
  const v11 = parseAllDocuments(text, { version: '1.1' }).map((d) => d.toJS())
  t.same(v11, r.objects.map((o) => o.object), 'YAML 1.1 readers (kubectl) read the same values')
})

t.test('values YAML 1.1 would read as other types stay strings', async (t) => {
  const r = await renderWorkflow({ nodes: [node('cm', 'configmap', { name: 'cm', data: { a: 'yes', b: 'off', c: '0755', d: '1e3', e: '~', f: 'null' } })], edges: [] }, ctx())
  const back = parseAllDocuments(toYaml(r), { version: '1.1' })[0].toJS()
  t.same(back.data, { a: 'yes', b: 'off', c: '0755', d: '1e3', e: '~', f: 'null' })
})

t.test('a dependency edge between workloads orders the apply and marks the dependents\' wave, whatever the canvas order', async (t) => {
  const { objects, diagnostics } = await renderWorkflow({ nodes: [
    node('web', 'deployment', { name: 'web', image: 'nginx:1.27' }), node('api', 'deployment', { name: 'api', image: 'api:1' }),
    node('db', 'statefulset', { name: 'db', image: 'postgres:16' }),
  ], edges: [edge('db', 'api'), edge('api', 'web')] }, ctx())
  t.same(diagnostics, [])
  t.same(objects.map((o) => [o.object.metadata.name, o.wave]), [['db', undefined], ['api', 1], ['web', 2]])
})

t.test('a cycle of dependency edges is a warning and falls back to the canvas order', async (t) => {
  const { objects, diagnostics } = await renderWorkflow({ nodes: [
    node('a', 'deployment', { name: 'a', image: 'a:1' }), node('b', 'deployment', { name: 'b', image: 'b:1' }),
  ], edges: [edge('a', 'b'), edge('b', 'a')] }, ctx())
  t.equal(objects.length, 2)
  t.match(diagnostics, [{ severity: 'warning', message: /form a cycle/ }])
})
