import t from 'tap'
import { assertValidGraph } from '../../src/services/workflow-graph.ts'
import { diffGraphs } from '../../src/services/graph-diff.ts'
import { BadRequest } from '../../src/errors.ts'

const n = (id: string, type = 'deployment', data: Record<string, unknown> = { name: id, image: 'nginx' }) => ({ id, type, position: { x: 0, y: 0 }, data })
const e = (id: string, source: string, target: string) => ({ id, source, target, sourceHandle: null, targetHandle: null })

t.test('a well-formed graph passes', async (t) => {
  t.doesNotThrow(() => assertValidGraph([n('a'), n('b', 'service', { name: 'b' })], [e('e1', 'a', 'b')]))
  t.doesNotThrow(() => assertValidGraph([], []))
})

t.test('each structural fault is a BadRequest naming the node or edge', async (t) => {
  const cases: Array<[Parameters<typeof assertValidGraph>, RegExp]> = [
    [[[n('a'), n('a')], []], /nodes\/1: duplicate node id "a"/],
    [[[n('a', 'teleporter')], []], /nodes\/0: node "a" has unknown type "teleporter"/],
    [[[n('a')], [e('e1', 'a', 'ghost')]], /edges\/0: edge "e1" ends at missing node "ghost"/],
    [[[n('a')], [e('e1', 'ghost', 'a')]], /edges\/0: edge "e1" starts at missing node "ghost"/],
    [[[n('a'), n('b')], [e('e1', 'a', 'b'), e('e1', 'b', 'a')]], /edges\/1: duplicate edge id "e1"/],
    [[Array.from({ length: 2001 }, (_, i) => n(`n${i}`)), []], /at most 2000 nodes/],
  ]
  for (const [args, message] of cases) {
    const err = t.throws(() => assertValidGraph(...args)) as Error
    t.type(err, BadRequest)
    t.match(err.message, message)
  }
})

t.test('diff reports exactly the changed fields, and added/removed nodes and edges', async (t) => {
  const from = { nodes: [n('a'), n('b', 'service', { name: 'b', port: 80 }), n('gone')], edges: [e('e1', 'a', 'b'), e('e2', 'a', 'gone')] }
  const to = {
    nodes: [{ ...n('a'), data: { name: 'a', image: 'nginx:1.27', replicas: 3 } }, n('b', 'service', { name: 'b', port: 80 }), n('new')],
    edges: [e('e1', 'a', 'b'), { ...e('e3', 'a', 'new'), label: 'x' }],
  }
  const diff = diffGraphs(from, to)
  t.same(diff.added_nodes.map((x) => x.id), ['new'])
  t.same(diff.removed_nodes.map((x) => x.id), ['gone'])
  t.same(diff.modified_nodes, [{ node_id: 'a', type: 'deployment', changes: [
    { path: '/data/image', old: 'nginx', new: 'nginx:1.27' },
    { path: '/data/replicas', new: 3 },
  ] }])
  t.same(diff.added_edges.map((x) => x.id), ['e3'])
  t.same(diff.removed_edges.map((x) => x.id), ['e2'])
})

t.test('identical graphs have no differences; keys with / and ~ are escaped in paths', async (t) => {
  const g = { nodes: [n('a')], edges: [] }
  t.same(diffGraphs(g, structuredClone(g)), { added_nodes: [], removed_nodes: [], modified_nodes: [], added_edges: [], removed_edges: [], modified_edges: [] })
  const d = diffGraphs({ nodes: [n('a', 'configmap', { name: 'a', data: { 'a/b~c': '1' } })], edges: [] }, { nodes: [n('a', 'configmap', { name: 'a', data: { 'a/b~c': '2' } })], edges: [] })
  t.same(d.modified_nodes[0].changes, [{ path: '/data/data/a~1b~0c', old: '1', new: '2' }])
})
