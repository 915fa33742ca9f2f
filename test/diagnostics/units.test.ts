// The pure parts of diagnostics: image references, DNS labels, applying a graph edit, the overall status.
import t from 'tap'
import { applyChanges, parseImage } from '../../src/services/diagnostics/fixes.ts'
import { toDnsLabel, mostCommon } from '../../src/services/diagnostics/graph-view.ts'
import { overallStatus } from '../../src/services/diagnostics/types.ts'

t.test('image references: tag, digest, registry port', async (t) => {
  t.same(parseImage('nginx'), { repository: 'nginx', tag: null, digest: null })
  t.same(parseImage('nginx:1.27'), { repository: 'nginx', tag: '1.27', digest: null })
  t.same(parseImage('registry.local:5000/team/app'), { repository: 'registry.local:5000/team/app', tag: null, digest: null }, 'a port is not a tag')
  t.same(parseImage('registry.local:5000/team/app:latest'), { repository: 'registry.local:5000/team/app', tag: 'latest', digest: null })
  const d = `sha256:${'a'.repeat(64)}`
  t.same(parseImage(`ghcr.io/acme/api:1.2@${d}`), { repository: 'ghcr.io/acme/api', tag: '1.2', digest: d })
  t.same(parseImage(`nginx@${d}`), { repository: 'nginx', tag: null, digest: d })
})

t.test('DNS labels from any text', async (t) => {
  t.equal(toDnsLabel('My_API'), 'my-api')
  t.equal(toDnsLabel('--Web  Server--'), 'web-server')
  t.equal(toDnsLabel('___'), null)
  t.equal(toDnsLabel('x'.repeat(62) + '-yz'), 'x'.repeat(62), 'cut to 63 without a trailing dash')
  t.match(toDnsLabel('Ünïcode.name'), /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/)
})

t.test('applying changes: nested paths, array items, removal, input untouched', async (t) => {
  const nodes = [{ id: 'a', type: 'service', data: { name: 'a', ports: [{ port: 80, targetPort: 'http' }], selector: { app: 'x' } } }, { id: 'b', type: 'deployment', data: { name: 'b' } }]
  const copy = structuredClone(nodes)
  const out = applyChanges(nodes, [
    { node_id: 'a', path: 'data.ports[0].targetPort', old: 'http', new: 8080 },
    { node_id: 'a', path: 'data.selector', old: { app: 'x' }, new: null },
    { node_id: 'b', path: 'data.resources.requests.cpu', old: null, new: '100m' },
  ])
  t.same(out, [{ id: 'a', type: 'service', data: { name: 'a', ports: [{ port: 80, targetPort: 8080 }] } }, { id: 'b', type: 'deployment', data: { name: 'b', resources: { requests: { cpu: '100m' } } } }])
  t.same(nodes, copy, 'the input graph is not modified')
  t.throws(() => applyChanges(nodes, [{ node_id: 'zz', path: 'data.name', old: null, new: 'x' }]), /missing node/)
  t.throws(() => applyChanges(nodes, [{ node_id: 'a', path: 'data..name', old: null, new: 'x' }]), /bad change path/)
})

t.test('overall status and the most common value', async (t) => {
  t.equal(overallStatus([]), 'healthy')
  t.equal(overallStatus([{ name: 'a', status: 'pass', message: '' }, { name: 'b', status: 'warning', message: '' }]), 'warning')
  t.equal(overallStatus([{ name: 'a', status: 'error', message: '' }, { name: 'b', status: 'warning', message: '' }]), 'error')
  t.equal(mostCommon(['a', 'b', 'b']), 'b')
  t.equal(mostCommon(['a', 'b']), 'a', 'the first seen wins a tie')
  t.equal(mostCommon([]), undefined)
})
