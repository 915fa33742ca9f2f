// Static diagnostics (no cluster): every node type answers, a realistic graph is healthy, and each check
// fails, with a suggestion, where it should. Also the route contract: 404 for an unknown node or another
// user's workflow, 400 for an unknown fix type, 409 for a fix that does not apply.
import t from 'tap'
import { fullCanvas } from '../manifests/canvas.ts'
import { registerUser } from '../helpers/auth.ts'
import { NODE_TYPES } from '../../schemas/nodes.ts'
import { FIX_TYPES } from '../../src/services/diagnostics/types.ts'
import { checks, diagFixture, edge, node, only, type DiagBody } from './fixture.ts'

const f = await diagFixture(t)

const failed = (body: DiagBody) => body.checks.filter((c) => c.status !== 'pass')

t.test('every node of the all-types canvas is diagnosed, and a well-drawn graph is healthy', async (t) => {
  const canvas = fullCanvas()
  // With an autoscaler connected, a replica count is a warning (the autoscaler owns it): well drawn means none.
  delete canvas.nodes.find((n) => n.id === 'n-deployment')!.data!.replicas
  const graph = { nodes: [...canvas.nodes, node('n-plugin', 'plugin', { name: 'cert', namespace: 'shop', pluginId: 'no-such-plugin' })], edges: canvas.edges }
  const id = await f.workflow(graph)
  t.same(new Set(graph.nodes.map((n) => n.type)), new Set(NODE_TYPES), 'the graph has every node type')
  for (const n of graph.nodes) {
    const body = await f.diagnose(id, n.id)
    t.equal(body.node_id, n.id)
    t.ok(Date.parse(body.checked_at) > 0, 'checked_at is a timestamp')
    t.same(only(body, 'deployment'), { name: 'deployment', status: 'pass', message: 'the workflow has not been deployed yet: live checks run once it has' })
    for (const c of failed(body)) t.ok(c.suggestion, `${n.id}: ${c.name} says what to do`)
    if (n.type === 'plugin') {
      t.equal(body.overall_status, 'error')
      t.match(only(body, 'manifest'), { status: 'error', message: /pluginId: no plugin "no-such-plugin"/ })
      continue
    }
    t.same(failed(body), [], `${n.id} has no failing check`)
    t.equal(body.overall_status, 'healthy', n.id)
    t.match(checks(body, 'manifest')[0], { status: 'pass', message: /^renders / })
  }
  t.equal((await f.diagnose(id, 'n-deployment')).kind, 'Deployment')
  t.equal((await f.diagnose(id, 'n-hpa')).kind, 'HorizontalPodAutoscaler')
  t.match(only(await f.diagnose(id, 'n-service'), 'target-port'), { status: 'pass', message: 'targets port 8080 of api' })
  t.match(only(await f.diagnose(id, 'n-ingress'), 'backend'), { status: 'pass', message: 'routes /api → api-svc:80' })
  t.match(only(await f.diagnose(id, 'n-hpa'), 'scale-target'), { status: 'pass', message: 'scales Deployment api' })
})

t.test('node data: name, namespace, image and requests', async (t) => {
  const id = await f.workflow({
    nodes: [
      node('bad-name', 'deployment', { name: 'My_API', image: 'nginx:1.27', resources: { requests: { cpu: '1', memory: '1Gi' } } }),
      node('bad-ns', 'configmap', { name: 'cfg', namespace: 'Shop!' }),
      node('untagged', 'deployment', { name: 'untagged', namespace: 'shop', image: 'nginx' }),
      node('latest', 'job', { name: 'latest', namespace: 'shop', image: 'registry.local:5000/tools/migrate:latest', resources: { requests: { cpu: '100m' } } }),
      node('no-image', 'pod', { name: 'no-image', namespace: 'shop' }),
      node('elsewhere', 'secret', { name: 'creds', namespace: 'other' }),
    ],
    edges: [edge('bad-ns', 'bad-name'), edge('elsewhere', 'untagged')],
  })
  const name = await f.diagnose(id, 'bad-name')
  t.match(only(name, 'name'), { status: 'error', message: /name "My_API" is not a valid DNS label/, suggestion: 'rename it to "my-api"', fix_type: 'dns-name' })
  t.notOk(checks(name, 'manifest').some((c) => /^name: /.test(c.message)), 'the schema message is not repeated')
  t.equal(name.overall_status, 'error')
  t.match(only(name, 'image'), { status: 'pass' })
  t.match(only(name, 'resources'), { status: 'pass' })

  const ns = await f.diagnose(id, 'bad-ns')
  t.match(only(ns, 'namespace'), { status: 'error', message: /namespace "Shop!" is not a valid DNS label/, fix_type: 'missing-namespace' })

  const untagged = await f.diagnose(id, 'untagged')
  const image = only(untagged, 'image')
  t.match(image, { status: 'warning', message: /image "nginx" has no tag, so Kubernetes pulls :latest/, suggestion: /pin a version tag, e\.g\. nginx:<version>/ })
  t.notOk(image.fix_type, 'no fix: nothing is deployed, so no concrete version can be known')
  t.match(only(untagged, 'resources'), { status: 'warning', message: /no cpu or memory request/, fix_type: 'resource-requests' })
  t.match(only(untagged, 'namespace'), { status: 'warning', message: /edges to creds \(namespace other\) have no effect/, fix_type: 'missing-namespace' })
  t.equal(untagged.overall_status, 'warning')

  const latest = await f.diagnose(id, 'latest')
  t.match(only(latest, 'image'), { status: 'warning', message: /uses the :latest tag/, suggestion: /registry\.local:5000\/tools\/migrate:<version>/ })
  t.match(only(latest, 'resources'), { status: 'warning', message: /^no memory request/ })

  const noImage = await f.diagnose(id, 'no-image')
  t.match(only(noImage, 'image'), { status: 'error', message: 'no container image is set' })
  t.match(checks(noImage, 'manifest'), [{ status: 'error', message: 'image: required' }])
})

t.test('edges: selectors, target ports, service ports, ingress backends, autoscalers, usage', async (t) => {
  const web = { namespace: 'app', image: 'nginx:1.27', port: 8080, resources: { requests: { cpu: '100m', memory: '64Mi' } } }
  const id = await f.workflow({
    nodes: [
      node('web', 'deployment', { name: 'web', ...web }),
      node('agent', 'daemonset', { name: 'agent', ...web }),
      node('lean', 'deployment', { name: 'lean', ...web, resources: undefined }),
      node('svc-ok', 'service', { name: 'web', namespace: 'app', port: 80 }),
      node('svc-selector', 'service', { name: 'picky', namespace: 'app', selector: { app: 'web' } }),
      node('svc-port', 'service', { name: 'wrong-port', namespace: 'app', port: 80, targetPort: 9090 }),
      node('svc-named', 'service', { name: 'named', namespace: 'app', ports: [{ port: 80, targetPort: 'http' }] }),
      node('svc-alone', 'service', { name: 'alone', namespace: 'app' }),
      node('svc-nodeport', 'service', { name: 'np', namespace: 'app', ports: [{ port: 80, nodePort: 30080 }] }),
      node('ing', 'ingress', { name: 'ing', namespace: 'app', paths: [{ path: '/', serviceName: 'web', servicePort: 8080 }, { path: '/x', serviceName: 'external', servicePort: 80 }] }),
      node('hpa-ds', 'hpa', { name: 'hpa-ds', namespace: 'app', maxReplicas: 3 }),
      node('hpa-lean', 'hpa', { name: 'hpa-lean', namespace: 'app', maxReplicas: 3, targetMemoryUtilization: 70 }),
      node('cfg', 'configmap', { name: 'unused', namespace: 'app' }),
      node('pdb', 'poddisruptionbudget', { name: 'pdb', namespace: 'app', minAvailable: 1 }),
      node('np', 'networkpolicy', { name: 'np', namespace: 'app', podSelector: { tier: 'db' } }),
    ],
    edges: [
      edge('web', 'svc-ok'), edge('web', 'svc-selector'), edge('web', 'svc-port'), edge('web', 'svc-named'),
      edge('agent', 'hpa-ds'), edge('lean', 'hpa-lean'),
    ],
  })
  t.match(only(await f.diagnose(id, 'svc-ok'), 'selector'), { status: 'pass', message: 'selects the pods of web through the edge' })
  const picky = await f.diagnose(id, 'svc-selector')
  t.match(only(picky, 'selector'), { status: 'error', message: /selector \{app=web\} does not match the pods of web, which carry .*app\.kubernetes\.io\/name=web/, fix_type: 'selector-mismatch' })
  t.match(only(await f.diagnose(id, 'svc-port'), 'target-port'), { status: 'error', message: 'targetPort 9090 but web listens on 8080', fix_type: 'target-port' })
  t.match(only(await f.diagnose(id, 'svc-named'), 'target-port'), { status: 'error', message: /targetPort "http" names a port web's container does not declare/, fix_type: 'target-port' })
  const alone = await f.diagnose(id, 'svc-alone')
  t.match(only(alone, 'selector'), { status: 'warning', message: /selects no pods/, suggestion: /connect the workload/ })
  t.notOk(only(alone, 'selector').fix_type)
  t.same(checks(alone, 'target-port'), [], 'no workload, so no target port to compare')
  t.match(only(await f.diagnose(id, 'svc-nodeport'), 'ports'), { status: 'error', message: /nodePort 30080 is set on a ClusterIP service/ })
  const ing = checks(await f.diagnose(id, 'ing'), 'backend')
  t.match(ing, [
    { status: 'error', message: 'path / routes to port 8080 of service web, which exposes 80', suggestion: 'route to port 80' },
    { status: 'warning', message: /service external, which is not in this workflow/ },
  ])
  const hpaDs = await f.diagnose(id, 'hpa-ds')
  t.match(only(hpaDs, 'scale-target'), { status: 'error', message: 'a DaemonSet (agent) cannot be scaled' })
  t.notOk(checks(hpaDs, 'manifest').some((c) => /^scaleTargetRef: connect/.test(c.message)), 'not reported twice')
  t.match(only(await f.diagnose(id, 'hpa-lean'), 'metrics'), { status: 'error', message: /scales on memory utilization.*lean requests no memory/, fix_type: 'resource-requests' })
  t.match(only(await f.diagnose(id, 'cfg'), 'usage'), { status: 'warning', message: 'no workload is connected, so no pod uses it' })
  t.match(only(await f.diagnose(id, 'pdb'), 'selector'), { status: 'error', message: /selects no pods/ })
  t.match(only(await f.diagnose(id, 'np'), 'selector'), { status: 'warning', message: /podSelector \{tier=db\} matches no workload of this workflow/ })
})

t.test('not found, not yours, unknown fix type, fix not applicable', async (t) => {
  const id = await f.workflow({ nodes: [node('web', 'deployment', { name: 'web', image: 'nginx:1.27', resources: { requests: { cpu: '1', memory: '1Gi' } } })], edges: [] })
  const base = `/v1/api/workflows/${id}/nodes`
  t.same(await f.call(f.owner, 'GET', `${base}/nope/diagnostics`), { status: 404, body: { error: 'node not found' } })
  t.same((await f.call(f.owner, 'GET', `${base}/nope/fix-template/dns-name`)).status, 404)
  t.same((await f.call(f.owner, 'POST', `${base}/nope/fix`, { fix_type: 'dns-name' })).status, 404)
  t.same(await f.call(f.owner, 'GET', '/v1/api/workflows/665f1c2ab4d3e9a1c0ffee99/nodes/web/diagnostics'), { status: 404, body: { error: 'workflow not found' } })
  const stranger = await registerUser(f.app)
  for (const [method, url, payload] of [['GET', `${base}/web/diagnostics`], ['GET', `${base}/web/fix-template/image-tag-latest`], ['POST', `${base}/web/fix`, { fix_type: 'resource-requests' }]] as const) {
    t.same(await f.call(stranger, method, url, payload), { status: 404, body: { error: 'workflow not found' } }, `${method} ${url} for another user`)
  }
  const unknown = await f.call(f.owner, 'GET', `${base}/web/fix-template/reboot-cluster`)
  t.equal(unknown.status, 400)
  t.match(unknown.body.error, /fixType/)
  t.equal((await f.call(f.owner, 'POST', `${base}/web/fix`, { fix_type: 'reboot-cluster' })).status, 400)
  for (const type of FIX_TYPES) {
    const res = await f.call(f.owner, 'GET', `${base}/web/fix-template/${type}`)
    t.equal(res.status, 409, `${type} does not apply to a healthy deployment`)
    t.match(res.body.error, new RegExp(`^fix ${type} does not apply to node "web": .+`))
  }
  t.match((await f.call(f.owner, 'POST', `${base}/web/fix`, { fix_type: 'dns-name' })).body, { error: /the name "web" is already a valid DNS label/ })
})

t.test('malformed node data is reported, never a 500', async (t) => {
  const odd = [null, 42, 'text', [], [null], { a: null }, [{ port: 'x' }]]
  const keys = ['name', 'namespace', 'image', 'port', 'ports', 'targetPort', 'selector', 'podSelector', 'resources', 'labels', 'paths', 'volumeMounts', 'serviceType']
  const nodes = [
    node('web', 'deployment', { name: 'web', image: 'nginx:1.27', port: 8080 }),
    ...['deployment', 'service', 'ingress', 'hpa', 'networkpolicy', 'poddisruptionbudget', 'configmap', 'plugin'].flatMap((type) =>
      odd.map((value, i) => node(`${type}-${i}`, type, Object.fromEntries(keys.map((k) => [k, value]))))),
  ]
  const id = await f.workflow({ nodes, edges: nodes.slice(1).map((n) => edge('web', n.id)) })
  for (const n of nodes.slice(1)) {
    const res = await f.call(f.owner, 'GET', `/v1/api/workflows/${id}/nodes/${n.id}/diagnostics`)
    t.equal(res.status, 200, n.id)
    if (res.status === 200) t.equal(res.body.overall_status, 'error', `${n.id}: its data is in error`)
  }
})
