// Every built-in node type renders, from a realistic canvas, to objects that match the Kubernetes schema,
// carry the service's label and annotations, and reflect every field of the node's data schema.
import t from 'tap'
import { NodeDataSchemas, NODE_TYPES } from '../../schemas/nodes.ts'
import { NODE_TYPE_INFO, validateNode } from '../../src/services/node-catalogue.ts'
import { renderWorkflow, MANAGED_BY, MANAGED_BY_LABEL, NODE_ID_ANNOTATION, WORKFLOW_ID_ANNOTATION, NAME_LABEL, INSTANCE_LABEL } from '../../src/manifests/index.ts'
import type { ManifestEdge, ManifestNode } from '../../src/manifests/types.ts'
import { ctx, edge, fullCanvas, node, sampleData, WORKFLOW_ID } from './canvas.ts'
import { validateObject } from './models.ts'

const BUILT_IN = NODE_TYPES.filter((type) => type !== 'plugin')
const WORKLOADS = ['deployment', 'statefulset', 'daemonset', 'replicaset', 'pod', 'job', 'cronjob']

t.test('each built-in type renders from its canvas to valid objects of its kind with our labels and annotations', async (t) => {
  const canvas = fullCanvas()
  const result = await renderWorkflow(canvas, ctx())
  t.same(result.diagnostics.filter((d) => d.severity === 'error'), [], 'no errors')
  for (const type of BUILT_IN) {
    const mine = result.objects.filter((o) => o.node_id === `n-${type}` && o.object.kind !== 'Namespace')
    t.equal(mine.length, 1, `${type}: one object`)
    const { object } = mine[0]
    t.equal(object.kind, NODE_TYPE_INFO[type].kind, `${type} → ${NODE_TYPE_INFO[type].kind}`)
    t.doesNotThrow(() => validateObject(object), `${type}: matches the Kubernetes schema`)
    t.equal(object.metadata.labels?.[MANAGED_BY_LABEL], MANAGED_BY, `${type}: managed-by label`)
    t.equal(object.metadata.labels?.[NAME_LABEL], sampleData()[type].name, `${type}: name label`)
    t.equal(object.metadata.labels?.[INSTANCE_LABEL], WORKFLOW_ID, `${type}: instance label`)
    t.equal(object.metadata.annotations?.[WORKFLOW_ID_ANNOTATION], WORKFLOW_ID, `${type}: workflow annotation`)
    t.equal(object.metadata.annotations?.[NODE_ID_ANNOTATION], `n-${type}`, `${type}: node annotation`)
    t.equal(object.metadata.labels?.team, 'payments', `${type}: user label kept`)
  }
  t.match(MANAGED_BY, /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'managed-by is a valid label value')
})

t.test('each type rendered alone from minimal data validates too', async (t) => {
  const minimal: Record<string, Record<string, unknown>> = {
    deployment: { name: 'a', image: 'nginx' }, statefulset: { name: 'a', image: 'nginx' }, daemonset: { name: 'a', image: 'nginx' },
    replicaset: { name: 'a', image: 'nginx' }, pod: { name: 'a', image: 'nginx' }, job: { name: 'a', image: 'nginx' },
    cronjob: { name: 'a', image: 'nginx', schedule: '@daily' }, service: { name: 'a' }, ingress: { name: 'a', paths: [{ path: '/', serviceName: 'x', servicePort: 80 }] },
    configmap: { name: 'a' }, secret: { name: 'a' }, persistentvolumeclaim: { name: 'a', storage: '1Gi' }, hpa: { name: 'a', maxReplicas: 3 },
    networkpolicy: { name: 'a', podSelector: { app: 'a' } }, serviceaccount: { name: 'a' }, poddisruptionbudget: { name: 'a', selector: { app: 'a' }, maxUnavailable: 1 },
  }
  for (const type of BUILT_IN) {
    const nodes = [node('n', type, minimal[type])]
    const edges: ManifestEdge[] = []
    if (type === 'hpa') { nodes.push(node('w', 'deployment', { name: 'w', image: 'nginx' })); edges.push(edge('w', 'n')) }
    const result = await renderWorkflow({ nodes, edges }, ctx())
    t.same(result.diagnostics.filter((d) => d.severity === 'error'), [], `${type}: no errors`)
    const object = result.objects.find((o) => o.node_id === 'n')?.object
    t.ok(object, `${type}: rendered`)
    if (object) t.doesNotThrow(() => validateObject(object), `${type}: valid`)
    t.notOk(result.objects.some((o) => o.object.kind === 'Namespace'), `${type}: no Namespace object for default`)
  }
})

t.test('missing or invalid required data is a per-node error naming the field, and the node renders nothing', async (t) => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['deployment', { name: 'a' }, /^image:/],
    ['deployment', { image: 'nginx' }, /^name:/],
    ['deployment', { name: 'a', image: 'nginx', port: 'http' }, /^port:/],
    ['cronjob', { name: 'a', image: 'nginx' }, /^schedule:/],
    ['persistentvolumeclaim', { name: 'a', storage: 'lots' }, /^storage:/],
    ['hpa', { name: 'a' }, /^maxReplicas:/],
    ['service', { name: 'Not_A_Name' }, /^name:/],
    ['service', { name: 'a', serviceType: 'ExternalName' }, /^externalName:/],
    ['ingress', { name: 'a' }, /^paths:/],
    ['deployment', { name: 'a', image: 'nginx', labels: { 'bad key!': 'x' } }, /^labels: key "bad key!"/],
    ['deployment', { name: 'a', image: 'nginx', env: [{ name: 'A=B', value: '1' }] }, /^env\/0\/name:/],
    ['deployment', { name: 'a', image: 'nginx', volumeMounts: [{ name: 'nowhere', mountPath: '/x' }] }, /^volumeMounts\/0\/name: no volume named "nowhere"/],
    ['configmap', { name: 'a', data: { 'bad key': 'v' } }, /^data: "bad key"/],
    ['poddisruptionbudget', { name: 'a', selector: { a: 'b' }, minAvailable: 1, maxUnavailable: 1 }, /minAvailable and maxUnavailable/],
    ['hpa', { name: 'a', maxReplicas: 2, minReplicas: 3 }, /^minReplicas:/],
  ]
  for (const [type, data, message] of cases) {
    const nodes = [node('bad', type, data), node('ok', 'configmap', { name: 'fine' })]
    const edges = type === 'hpa' ? (nodes.push(node('w', 'deployment', { name: 'w', image: 'nginx' })), [edge('w', 'bad')]) : []
    const result = await renderWorkflow({ nodes, edges }, ctx())
    const errors = result.diagnostics.filter((d) => d.node_id === 'bad' && d.severity === 'error')
    t.ok(errors.some((e) => message.test(e.message)), `${type} ${JSON.stringify(data)}: error matches ${message} (got ${JSON.stringify(errors.map((e) => e.message))})`)
    t.notOk(result.objects.some((o) => o.node_id === 'bad'), `${type}: nothing rendered for the bad node`)
    t.ok(result.objects.some((o) => o.node_id === 'ok'), `${type}: the other node still renders`)
  }
})

// One alternative value per field; `${type}.${field}` entries win over plain field names, and `base` entries
// set what a field needs around it to matter (an ExternalName service for externalName, ...).
const VARIANTS: Record<string, unknown> = {
  name: 'renamed', namespace: 'elsewhere', labels: { team: 'payments', tier: 'gold' }, annotations: { 'acme.io/extra': 'y' },
  image: 'nginx:1.27', port: 9090, env: [{ name: 'EXTRA', value: '1' }], command: ['/bin/other'], args: ['--other'],
  resources: { limits: { memory: '1Gi' } }, readinessProbe: { tcpSocket: { port: 8080 } }, livenessProbe: { exec: { command: ['true'] } }, volumeMounts: [{ name: 'uploads', mountPath: '/elsewhere', readOnly: true }],
  imagePullPolicy: 'Always', replicas: 7, 'pod.restartPolicy': 'OnFailure', 'job.restartPolicy': 'OnFailure', 'cronjob.restartPolicy': 'Never',
  serviceName: 'db-gov', 'statefulset.storage': '20Gi', 'persistentvolumeclaim.storage': '50Gi', storageClassName: 'premium',
  completions: 4, parallelism: 2, backoffLimit: 0, schedule: '0 * * * *', concurrencyPolicy: 'Replace', suspend: true,
  serviceType: 'NodePort', 'service.port': 8081, targetPort: 'http', ports: [{ name: 'http', port: 81 }], 'service.selector': { app: 'x' },
  externalName: 'b.example.com', host: 'other.example.com', paths: [{ path: '/v2', serviceName: 'api-svc', servicePort: 80 }],
  ingressClassName: 'traefik', tlsEnabled: false, tlsSecretName: 'other-tls', data: { K: 'v' }, 'configmap.mountPath': '/etc/app',
  secretType: 'acme.io/custom', keys: ['OTHER'], 'secret.mountPath': '/etc/secret', accessModes: ['ReadWriteMany'],
  'persistentvolumeclaim.mountPath': '/data2', minReplicas: 3, maxReplicas: 20, targetCPUUtilization: 50, targetMemoryUtilization: 60,
  podSelector: { role: 'db' }, policyTypes: ['Ingress'], ingress: [], egress: [], automountServiceAccountToken: true,
  imagePullSecrets: ['other'], minAvailable: '50%', maxUnavailable: 2, 'poddisruptionbudget.selector': { app: 'x' },
}
const BASE: Record<string, Record<string, unknown>> = {
  'service.externalName': { serviceType: 'ExternalName', externalName: 'a.example.com', selector: undefined },
  'poddisruptionbudget.maxUnavailable': { minAvailable: undefined, maxUnavailable: 1 },
}

function fieldCanvas(type: string, patch: Record<string, unknown>): { nodes: ManifestNode[]; edges: ManifestEdge[] } {
  const canvas = fullCanvas()
  // Every workload mounts the claim, so a volumeMount naming it is valid on each.
  for (const w of WORKLOADS) if (w !== 'deployment') canvas.edges.push(edge('n-persistentvolumeclaim', `n-${w}`))
  // Moving one node out of its neighbours' namespace would cut its edges, so the whole canvas moves.
  if (patch.namespace !== undefined) for (const n of canvas.nodes) n.data = { ...n.data, namespace: patch.namespace }
  // A workload's replicas count only when no autoscaler owns them: the HPA scales another workload meanwhile.
  if (patch.replicas !== undefined) {
    const other = type === 'replicaset' ? 'n-statefulset' : 'n-replicaset'
    canvas.edges = canvas.edges.map((e) => (e.source === `n-${type}` && e.target === 'n-hpa' ? { ...e, source: other } : e))
  }
  const target = canvas.nodes.find((n) => n.id === `n-${type}`)!
  const data = { ...target.data, ...patch }
  for (const [k, v] of Object.entries(data)) if (v === undefined) delete data[k]
  target.data = data
  return canvas
}

t.test('every field of every node type\'s data schema changes the rendered output', async (t) => {
  let fields = 0
  for (const type of BUILT_IN) {
    const properties = Object.keys((NodeDataSchemas[type] as { properties: Record<string, unknown> }).properties)
    for (const field of properties) {
      const key = `${type}.${field}`
      const variant = Object.hasOwn(VARIANTS, key) ? VARIANTS[key] : VARIANTS[field]
      if (!t.not(variant, undefined, `${key} has a variant value`)) continue
      const base = fieldCanvas(type, BASE[key] ?? {})
      const changed = fieldCanvas(type, { ...BASE[key], [field]: variant })
      t.same(validateNode(changed.nodes.find((n) => n.id === `n-${type}`)!), [], `${key}: the variant is valid data`)
      const before = await renderWorkflow(base, ctx())
      const after = await renderWorkflow(changed, ctx())
      t.same(before.diagnostics.filter((d) => d.severity === 'error'), [], `${key}: base renders without error`)
      t.same(after.diagnostics.filter((d) => d.severity === 'error'), [], `${key}: variant renders without error`)
      t.not(JSON.stringify(after.objects), JSON.stringify(before.objects), `${key} reaches the manifests`)
      fields++
    }
  }
  t.ok(fields > 100, `${fields} fields checked`)
})
