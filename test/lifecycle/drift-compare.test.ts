// The drift comparator without a cluster: what the baseline keeps, what counts as drift and what does not,
// and that secret values are kept only as digests and shown as "(hidden)".
import t from 'tap'
import fc from 'fast-check'
import { baselineOf, compareObject, nodeFields, reservedLabel, HIDDEN, MISSING, type ObjectBaseline } from '../../src/services/lifecycle/drift/compare.ts'
import { Digester } from '../../src/services/lifecycle/drift/digest.ts'
import { withDrift } from '../../src/services/lifecycle/drift/node-status.ts'
import { redactor } from '../../src/services/run-redaction.ts'
import type { KubeObject } from '../../src/manifests/types.ts'

const key = (n: number) => Buffer.alloc(32, n)
const hasher = new Digester({ current: key(1), old: [] })
const noRedact = (s: string) => s

const rendered: KubeObject = {
  apiVersion: 'apps/v1', kind: 'Deployment',
  metadata: { name: 'web', namespace: 'shop', labels: { app: 'web', team: 'payments' }, annotations: { 'example.com/owner': 'payments' } },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'web', image: 'nginx:1.27', resources: { limits: { cpu: '1000m' } }, env: [{ name: 'MODE', value: 'prod' }], ports: [{ containerPort: 80 }] }] },
    },
  },
}

/** The server's answer: defaults added, a quantity normalised, bookkeeping and status, a controller's label. */
function answer(): KubeObject {
  const live = structuredClone(rendered) as KubeObject & { spec: any } // eslint-disable-line @typescript-eslint/no-explicit-any
  live.metadata = { ...live.metadata, uid: 'u1', resourceVersion: '7', generation: 1, labels: { ...live.metadata.labels, 'applyset.kubernetes.io/part-of': 'x' }, annotations: { ...live.metadata.annotations, 'deployment.kubernetes.io/revision': '1' } }
  live.spec.strategy = { type: 'RollingUpdate' }
  live.spec.template.spec.containers[0].resources.limits.cpu = '1'
  live.spec.template.spec.containers[0].ports[0].protocol = 'TCP'
  live.spec.template.spec.restartPolicy = 'Always'
  live.status = { replicas: 2, readyReplicas: 2 }
  return live
}

const paths = (b: ObjectBaseline) => b.fields.map((f) => f.path)

t.test('the baseline keeps the paths the manifest set, with the server\'s values; defaults and identity are left out', async (t) => {
  const b = baselineOf(rendered, answer(), { redact: noRedact, hasher })
  t.ok(paths(b).includes('spec.template.spec.containers[name=web].image'))
  t.ok(paths(b).includes('spec.template.spec.containers[name=web].env[name=MODE].value'), 'lists of named items are keyed by name')
  t.same(b.fields.find((f) => f.path === 'spec.template.spec.containers[name=web].resources.limits.cpu'), { path: 'spec.template.spec.containers[name=web].resources.limits.cpu', value: '1' }, 'the server\'s normalised value')
  t.notOk(paths(b).some((p) => p.endsWith('.protocol') || p.includes('strategy') || p.includes('restartPolicy')), 'server defaults are not in the baseline')
  t.notOk(paths(b).some((p) => p.startsWith('metadata.name') || p.startsWith('metadata.namespace') || p === 'kind' || p === 'apiVersion' || p.startsWith('status')))
  t.notOk(paths(b).some((p) => p.startsWith('metadata.labels')), 'labels are kept apart, as a map')
  t.same(b.labels.map((l) => l.path).sort(), ['app', 'team'], 'the object\'s labels without the reserved prefixes')
  t.equal(b.scale_target, null)
  t.same(compareObject(b, answer(), { hasher }), { missing: false, fields: [] }, 'the server\'s answer itself is in sync')
})

t.test('what counts as drift', async (t) => {
  const b = baselineOf(rendered, answer(), { redact: noRedact, hasher })
  const changed = answer() as any // eslint-disable-line @typescript-eslint/no-explicit-any
  changed.spec.replicas = 5
  changed.spec.template.spec.containers[0].image = 'nginx:1.28'
  changed.metadata.labels.extra = 'kubectl'
  delete changed.metadata.labels.team
  changed.metadata.labels['node.kubernetes.io/added'] = 'by-a-controller'
  changed.metadata.annotations['other-tool.example/seen'] = 'yes'
  changed.spec.template.spec.containers[0].env = [{ name: 'MODE', value: 'dev' }]
  changed.status.readyReplicas = 0
  changed.metadata.resourceVersion = '99'
  const d = compareObject(b, changed, { hasher })
  t.same(d, {
    missing: false,
    fields: [
      { path: 'metadata.labels.extra', applied: null, live: 'kubectl' },
      { path: 'metadata.labels.team', applied: 'payments', live: null },
      { path: 'spec.replicas', applied: 2, live: 5 },
      { path: 'spec.template.spec.containers[name=web].env[name=MODE].value', applied: 'prod', live: 'dev' },
      { path: 'spec.template.spec.containers[name=web].image', applied: 'nginx:1.27', live: 'nginx:1.28' },
    ],
  }, 'values, labels added and removed; not a reserved label, another tool\'s annotation, status or bookkeeping')
  const ignored = compareObject(b, changed, { hasher, ignore: new Set(['spec.replicas']) })
  t.notOk(ignored.fields.some((f) => f.path === 'spec.replicas'), 'an ignored path (an autoscaler\'s replicas) is not drift')
  const annotated = answer() as any // eslint-disable-line @typescript-eslint/no-explicit-any
  annotated.metadata.annotations['example.com/owner'] = 'someone-else'
  t.same(compareObject(b, annotated, { hasher }).fields, [{ path: 'metadata.annotations["example.com/owner"]', applied: 'payments', live: 'someone-else' }], 'an annotation the manifest set, changed, is drift')
  t.same(compareObject(b, null, { hasher }), { missing: true, fields: [] }, 'an object gone is missing')
  const reordered = answer() as any // eslint-disable-line @typescript-eslint/no-explicit-any
  reordered.spec.template.spec.containers.unshift({ name: 'sidecar', image: 'busybox' })
  t.same(compareObject(b, reordered, { hasher }).fields, [], 'a container added before ours changes no path we set')
})

t.test('secret data and run-time values are kept as digests only and shown hidden', async (t) => {
  const value = 'S3cr3t-DB-pa55word-9f2c'
  const secret: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'shop' }, type: 'Opaque', data: { DB_PASSWORD: Buffer.from(value).toString('base64') }, stringData: { TOKEN: 'plain-token-value' } }
  const live = { ...structuredClone(secret), stringData: undefined, data: { DB_PASSWORD: Buffer.from(value).toString('base64'), TOKEN: Buffer.from('plain-token-value').toString('base64') } } as unknown as KubeObject
  const b = baselineOf(secret, live, { redact: noRedact, hasher })
  const stored = JSON.stringify(b)
  t.notMatch(stored, value)
  t.notMatch(stored, Buffer.from(value).toString('base64'))
  t.notMatch(stored, Buffer.from('plain-token-value').toString('base64'))
  t.same(b.fields.filter((f) => f.digest).map((f) => f.path).sort(), ['data.DB_PASSWORD', 'data.TOKEN'], 'stringData is compared as the data it becomes')
  t.same(compareObject(b, live, { hasher }).fields, [])
  const changed = structuredClone(live) as any // eslint-disable-line @typescript-eslint/no-explicit-any
  changed.data.DB_PASSWORD = Buffer.from('another').toString('base64')
  delete changed.data.TOKEN
  t.same(compareObject(b, changed, { hasher }).fields, [{ path: 'data.DB_PASSWORD', applied: HIDDEN, live: HIDDEN }, { path: 'data.TOKEN', applied: HIDDEN, live: null }])
  // A run-time env value in a Deployment: the run's redactor knows it.
  const env = structuredClone(rendered) as any // eslint-disable-line @typescript-eslint/no-explicit-any
  env.spec.template.spec.containers[0].env.push({ name: 'API_TOKEN', value: 'env-token-77aa41be' })
  const eb = baselineOf(env, env, { redact: redactor(['env-token-77aa41be']), hasher })
  t.notMatch(JSON.stringify(eb), 'env-token-77aa41be')
  const envChanged = structuredClone(env)
  envChanged.spec.template.spec.containers[0].env[1].value = 'leaked-new-value'
  const d = compareObject(eb, envChanged, { hasher })
  t.same(d.fields, [{ path: 'spec.template.spec.containers[name=web].env[name=API_TOKEN].value', applied: HIDDEN, live: HIDDEN }])
  t.notMatch(JSON.stringify(d), 'leaked-new-value')
  // Keys rotate: a digest made with an old key still compares; one whose key is gone is skipped, not drift.
  const rotated = new Digester({ current: key(2), old: [key(1)] })
  t.same(compareObject(b, changed, { hasher: rotated }).fields.map((f) => f.path), ['data.DB_PASSWORD', 'data.TOKEN'])
  const forgotten = new Digester({ current: key(3), old: [] })
  t.same(compareObject(b, changed, { hasher: forgotten }).fields, [{ path: 'data.TOKEN', applied: HIDDEN, live: null }], 'unknown key: only the field gone is certain')
})

t.test('an autoscaler names its scale target; reserved label prefixes', async (t) => {
  const hpa: KubeObject = { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'h' }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: 3 } }
  t.same(baselineOf(hpa, hpa, { redact: noRedact, hasher }).scale_target, { kind: 'Deployment', name: 'web' })
  for (const k of ['kubernetes.io/metadata.name', 'node.kubernetes.io/x', 'k8s.io/y', 'apps.k8s.io/z', 'applyset.kubernetes.io/part-of']) t.ok(reservedLabel(k), k)
  for (const k of ['app', 'example.com/kubernetes.io', 'notkubernetes.io/x', 'team']) t.notOk(reservedLabel(k), k)
})

t.test('node fields and the status overlay', async (t) => {
  t.same(nodeFields([{ missing: false, paths: ['spec.replicas', 'b'] }, { missing: true, paths: [] }, { missing: false, paths: ['b'] }]), [MISSING, 'b', 'spec.replicas'].sort())
  const running = { state: 'running', message: 'ok', ready: '2/2' }
  const drifted = withDrift(running, { detected_at: '2026-01-01T00:00:00.000Z', fields: ['spec.replicas'] })
  t.same(drifted, { state: 'drifted', message: 'ok', ready: '2/2', live_state: 'running', drift: { detected_at: '2026-01-01T00:00:00.000Z', fields: ['spec.replicas'] } })
  t.same(withDrift(drifted, { detected_at: '2026-01-01T00:00:00.000Z', fields: ['x'] }), { ...drifted, drift: { detected_at: '2026-01-01T00:00:00.000Z', fields: ['x'] } }, 'applied again: the newer drift')
  t.same(withDrift(drifted, null), running, 'resolved: the derived status again')
  t.same(withDrift(running, null), running)
})

t.test('property: a baseline compares in sync with its own answer, and any changed leaf it holds is reported at its path', async (t) => {
  const scalar = fc.oneof(fc.string({ minLength: 1, maxLength: 6 }), fc.integer({ min: 0, max: 9 }), fc.boolean())
  const tree = fc.dictionary(fc.constantFrom('a', 'b', 'c', 'image', 'port'), fc.oneof(scalar, fc.dictionary(fc.constantFrom('x', 'y'), scalar, { minKeys: 1 })), { minKeys: 1 })
  fc.assert(fc.property(tree, fc.nat(), (spec, pick) => {
    const obj: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, spec }
    const b = baselineOf(obj, obj, { redact: noRedact, hasher })
    if (compareObject(b, obj, { hasher }).fields.length !== 0) return false
    if (!b.fields.length) return true
    const field = b.fields[pick % b.fields.length]
    const changed = structuredClone(obj) as Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any
    const parts = field.path.split('.')
    let at = changed
    for (const p of parts.slice(0, -1)) at = at[p]
    at[parts.at(-1)!] = typeof field.value === 'string' ? `${field.value}-changed` : 'changed'
    const d = compareObject(b, changed as KubeObject, { hasher })
    return d.fields.length === 1 && d.fields[0].path === field.path
  }), { seed: 26, numRuns: 200 })
  t.pass('200 cases, seed 26')
})
