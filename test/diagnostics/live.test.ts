// Live diagnostics against the simulator, where the workflow's last run put its objects: ready or not,
// endpoints, selectors and ports against the real pods, warning events, a custom resource's CRD, objects
// missing or not ours, the run's namespace override, and a cluster that cannot be read (a warning, still 200).
import t from 'tap'
import type { KubernetesObject } from '@kubernetes/client-node'
import { waitFor } from '../kube-sim/test-helpers.ts'
import { registerUser } from '../helpers/auth.ts'
import { checks, edge, node, only, simFixture, SECRET_VALUE, type DiagBody } from './fixture.ts'

const f = await simFixture(t)
const ns = 'live'
const requests = { requests: { cpu: '100m', memory: '64Mi' } }
const workload = (name: string, image: string) => ({ name, namespace: ns, image, port: 8080, replicas: 1, resources: requests })

const cert = await f.app.services.plugins.getForRender('cert-manager-certificate')
await f.app.services.plugins.setEnabled(cert!.id, true)

const id = await f.workflow({
  nodes: [
    node('web', 'deployment', workload('web', 'nginx:1.27')),
    node('svc-web', 'service', { name: 'web', namespace: ns, port: 80 }),
    node('stuck', 'deployment', workload('stuck', 'registry.example/never-ready:1.0')),
    node('svc-stuck', 'service', { name: 'stuck', namespace: ns, port: 80 }),
    node('svc-picky', 'service', { name: 'picky', namespace: ns, port: 80, selector: { app: 'web' } }),
    node('svc-port', 'service', { name: 'wrong-port', namespace: ns, port: 80, targetPort: 9090 }),
    node('creds', 'secret', { name: 'creds', namespace: ns, keys: ['PASSWORD'] }),
    node('cert', 'plugin', { name: 'shop-cert', namespace: ns, pluginId: 'cert-manager-certificate', dnsName: 'shop.example.com', secretName: 'shop-tls' }),
    node('late', 'configmap', { name: 'late', namespace: ns }),
    node('foreign', 'configmap', { name: 'foreign', namespace: ns }),
  ],
  edges: [edge('web', 'svc-web'), edge('stuck', 'svc-stuck'), edge('web', 'svc-picky'), edge('web', 'svc-port'), edge('creds', 'web')],
}, 'sim')
await f.deploy(id, { only: ['web', 'svc-web', 'stuck', 'svc-stuck', 'svc-picky', 'svc-port', 'creds'] })
await f.client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'foreign', namespace: ns }, data: { x: '1' } } as KubernetesObject)

/** Diagnoses until `ready` holds (the simulator's controllers move in tens of milliseconds). */
const settleIn = (workflowId: string, nodeId: string, ready: (b: DiagBody) => boolean) =>
  waitFor(`${nodeId} settled`, async () => { const b = await f.diagnose(workflowId, nodeId); return ready(b) && b })
const settle = (nodeId: string, ready: (b: DiagBody) => boolean) => settleIn(id, nodeId, ready)
const status = (b: DiagBody, name: string) => checks(b, name).map((c) => c.status)

t.test('a ready workload behind a service: every live check passes', async (t) => {
  const web = await settle('web', (b) => only(b, 'ready').status === 'pass')
  t.match(only(web, 'exists'), { status: 'pass', message: 'Deployment live/web exists in cluster sim' })
  t.match(only(web, 'ready'), { message: /^Deployment live\/web is running \(1\/1 ready\)/ })
  t.match(only(web, 'events'), { status: 'pass', message: /no warning events/ })
  t.equal(web.overall_status, 'healthy')
  const svc = await settle('svc-web', (b) => only(b, 'endpoints').status === 'pass')
  t.same(status(svc, 'selector-pods'), ['pass'])
  t.match(only(svc, 'endpoints'), { message: '1 ready endpoint' })
  t.match(only(svc, 'container-ports'), { status: 'pass', message: 'every target port is a port the selected pods declare' })
  t.equal(svc.overall_status, 'healthy', JSON.stringify(svc.checks.filter((c) => c.status !== 'pass')))
  const secret = await f.diagnose(id, 'creds')
  t.same(status(secret, 'exists'), ['pass'])
  t.same(checks(secret, 'ready'), [], 'a Secret works as soon as it exists: no separate readiness')
  t.notMatch(JSON.stringify(secret), SECRET_VALUE, 'no secret value in a reply')
})

t.test('an image that never becomes ready: not ready, warning events, no ready endpoints', async (t) => {
  const stuck = await settle('stuck', (b) => only(b, 'events').status === 'warning')
  t.not(only(stuck, 'ready').status, 'pass')
  t.match(only(stuck, 'ready'), { message: /^Deployment live\/stuck is (pending|warning|failed)/, suggestion: /readiness probe/ })
  t.match(only(stuck, 'events'), { message: /warning events? in the last hour: Unhealthy on Pod stuck-/, suggestion: /correct that in the node/ })
  const svc = await settle('svc-stuck', (b) => /not ready/.test(only(b, 'endpoints').message))
  t.match(only(svc, 'endpoints'), { status: 'error', message: /^no ready endpoints: 1 selected pod is not ready/ })
  t.same(status(svc, 'selector-pods'), ['pass'], 'the selector does match the pods')
  t.equal(svc.overall_status, 'error')
})

t.test('a selector that matches no pods, and a target port the pods do not declare, name their fixes', async (t) => {
  const picky = await f.diagnose(id, 'svc-picky')
  t.match(only(picky, 'selector-pods'), { status: 'error', message: 'the selector app=web matches no pods in namespace live', fix_type: 'selector-mismatch' })
  t.match(only(picky, 'endpoints'), { status: 'error', message: /no endpoints/ })
  t.same(checks(picky, 'container-ports'), [], 'no pods, so no ports to compare')
  const port = await settle('svc-port', (b) => only(b, 'selector-pods').status === 'pass')
  t.match(only(port, 'container-ports'), { status: 'error', message: 'target port 9090 is not a port the selected pods declare (8080)', fix_type: 'target-port' })
  const fixed = await f.call(f.owner, 'POST', `/v1/api/workflows/${id}/nodes/svc-port/fix`, { fix_type: 'target-port' })
  t.equal(fixed.status, 200)
  const after = await f.diagnose(id, 'svc-port')
  t.same(status(after, 'target-port'), ['pass'], 'the graph is fixed')
  t.match(only(after, 'container-ports'), { status: 'error', message: /9090/ }, 'the cluster keeps what was deployed until the next run')
  t.notOk(only(after, 'container-ports').fix_type, 'and the fix no longer applies to the graph, so none is named')
})

t.test('objects missing from the cluster or not deployed from the node', async (t) => {
  t.match(only(await f.diagnose(id, 'late'), 'exists'), { status: 'warning', message: 'ConfigMap live/late is not in cluster sim', suggestion: /run the workflow/ })
  t.match(only(await f.diagnose(id, 'foreign'), 'exists'), { status: 'warning', message: /exists in cluster sim but was not deployed from this node/ })
})

t.test('a plugin node whose CRD is not installed, then installed', async (t) => {
  const missing = await f.diagnose(id, 'cert')
  t.equal(missing.kind, 'Certificate')
  t.match(only(missing, 'crd'), { status: 'error', message: 'cluster sim does not serve Certificate (cert-manager.io/v1): its CustomResourceDefinition is not installed', suggestion: /install the operator/ })
  t.same(checks(missing, 'exists'), [], 'nothing else is read for a kind the cluster does not serve')
  await f.client.create({
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'certificates.cert-manager.io' },
    spec: {
      group: 'cert-manager.io', scope: 'Namespaced',
      names: { kind: 'Certificate', plural: 'certificates', singular: 'certificate', listKind: 'CertificateList' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  } as KubernetesObject)
  const installed = await settle('cert', (b) => only(b, 'crd').status === 'pass')
  t.match(only(installed, 'exists'), { status: 'warning', message: 'Certificate live/shop-cert is not in cluster sim' })
  await f.deploy(id, { only: ['cert'] })
  t.match(only(await f.diagnose(id, 'cert'), 'exists'), { status: 'pass' })
})

t.test('the run\'s namespace override is where the objects are looked for', async (t) => {
  const other = await f.workflow({ nodes: [node('cfg', 'configmap', { name: 'settings', namespace: 'ignored' })], edges: [] }, 'sim')
  await f.deploy(other, { namespace: 'override' })
  t.match(only(await f.diagnose(other, 'cfg'), 'exists'), { status: 'pass', message: 'ConfigMap override/settings exists in cluster sim' })
})

t.test('after a run through POST /run, diagnostics look where that run deployed', async (t) => {
  const ran = await f.workflow({
    nodes: [node('api', 'deployment', { name: 'api', namespace: 'ran', image: 'nginx:1.27', port: 8080, resources: requests }), node('api-svc', 'service', { name: 'api', namespace: 'ran', port: 80 })],
    edges: [edge('api', 'api-svc')],
  }, 'sim')
  const run = await f.call(f.owner, 'POST', `/v1/api/workflows/${ran}/run`, { namespace: 'ran-override' })
  t.ok([200, 202].includes(run.status), `run accepted (${run.status})`)
  await waitFor('the run finished', async () => (await f.call(f.owner, 'GET', `/v1/api/workflows/${ran}/runs`)).body.runs[0]?.status === 'completed')
  const svc = await settleIn(ran, 'api-svc', (b) => only(b, 'endpoints').status === 'pass')
  t.match(only(svc, 'exists'), { status: 'pass', message: 'Service ran-override/api exists in cluster sim' })
  t.equal(svc.overall_status, 'healthy', JSON.stringify(svc.checks.filter((c) => c.status !== 'pass')))
})

t.test('a cluster that cannot be read: one warning in place of the live checks, still 200', async (t) => {
  const gone = await f.call(f.owner, 'POST', '/v1/api/clusters', { name: 'gone', server: 'https://127.0.0.1:1', auth_type: 'token', credentials: { token: 'x', ca_data: f.sim.caPem } })
  t.equal(gone.status, 201)
  const other = await f.workflow({ nodes: [node('cfg', 'configmap', { name: 'settings', namespace: 'x' })], edges: [] }, 'gone')
  await f.deploy(other, { cluster: 'gone', recordOnly: true })
  const body = await f.diagnose(other, 'cfg')
  const live = body.checks.filter((c) => !['name', 'namespace', 'usage', 'manifest'].includes(c.name))
  t.match(live, [{ name: 'cluster', status: 'warning', message: /^live checks skipped: cluster gone could not be read \(.+\)$/, suggestion: /test/ }])
  t.notMatch(live[0].message, /ECONNREFUSED|127\.0\.0\.1|Error:/, 'no raw error text')
  t.equal(body.overall_status, 'warning')

  f.sim.faults.failNext(1, 500)
  const failing = await f.diagnose(id, 'web')
  t.match(checks(failing, 'cluster'), [{ status: 'warning', message: 'live checks skipped: cluster sim could not be read (the cluster answered 500)' }])
  t.same(checks(failing, 'exists'), [])
  f.sim.faults.reset()

  await f.call(f.owner, 'DELETE', '/v1/api/clusters/gone')
  t.match(only(await f.diagnose(other, 'cfg'), 'cluster'), { status: 'warning', message: /cluster gone could not be read \(it is no longer available to you\)/ })
})

t.test('another user cannot diagnose or fix the workflow (404) and nothing is read from the cluster', async (t) => {
  const stranger = await registerUser(f.app)
  const count = f.sim.requestCount()
  for (const [method, url, payload] of [
    ['GET', `/v1/api/workflows/${id}/nodes/web/diagnostics`], ['GET', `/v1/api/workflows/${id}/nodes/svc-picky/fix-template/selector-mismatch`],
    ['POST', `/v1/api/workflows/${id}/nodes/svc-picky/fix`, { fix_type: 'selector-mismatch' }],
  ] as const) {
    t.same(await f.call(stranger, method, url, payload), { status: 404, body: { error: 'workflow not found' } }, `${method} ${url}`)
  }
  t.equal(f.sim.requestCount(), count)
})
