// Each fix type: the template proposes a graph edit, applying it saves exactly that edit (and nothing is
// sent to the cluster), the preview is what the saved graph now renders, the check that named the fix
// passes afterwards, and the same fix no longer applies (409).
import t, { type Test } from 'tap'
import { parseAllDocuments } from 'yaml'
import { waitFor } from '../kube-sim/test-helpers.ts'
import { edge, node, only, simFixture } from './fixture.ts'

const f = await simFixture(t)
const requests = { requests: { cpu: '100m', memory: '64Mi' } }

type Change = { node_id: string; path: string; old: unknown; new: unknown }

/** Template, then apply; checks the round trip and returns the graph before and after. */
async function roundTrip(t: Test, id: string, nodeId: string, type: string, expected: Change[], options: { reads?: boolean } = {}) {
  const before = await f.graphOf(id)
  const tmpl = await f.call(f.owner, 'GET', `/v1/api/workflows/${id}/nodes/${nodeId}/fix-template/${type}`)
  t.equal(tmpl.status, 200, `${type} template`)
  t.same(tmpl.body.changes, expected, 'the proposed edit')
  t.equal(tmpl.body.fix_type, type)
  t.ok(tmpl.body.description.length > 10, 'described')
  t.same(await f.graphOf(id), before, 'a template saves nothing')
  const count = f.sim.requestCount()
  const applied = await f.call(f.owner, 'POST', `/v1/api/workflows/${id}/nodes/${nodeId}/fix`, { fix_type: type })
  t.equal(applied.status, 200, `${type} applied`)
  if (!options.reads) t.equal(f.sim.requestCount(), count, 'the fix made no request to the cluster')
  t.same(applied.body.changes, tmpl.body.changes, 'applied exactly what was previewed')
  const after = await f.graphOf(id)
  t.same(applied.body.workflow.nodes, after.nodes, 'the reply carries the saved workflow')
  t.same(after.edges, before.edges, 'edges untouched')
  const touched = new Set(expected.map((c) => c.node_id))
  t.same(after.nodes.filter((n) => !touched.has(n.id)), before.nodes.filter((n) => !touched.has(n.id)), 'other nodes untouched')
  const manifests = await f.app.inject({ method: 'GET', url: `/v1/api/workflows/${id}/manifests`, headers: { ...f.owner.headers, accept: 'application/json' } })
  const rendered = (manifests.json().objects as Array<{ node_id: string; object: unknown }>).filter((o) => touched.has(o.node_id) || o.node_id === nodeId).map((o) => o.object)
  const previewed = parseAllDocuments(tmpl.body.preview_yaml, { version: '1.1' }).map((d) => d.toJS())
  t.same(previewed, rendered, 'the preview is what the saved graph renders')
  const again = await f.call(f.owner, 'GET', `/v1/api/workflows/${id}/nodes/${nodeId}/fix-template/${type}`)
  t.equal(again.status, 409, 'the fix no longer applies')
  return { before, after, preview: tmpl.body.preview_yaml as string }
}

const dataOf = (graph: { nodes: Array<{ id: string; data?: Record<string, unknown> }> }, id: string) => graph.nodes.find((n) => n.id === id)!.data

t.test('dns-name renames the node and the ingress path that names it', async (t) => {
  const id = await f.workflow({
    nodes: [
      node('svc', 'service', { name: 'Web_Svc', namespace: 'shop', port: 80 }),
      node('ing', 'ingress', { name: 'web', namespace: 'shop', paths: [{ path: '/', serviceName: 'Web_Svc', servicePort: 80 }] }),
      node('other', 'service', { name: 'web-svc', namespace: 'shop' }),
    ],
    edges: [],
  })
  t.match(only(await f.diagnose(id, 'svc'), 'name'), { status: 'error', fix_type: 'dns-name' })
  const { after } = await roundTrip(t, id, 'svc', 'dns-name', [
    { node_id: 'svc', path: 'data.name', old: 'Web_Svc', new: 'web-svc-2' },
    { node_id: 'ing', path: 'data.paths[0].serviceName', old: 'Web_Svc', new: 'web-svc-2' },
  ])
  t.same(dataOf(after, 'svc'), { name: 'web-svc-2', namespace: 'shop', port: 80 })
  t.same(dataOf(after, 'ing'), { name: 'web', namespace: 'shop', paths: [{ path: '/', serviceName: 'web-svc-2', servicePort: 80 }] })
  t.match(only(await f.diagnose(id, 'svc'), 'name'), { status: 'pass' })
  t.match(only(await f.diagnose(id, 'ing'), 'backend'), { status: 'pass', message: 'routes / → web-svc-2:80' })
})

t.test('missing-namespace puts the node beside the nodes it is connected to', async (t) => {
  const id = await f.workflow({
    nodes: [
      node('cfg', 'configmap', { name: 'cfg', data: { A: '1' } }),
      node('web', 'deployment', { name: 'web', namespace: 'shop', image: 'nginx:1.27', resources: requests }),
    ],
    edges: [edge('cfg', 'web')],
  })
  t.match(only(await f.diagnose(id, 'cfg'), 'namespace'), { status: 'warning', fix_type: 'missing-namespace' })
  const { after, preview } = await roundTrip(t, id, 'cfg', 'missing-namespace', [{ node_id: 'cfg', path: 'data.namespace', old: null, new: 'shop' }])
  t.same(dataOf(after, 'cfg'), { name: 'cfg', data: { A: '1' }, namespace: 'shop' })
  t.match(preview, /kind: ConfigMap\n[\s\S]*namespace: shop/)
  t.match(only(await f.diagnose(id, 'cfg'), 'namespace'), { status: 'pass' })
  t.match(only(await f.diagnose(id, 'cfg'), 'usage'), { status: 'pass', message: 'used by web' })
})

t.test('resource-requests adds requests, never above a limit; on an autoscaler it edits the scale target', async (t) => {
  const id = await f.workflow({
    nodes: [
      node('web', 'deployment', { name: 'web', namespace: 'shop', image: 'nginx:1.27', resources: { limits: { cpu: '50m', memory: '1Gi' } } }),
      node('api', 'deployment', { name: 'api', namespace: 'shop', image: 'nginx:1.27', resources: { requests: { memory: '64Mi' } } }),
      node('hpa', 'hpa', { name: 'api', namespace: 'shop', maxReplicas: 4 }),
    ],
    edges: [edge('api', 'hpa')],
  })
  const { after, preview } = await roundTrip(t, id, 'web', 'resource-requests', [
    { node_id: 'web', path: 'data.resources.requests.cpu', old: null, new: '50m' },
    { node_id: 'web', path: 'data.resources.requests.memory', old: null, new: '128Mi' },
  ])
  t.same(dataOf(after, 'web')!.resources, { limits: { cpu: '50m', memory: '1Gi' }, requests: { cpu: '50m', memory: '128Mi' } })
  t.match(preview, /requests:\n\s+cpu: 50m\n\s+memory: 128Mi/)
  t.match(only(await f.diagnose(id, 'web'), 'resources'), { status: 'pass' })

  t.match(only(await f.diagnose(id, 'hpa'), 'metrics'), { status: 'error', fix_type: 'resource-requests' })
  const hpa = await roundTrip(t, id, 'hpa', 'resource-requests', [{ node_id: 'api', path: 'data.resources.requests.cpu', old: null, new: '100m' }])
  t.same(dataOf(hpa.after, 'api')!.resources, { requests: { memory: '64Mi', cpu: '100m' } })
  t.match(hpa.preview, /kind: Deployment[\s\S]*kind: HorizontalPodAutoscaler/, 'the preview shows the workload it edited and the autoscaler, in apply order')
  t.match(only(await f.diagnose(id, 'hpa'), 'metrics'), { status: 'pass' })
})

t.test('selector-mismatch removes a selector that misses the connected workload; target-port targets its port', async (t) => {
  const id = await f.workflow({
    nodes: [
      node('web', 'deployment', { name: 'web', namespace: 'shop', image: 'nginx:1.27', port: 8080, resources: requests }),
      node('svc', 'service', { name: 'web', namespace: 'shop', port: 80, targetPort: 9090, selector: { app: 'web' } }),
    ],
    edges: [edge('web', 'svc')],
  })
  const diag = await f.diagnose(id, 'svc')
  t.match(only(diag, 'selector'), { status: 'error', fix_type: 'selector-mismatch' })
  t.match(only(diag, 'target-port'), { status: 'error', fix_type: 'target-port' })
  const sel = await roundTrip(t, id, 'svc', 'selector-mismatch', [{ node_id: 'svc', path: 'data.selector', old: { app: 'web' }, new: null }])
  t.same(dataOf(sel.after, 'svc'), { name: 'web', namespace: 'shop', port: 80, targetPort: 9090 }, 'the key is gone')
  t.match(sel.preview, /selector:\n\s+app\.kubernetes\.io\/name: web\n/)
  const port = await roundTrip(t, id, 'svc', 'target-port', [{ node_id: 'svc', path: 'data.targetPort', old: 9090, new: 8080 }])
  t.same(dataOf(port.after, 'svc'), { name: 'web', namespace: 'shop', port: 80, targetPort: 8080 })
  const fixed = await f.diagnose(id, 'svc')
  t.match(only(fixed, 'selector'), { status: 'pass' })
  t.match(only(fixed, 'target-port'), { status: 'pass', message: 'targets port 8080 of web' })
  t.equal(fixed.overall_status, 'healthy')
})

t.test('target-port on a single listed port, and a named target port', async (t) => {
  const id = await f.workflow({
    nodes: [
      node('web', 'deployment', { name: 'web', namespace: 'shop', image: 'nginx:1.27', port: 8080, resources: requests }),
      node('svc', 'service', { name: 'web', namespace: 'shop', ports: [{ name: 'http', port: 80, targetPort: 'http' }] }),
    ],
    edges: [edge('web', 'svc')],
  })
  await roundTrip(t, id, 'svc', 'target-port', [{ node_id: 'svc', path: 'data.ports[0].targetPort', old: 'http', new: 8080 }])
  t.match(only(await f.diagnose(id, 'svc'), 'target-port'), { status: 'pass' })
})

t.test('image-tag-latest pins the digest the running pods report, and writes nothing to the cluster', async (t) => {
  const id = await f.workflow({ nodes: [node('web', 'deployment', { name: 'pinme', namespace: 'pin', image: 'nginx', resources: requests })], edges: [] }, 'sim')
  const before = await f.call(f.owner, 'GET', `/v1/api/workflows/${id}/nodes/web/fix-template/image-tag-latest`)
  t.equal(before.status, 409, 'not deployed: no concrete version can be known')
  t.match(before.body.error, /no concrete version of "nginx" can be known/)
  await f.deploy(id)
  const image = await waitFor('a pod reporting its image digest', async () => {
    const c = only(await f.diagnose(id, 'web'), 'image')
    return c.fix_type === 'image-tag-latest' && c
  })
  t.match(image, { status: 'warning', suggestion: /pin it to the digest the running pods use \(nginx@sha256:[0-9a-f]{64}\)/ })
  const graph = await f.graphOf(id)
  const changed = { ...graph, nodes: graph.nodes.map((n) => ({ ...n, data: { ...n.data, image: 'busybox' } })) }
  t.equal((await f.call(f.owner, 'POST', `/v1/api/workflows/${id}/save`, changed)).status, 200)
  const other = await f.call(f.owner, 'GET', `/v1/api/workflows/${id}/nodes/web/fix-template/image-tag-latest`)
  t.equal(other.status, 409, 'the running pods\' digest is not a digest of the image the node names now')
  t.notOk(only(await f.diagnose(id, 'web'), 'image').fix_type)
  t.equal((await f.call(f.owner, 'POST', `/v1/api/workflows/${id}/save`, graph)).status, 200)
  const live = await f.client.read({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'pinme', namespace: 'pin' } }) as { metadata: { generation: number; resourceVersion: string }; spec: { template: { spec: { containers: Array<{ image: string }> } } } }
  const digest = /@(sha256:[0-9a-f]{64})/.exec(image.suggestion!)![1]
  const { after } = await roundTrip(t, id, 'web', 'image-tag-latest', [{ node_id: 'web', path: 'data.image', old: 'nginx', new: `nginx@${digest}` }], { reads: true })
  t.equal(dataOf(after, 'web')!.image, `nginx@${digest}`)
  const now = await f.client.read({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'pinme', namespace: 'pin' } }) as typeof live
  t.equal(now.spec.template.spec.containers[0].image, 'nginx', 'the cluster still runs what the last run applied')
  t.equal(now.metadata.generation, live.metadata.generation, 'the Deployment was not written')
  t.match(only(await f.diagnose(id, 'web'), 'image'), { status: 'pass', message: /pinned by digest/ })
})

t.test('a canvas save while a fix is prepared is not overwritten: the fix answers 409', async (t) => {
  const id = await f.workflow({ nodes: [node('web', 'deployment', { name: 'race', namespace: 'race', image: 'nginx', resources: requests })], edges: [] }, 'sim')
  await f.deploy(id)
  await waitFor('a pod reporting its image digest', async () => only(await f.diagnose(id, 'web'), 'image').fix_type)
  f.sim.faults.setLatency(300)
  t.teardown(() => f.sim.faults.reset())
  const count = f.sim.requestCount()
  const fixing = f.call(f.owner, 'POST', `/v1/api/workflows/${id}/nodes/web/fix`, { fix_type: 'image-tag-latest' })
  // The fix has loaded the graph once it reads the cluster for the digest.
  await waitFor('the fix reading the cluster', () => f.sim.requestCount() > count)
  const graph = await f.graphOf(id)
  const moved = { ...graph, nodes: graph.nodes.map((n) => ({ ...n, position: { x: 40, y: 40 } })) }
  t.equal((await f.call(f.owner, 'POST', `/v1/api/workflows/${id}/save`, moved)).status, 200)
  t.same(await fixing, { status: 409, body: { error: 'the workflow changed while the fix was prepared; look at its diagnostics again' } })
  t.same(await f.graphOf(id), moved, 'the save stands')
})
