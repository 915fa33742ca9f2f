import t from 'tap'
import { builtInTemplates, validateNode, NODE_TYPE_INFO, isNodeType } from '../../src/services/node-catalogue.ts'
import { NODE_TYPES } from '../../schemas/nodes.ts'

t.test('the 17 node types of API.md §4 each have a data schema and palette metadata', async (t) => {
  t.same([...NODE_TYPES].sort(), ['configmap', 'cronjob', 'daemonset', 'deployment', 'hpa', 'ingress', 'job', 'networkpolicy', 'persistentvolumeclaim',
    'plugin', 'pod', 'poddisruptionbudget', 'replicaset', 'secret', 'service', 'serviceaccount', 'statefulset'])
  for (const type of NODE_TYPES) t.ok(NODE_TYPE_INFO[type].display_name, type)
})

t.test('the palette lists every built-in type with parameters read off its schema', async (t) => {
  const templates = builtInTemplates()
  t.equal(templates.length, 16, 'every type but the generic plugin node, which enabled plugins stand in for')
  const deployment = templates.find((x) => x.name === 'deployment')!
  t.match(deployment, { id: 'builtin:deployment', category: 'workloads', is_plugin: false, plugin_id: null })
  const image = deployment.parameters.find((p) => p.name === 'image')!
  t.match(image, { label: 'Image', type: 'string', required: true })
  t.match(deployment.parameters.find((p) => p.name === 'replicas'), { type: 'number', default: 1, required: false })
  const service = templates.find((x) => x.name === 'service')!
  t.same(service.parameters.find((p) => p.name === 'serviceType')!.options, ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'])
  t.match(service.parameters.find((p) => p.name === 'selector'), { type: 'map' })
})

t.test('validateNode passes unknown keys and reports known keys with a wrong type, by path', async (t) => {
  t.same(validateNode({ type: 'deployment', data: { name: 'web', image: 'nginx:1.27', replicas: 2, _status: { state: 'x' }, canvasColour: 'red' } }), [])
  const issues = validateNode({ type: 'deployment', data: { name: 'web', image: 42, replicas: 'two' } })
  t.same(issues.map((i) => i.path).sort(), ['/data/image', '/data/replicas'])
  t.same(validateNode({ type: 'deployment', data: { name: 'web' } }).map((i) => i.path), ['/data'], 'a missing required key is reported')
  t.match(validateNode({ type: 'service', data: { name: 'Not_DNS' } }), [{ path: '/data/name', message: /pattern/ }])
  t.same(validateNode({ type: 'teleporter', data: {} }), [{ path: '/type', message: 'unknown node type "teleporter"' }])
  t.notOk(isNodeType('toString'), 'prototype keys are not node types')
})
