// The dry-run diff: readable leaf paths, server bookkeeping ignored, Secret values never shown.
import t from 'tap'
import { diffObjects, HIDDEN, isEmptyDiff, normaliseObject, sameObject } from '../../src/kube/object-diff.ts'

const deployment = (image: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'apps/v1', kind: 'Deployment',
  metadata: { name: 'web', namespace: 'shop', labels: { 'app.kubernetes.io/name': 'web' }, resourceVersion: '12', uid: 'u-1', generation: 3, creationTimestamp: '2026-01-01T00:00:00Z', managedFields: [{ manager: 'x' }] },
  spec: {
    replicas: 2,
    template: { metadata: { creationTimestamp: null, labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image, args: ['--a'] }, { name: 'sidecar', image: 'envoy:1' }] } },
    ...extra,
  },
  status: { readyReplicas: 2 },
})

t.test('leaf paths: keyed by name in named lists, quoted keys, scalar lists whole', async (t) => {
  const d = diffObjects(deployment('nginx:1.27'), deployment('nginx:1.28', { paused: true }))
  t.same(d.changed, [{ path: 'spec.template.spec.containers[name=web].image', old: 'nginx:1.27', new: 'nginx:1.28' }])
  t.same(d.added, [{ path: 'spec.paused', new: true }])
  t.same(d.removed, [])

  const args = diffObjects(deployment('a'), { ...deployment('a'), spec: { ...deployment('a').spec, template: { spec: { containers: [{ name: 'web', image: 'a', args: ['--b', '--c'] }, { name: 'sidecar', image: 'envoy:1' }] }, metadata: { labels: { app: 'web' } } } } })
  t.same(args.changed, [{ path: 'spec.template.spec.containers[name=web].args', old: ['--a'], new: ['--b', '--c'] }])

  const labels = diffObjects({ metadata: { labels: { 'app.kubernetes.io/name': 'a' } } }, { metadata: { labels: { 'app.kubernetes.io/name': 'b' } } })
  t.same(labels.changed.map((c) => c.path), ['metadata.labels["app.kubernetes.io/name"]'])

  const rules = diffObjects({ spec: { rules: [{ host: 'a' }, { host: 'b' }] } }, { spec: { rules: [{ host: 'a' }] } })
  t.same(rules.removed, [{ path: 'spec.rules[1].host', old: 'b' }], 'lists without names are indexed')
})

t.test('server bookkeeping, status, nulls and empty maps are not differences', async (t) => {
  const a = deployment('x')
  const b = { ...deployment('x'), metadata: { ...deployment('x').metadata, resourceVersion: '99', generation: 4, managedFields: [], annotations: { 'deployment.kubernetes.io/revision': '2' } }, status: { readyReplicas: 0 } }
  t.ok(isEmptyDiff(diffObjects(a, b)))
  t.ok(sameObject(a, b))
  t.notOk(sameObject(a, deployment('y')))
  t.same(normaliseObject({ metadata: { name: 'n', annotations: {} }, spec: { x: null, y: [] } }), { metadata: { name: 'n' } })
  t.same(normaliseObject(undefined), {})
})

t.test('Secret values are hidden, changed or not; other strings go through redact', async (t) => {
  const before = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { TOKEN: 'b2xk', KEEP: 'a2VlcA==' }, stringData: { PLAIN: 'hunter2' } }
  const after = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { TOKEN: 'bmV3', NEW: 'eA==' } }
  const d = diffObjects(before, after, { secret: true })
  t.same(d.changed, [{ path: 'data.TOKEN', old: HIDDEN, new: HIDDEN }])
  t.same(d.added, [{ path: 'data.NEW', new: HIDDEN }])
  t.same(d.removed.map((c) => c.old), [HIDDEN, HIDDEN])
  t.notMatch(JSON.stringify(d), /b2xk|bmV3|hunter2|eA==/)

  const env = diffObjects({ spec: { env: [{ name: 'K', value: 'old-secret' }] } }, { spec: { env: [{ name: 'K', value: 'new-secret' }] } }, { redact: (s) => s.replace(/secret/g, '***') })
  t.same(env.changed, [{ path: 'spec.env[name=K].value', old: 'old-***', new: 'new-***' }])
})

t.test('a created object: every leaf added', async (t) => {
  const d = diffObjects(undefined, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { A: '1' } })
  t.same(d.added.map((c) => c.path), ['apiVersion', 'kind', 'metadata.name', 'data.A'])
  t.same([d.changed, d.removed], [[], []])
})
