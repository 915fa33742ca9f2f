// Each documented edge does what the wiring table says, explicit node data wins over what an edge implies,
// and an edge that cannot be wired is a warning on its node, never a silent no-op.
import t from 'tap'
import { renderWorkflow } from '../../src/manifests/index.ts'
import type { KubeObject, ManifestEdge, ManifestNode, RenderResult } from '../../src/manifests/types.ts'
import { ctx, edge, node } from './canvas.ts'

const web = (extra: Record<string, unknown> = {}) => node('web', 'deployment', { name: 'web', image: 'nginx:1.27', port: 8080, ...extra })

async function render(nodes: ManifestNode[], edges: ManifestEdge[]): Promise<RenderResult> {
  return renderWorkflow({ nodes, edges }, ctx())
}
function objectOf(result: RenderResult, nodeId: string): KubeObject {
  const found = result.objects.find((o) => o.node_id === nodeId && o.object.kind !== 'Namespace')
  if (!found) throw new Error(`node ${nodeId} rendered nothing: ${JSON.stringify(result.diagnostics)}`)
  return found.object
}
const spec = (o: KubeObject) => o.spec as Record<string, any>
const podSpecOf = (o: KubeObject): Record<string, any> =>
  o.kind === 'Pod' ? spec(o) : o.kind === 'CronJob' ? spec(o).jobTemplate.spec.template.spec : spec(o).template.spec
const errors = (r: RenderResult) => r.diagnostics.filter((d) => d.severity === 'error')

t.test('workload → service: selector from the workload\'s pod labels, target port from its container port', async (t) => {
  const r = await render([web(), node('svc', 'service', { name: 'web', port: 80 })], [edge('web', 'svc')])
  t.same(errors(r), [])
  const deployment = objectOf(r, 'web')
  const svc = spec(objectOf(r, 'svc'))
  t.same(svc.selector, spec(deployment).selector.matchLabels, 'selector is the deployment\'s selector')
  for (const [k, v] of Object.entries(svc.selector)) t.equal(spec(deployment).template.metadata.labels[k], v, `pods carry ${k}`)
  t.equal(svc.ports[0].targetPort, 8080)
  t.equal(svc.ports[0].port, 80)
})

t.test('workload → service: the service\'s own selector and targetPort win', async (t) => {
  const r = await render([web(), node('svc', 'service', { name: 'web', targetPort: 'http', selector: { app: 'mine' } })], [edge('web', 'svc')])
  t.same(spec(objectOf(r, 'svc')).selector, { app: 'mine' })
  t.equal(spec(objectOf(r, 'svc')).ports[0].targetPort, 'http')
})

t.test('workload → service: a StatefulSet takes the connected service as its governing service', async (t) => {
  const r = await render([node('db', 'statefulset', { name: 'db', image: 'postgres:16', port: 5432 }), node('svc', 'service', { name: 'db-headless' })], [edge('db', 'svc')])
  t.equal(spec(objectOf(r, 'db')).serviceName, 'db-headless')
  t.equal(spec(objectOf(r, 'svc')).ports[0].targetPort, 5432)
})

t.test('service → ingress: backend name and port come from the service', async (t) => {
  const r = await render([node('svc', 'service', { name: 'api', port: 8081 }), node('ing', 'ingress', { name: 'api', host: 'api.example.com' })], [edge('svc', 'ing')])
  t.same(errors(r), [])
  const rule = spec(objectOf(r, 'ing')).rules[0]
  t.equal(rule.host, 'api.example.com')
  t.same(rule.http.paths, [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'api', port: { number: 8081 } } } }])
})

t.test('service → ingress: listed paths keep their own backend; a path without one gets the connected service', async (t) => {
  const r = await render([node('svc', 'service', { name: 'api' }), node('ing', 'ingress', { name: 'api', paths: [{ path: '/a', serviceName: 'other', servicePort: 9000 }, { path: '/b', pathType: 'Exact' }] })], [edge('svc', 'ing')])
  t.same(errors(r), [])
  const paths = spec(objectOf(r, 'ing')).rules[0].http.paths
  t.same(paths[0].backend.service, { name: 'other', port: { number: 9000 } })
  t.same(paths[1], { path: '/b', pathType: 'Exact', backend: { service: { name: 'api', port: { number: 80 } } } })
})

t.test('workload → hpa: scaleTargetRef names the workload with its kind and apiVersion', async (t) => {
  for (const [type, kind] of [['deployment', 'Deployment'], ['statefulset', 'StatefulSet'], ['replicaset', 'ReplicaSet']]) {
    const r = await render([node('w', type, { name: 'w', image: 'nginx' }), node('h', 'hpa', { name: 'h', maxReplicas: 4 })], [edge('w', 'h')])
    t.same(errors(r), [], type)
    t.same(spec(objectOf(r, 'h')).scaleTargetRef, { apiVersion: 'apps/v1', kind, name: 'w' }, type)
  }
})

t.test('workload → hpa: a workload that cannot scale is a warning, and an autoscaler with no target an error', async (t) => {
  const r = await render([node('d', 'daemonset', { name: 'd', image: 'nginx' }), node('h', 'hpa', { name: 'h', maxReplicas: 4 })], [edge('d', 'h')])
  t.ok(r.diagnostics.some((d) => d.node_id === 'h' && d.severity === 'warning' && /DaemonSet cannot be scaled/.test(d.message)))
  t.ok(errors(r).some((d) => d.node_id === 'h' && /^scaleTargetRef:/.test(d.message)))
  t.notOk(r.objects.some((o) => o.node_id === 'h'))
})

t.test('workload → networkpolicy: podSelector selects the workload\'s pods; the node\'s own wins', async (t) => {
  let r = await render([web(), node('np', 'networkpolicy', { name: 'np', policyTypes: ['Ingress'] })], [edge('web', 'np')])
  t.same(spec(objectOf(r, 'np')).podSelector, { matchLabels: spec(objectOf(r, 'web')).selector.matchLabels })
  r = await render([web(), node('np', 'networkpolicy', { name: 'np', podSelector: { role: 'db' } })], [edge('web', 'np')])
  t.same(spec(objectOf(r, 'np')).podSelector, { matchLabels: { role: 'db' } })
})

t.test('workload → networkpolicy: several workloads are selected together by name', async (t) => {
  const r = await render([web(), node('api', 'deployment', { name: 'api', image: 'nginx' }), node('np', 'networkpolicy', { name: 'np' })], [edge('web', 'np'), edge('api', 'np')])
  const sel = spec(objectOf(r, 'np')).podSelector
  t.same(sel.matchExpressions, [{ key: 'app.kubernetes.io/name', operator: 'In', values: ['web', 'api'] }])
  for (const id of ['web', 'api']) {
    const labels = spec(objectOf(r, id)).template.metadata.labels
    for (const [k, v] of Object.entries(sel.matchLabels)) t.equal(labels[k], v, `${id} pods match ${k}`)
  }
})

t.test('workload → poddisruptionbudget: selector selects the workload\'s pods; the node\'s own wins', async (t) => {
  let r = await render([web(), node('pdb', 'poddisruptionbudget', { name: 'pdb', minAvailable: 1 })], [edge('web', 'pdb')])
  t.same(errors(r), [])
  t.same(spec(objectOf(r, 'pdb')).selector, { matchLabels: spec(objectOf(r, 'web')).selector.matchLabels })
  r = await render([web(), node('pdb', 'poddisruptionbudget', { name: 'pdb', selector: { app: 'x' } })], [edge('web', 'pdb')])
  t.same(spec(objectOf(r, 'pdb')).selector, { matchLabels: { app: 'x' } })
})

t.test('configmap/secret → workload: envFrom by default', async (t) => {
  const r = await render([web(), node('cm', 'configmap', { name: 'conf', data: { A: '1' } }), node('s', 'secret', { name: 'creds', keys: ['P'] })], [edge('cm', 'web'), edge('s', 'web')])
  t.same(errors(r), [])
  const c = podSpecOf(objectOf(r, 'web')).containers[0]
  t.same(c.envFrom, [{ configMapRef: { name: 'conf' } }, { secretRef: { name: 'creds' } }])
  t.notOk(podSpecOf(objectOf(r, 'web')).volumes)
})

t.test('configmap/secret → workload: a volume and mount when the node sets mountPath', async (t) => {
  const r = await render([web(), node('cm', 'configmap', { name: 'conf', mountPath: '/etc/app' }), node('s', 'secret', { name: 'creds', mountPath: '/etc/creds' })], [edge('cm', 'web'), edge('s', 'web')])
  const ps = podSpecOf(objectOf(r, 'web'))
  t.same(ps.volumes, [{ name: 'conf', configMap: { name: 'conf' } }, { name: 'creds', secret: { secretName: 'creds' } }])
  t.same(ps.containers[0].volumeMounts, [{ name: 'conf', mountPath: '/etc/app', readOnly: true }, { name: 'creds', mountPath: '/etc/creds', readOnly: true }])
  t.notOk(ps.containers[0].envFrom)
})

t.test('configmap/secret → workload: a volume when the edge\'s target handle asks for one', async (t) => {
  const r = await render([web(), node('cm', 'configmap', { name: 'conf' })], [edge('cm', 'web', { targetHandle: 'volume' })])
  const ps = podSpecOf(objectOf(r, 'web'))
  t.same(ps.volumes, [{ name: 'conf', configMap: { name: 'conf' } }])
  t.same(ps.containers[0].volumeMounts, [{ name: 'conf', mountPath: '/etc/config/conf', readOnly: true }])
})

t.test('persistentvolumeclaim → workload: volume and mount at the claim\'s mountPath; the node\'s own mount wins', async (t) => {
  let r = await render([web(), node('pvc', 'persistentvolumeclaim', { name: 'files', storage: '1Gi', mountPath: '/srv/files' })], [edge('pvc', 'web')])
  t.same(errors(r), [])
  let ps = podSpecOf(objectOf(r, 'web'))
  t.same(ps.volumes, [{ name: 'files', persistentVolumeClaim: { claimName: 'files' } }])
  t.same(ps.containers[0].volumeMounts, [{ name: 'files', mountPath: '/srv/files' }])
  r = await render([web({ volumeMounts: [{ name: 'files', mountPath: '/mine', readOnly: true }] }), node('pvc', 'persistentvolumeclaim', { name: 'files', storage: '1Gi', mountPath: '/srv/files' })], [edge('pvc', 'web')])
  ps = podSpecOf(objectOf(r, 'web'))
  t.same(ps.containers[0].volumeMounts, [{ name: 'files', mountPath: '/mine', readOnly: true }])
})

t.test('persistentvolumeclaim → workload: a claim without mountPath is mounted under /mnt, with a warning', async (t) => {
  const r = await render([web(), node('pvc', 'persistentvolumeclaim', { name: 'files', storage: '1Gi' })], [edge('pvc', 'web')])
  t.same(podSpecOf(objectOf(r, 'web')).containers[0].volumeMounts, [{ name: 'files', mountPath: '/mnt/files' }])
  t.ok(r.diagnostics.some((d) => d.node_id === 'web' && d.severity === 'warning' && /mountPath/.test(d.message)))
})

t.test('serviceaccount → workload: serviceAccountName, also deep inside a CronJob', async (t) => {
  const r = await render([web(), node('cj', 'cronjob', { name: 'cj', image: 'busybox', schedule: '@hourly' }), node('sa', 'serviceaccount', { name: 'robot' })], [edge('sa', 'web'), edge('sa', 'cj')])
  t.same(errors(r), [])
  t.equal(podSpecOf(objectOf(r, 'web')).serviceAccountName, 'robot')
  t.equal(podSpecOf(objectOf(r, 'cj')).serviceAccountName, 'robot')
})

t.test('an edge drawn in reverse is wired the same way', async (t) => {
  const forward = await render([web(), node('svc', 'service', { name: 'web' })], [edge('web', 'svc')])
  const reverse = await render([web(), node('svc', 'service', { name: 'web' })], [edge('svc', 'web')])
  t.same(reverse.objects, forward.objects)
  t.same(reverse.diagnostics, [])
})

t.test('an edge between types that cannot be wired is a warning naming it, and changes nothing', async (t) => {
  const nodes = [node('cm', 'configmap', { name: 'conf' }), node('svc', 'service', { name: 'svc' })]
  const alone = await render(nodes, [])
  const r = await render(nodes, [{ id: 'odd', source: 'cm', target: 'svc' }])
  t.same(r.objects, alone.objects)
  t.same(r.diagnostics, [{ node_id: 'cm', severity: 'warning', message: 'edge "odd": a configmap cannot be wired to a service; the edge has no effect' }])
})

t.test('an edge across namespaces is a warning and is not wired', async (t) => {
  const r = await render([web({ namespace: 'a' }), node('cm', 'configmap', { name: 'conf', namespace: 'b' })], [edge('cm', 'web')])
  t.notOk(podSpecOf(objectOf(r, 'web')).containers[0].envFrom)
  t.ok(r.diagnostics.some((d) => d.severity === 'warning' && /different namespaces/.test(d.message)))
})

t.test('a run\'s namespace override puts both ends in one namespace, so the edge is wired', async (t) => {
  const r = await renderWorkflow({ nodes: [web({ namespace: 'a' }), node('cm', 'configmap', { name: 'conf', namespace: 'b' })], edges: [edge('cm', 'web')] }, ctx({ namespace: 'run-ns' }))
  t.same(podSpecOf(objectOf(r, 'web')).containers[0].envFrom, [{ configMapRef: { name: 'conf' } }])
  t.ok(r.objects.every((o) => o.object.kind === 'Namespace' ? o.object.metadata.name === 'run-ns' : o.object.metadata.namespace === 'run-ns'))
})

t.test('a mountPath with no connected workload is a warning, not silently ignored', async (t) => {
  const r = await render([node('cm', 'configmap', { name: 'conf', mountPath: '/etc/app' }), node('pvc', 'persistentvolumeclaim', { name: 'files', storage: '1Gi', mountPath: '/srv' })], [])
  t.same(r.diagnostics, [
    { node_id: 'cm', severity: 'warning', message: 'mountPath has no effect: no workload is connected' },
    { node_id: 'pvc', severity: 'warning', message: 'mountPath has no effect: no workload is connected' },
  ])
  t.equal(r.objects.length, 2)
})
