// The apply engine against the simulated cluster: outcomes per object, dry runs with diffs, and every failure
// mode the issue names (conflict, missing CRD, one object's 500, a failed namespace, an unreachable cluster).
import t from 'tap'
import { KubeConfig, KubernetesObjectApi, PatchStrategy, type KubernetesObject } from '@kubernetes/client-node'
import { deploy, FIELD_MANAGER, limiter, type AppliedObject, type DeployOptions } from '../../src/kube/deploy.ts'
import { renderWorkflow } from '../../src/manifests/index.ts'
import { systemAnnotations, systemLabels } from '../../src/manifests/metadata.ts'
import type { KubeObject, ManifestNode, RenderedObject } from '../../src/manifests/types.ts'
import { startTestCluster } from '../helpers/kube.ts'
import { freePort } from '../helpers/ports.ts'
import { raw } from '../kube-sim/test-helpers.ts'
import { ctx, edge, node } from '../manifests/canvas.ts'

const sim = await startTestCluster(t)
const kc = new KubeConfig()
kc.loadFromString(sim.kubeconfigYaml())
const client = KubernetesObjectApi.makeApiClient(kc)

const SECRET_VALUE = 's3cret-Value-42'

/** A small application: config, secret, deployment and service in one namespace. */
function app(ns: string, over: { image?: string; logLevel?: string; replicas?: number } = {}) {
  const nodes: ManifestNode[] = [
    node('cm', 'configmap', { name: 'web-config', namespace: ns, data: { LOG_LEVEL: over.logLevel ?? 'info' } }),
    node('sec', 'secret', { name: 'web-secret', namespace: ns, secretType: 'Opaque', keys: ['TOKEN'] }),
    node('dep', 'deployment', { name: 'web', namespace: ns, image: over.image ?? 'nginx:1.27', port: 8080, replicas: over.replicas ?? 2 }),
    node('svc', 'service', { name: 'web', namespace: ns, serviceType: 'ClusterIP', port: 80, targetPort: 8080 }),
  ]
  return { nodes, edges: [edge('cm', 'dep'), edge('sec', 'dep'), edge('dep', 'svc')] }
}

async function render(ns: string, over: Parameters<typeof app>[1] = {}, workflowId = `wf-${ns}`, secret = SECRET_VALUE): Promise<RenderedObject[]> {
  const r = await renderWorkflow(app(ns, over), ctx({ workflowId, revealSecrets: true, secrets: { sec: { TOKEN: secret } } }))
  const errors = r.diagnostics.filter((d) => d.severity === 'error')
  if (errors.length) throw new Error(`render errors: ${JSON.stringify(errors)}`)
  return r.objects
}

function byKind(objects: AppliedObject[]): Record<string, AppliedObject> {
  return Object.fromEntries(objects.map((o) => [o.kind, o]))
}

async function exists(apiVersion: string, kind: string, name: string, namespace?: string): Promise<boolean> {
  return client.read({ apiVersion, kind, metadata: { name, ...(namespace && { namespace }) } }).then(() => true, (err: { code?: number }) => {
    if (err.code === 404) return false
    throw err
  })
}

const redact = (s: string) => s.split(SECRET_VALUE).join('***')

t.test('created, then unchanged, then only the changed object configured', async (t) => {
  const ns = 'apply-basic'
  const objects = await render(ns)
  const seen: AppliedObject[] = []
  const lines: string[] = []
  const opts: DeployOptions = { workflowId: `wf-${ns}`, onObject: (r) => seen.push(r), log: (l) => lines.push(l), redact }
  const first = await deploy(kc, objects, opts)
  t.equal(first.error, null)
  t.same(first.objects.map((o) => [o.kind, o.action]), [['Namespace', 'created'], ['ConfigMap', 'created'], ['Secret', 'created'], ['Deployment', 'created'], ['Service', 'created']])
  t.same(first.namespaces, [ns])
  t.equal(seen.length, 5, 'onObject for every object')
  const dep = byKind(first.objects).Deployment
  t.match(dep, { node_id: 'dep', api_version: 'apps/v1', name: 'web', namespace: ns, uid: /.+/, resource_version: /^\d+$/ })
  t.equal(dep.live?.metadata.managedFields, undefined, 'live object without managedFields')
  t.equal(byKind(first.objects).Namespace.namespace, null, 'a Namespace is cluster-scoped')
  const live = await client.read({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: ns } })
  t.ok(live.metadata?.managedFields?.some((f) => f.manager === FIELD_MANAGER && f.operation === 'Apply'), 'applied with our field manager')

  const again = await deploy(kc, objects, opts)
  t.same(again.objects.map((o) => o.action), ['unchanged', 'unchanged', 'unchanged', 'unchanged', 'unchanged'], 'an identical re-run changes nothing')
  t.equal(byKind(again.objects).Deployment.live?.metadata.generation, dep.live?.metadata.generation, 'its spec was not written (status updates by controllers aside)')

  const changed = await deploy(kc, await render(ns, { image: 'nginx:1.28' }), opts)
  t.same(changed.objects.map((o) => [o.kind, o.action]), [['Namespace', 'unchanged'], ['ConfigMap', 'unchanged'], ['Secret', 'unchanged'], ['Deployment', 'configured'], ['Service', 'unchanged']])
  const results = JSON.stringify([first, again, changed].map((r) => r.objects.map(({ live: _, ...o }) => o)))
  t.notOk(results.includes(SECRET_VALUE) || lines.join('\n').includes(SECRET_VALUE), 'no secret value in results (live aside) or log lines')
  t.ok(lines.some((l) => /run finished in \d+ ms: 0 created, 1 configured, 4 unchanged/.test(l)), 'a summary line')
})

t.test('dry run: nothing changes in the cluster; the diff names the changed fields; Secret values hidden', async (t) => {
  const ns = 'apply-dry'
  const fresh = await deploy(kc, await render(ns), { workflowId: `wf-${ns}`, dryRun: true, redact })
  t.same(fresh.objects.map((o) => o.action), ['created', 'created', 'created', 'created', 'created'], 'every object would be created')
  t.equal(fresh.pruned.length, 0)
  t.notOk(await exists('v1', 'Namespace', ns), 'the namespace was not created')
  t.notOk(await exists('apps/v1', 'Deployment', 'web', ns), 'nor the deployment')
  t.notOk(JSON.stringify(fresh).includes(SECRET_VALUE), 'the secret value is nowhere in a dry-run answer')
  t.ok(byKind(fresh.objects).Deployment.diff?.added.some((c) => c.path === 'spec.template.spec.containers[name=web].image' && c.new === 'nginx:1.27'), 'a created object lists its fields as added')

  await deploy(kc, await render(ns), { workflowId: `wf-${ns}` })
  const before = await client.read({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: ns } })
  const dry = await deploy(kc, await render(ns, { image: 'nginx:1.29', logLevel: 'debug' }, `wf-${ns}`, 'another-secret'), { workflowId: `wf-${ns}`, dryRun: true })
  const r = byKind(dry.objects)
  t.same([r.Namespace.action, r.ConfigMap.action, r.Secret.action, r.Deployment.action, r.Service.action], ['unchanged', 'configured', 'configured', 'configured', 'unchanged'])
  t.same(r.Deployment.diff?.changed, [{ path: 'spec.template.spec.containers[name=web].image', old: 'nginx:1.27', new: 'nginx:1.29' }])
  t.same(r.ConfigMap.diff?.changed, [{ path: 'data.LOG_LEVEL', old: 'info', new: 'debug' }])
  t.same(r.Secret.diff?.changed, [{ path: 'data.TOKEN', old: '(hidden)', new: '(hidden)' }], 'a Secret change is named, its values are not')
  t.same(r.Service.diff, { changed: [], added: [], removed: [] })
  t.match(r.Deployment.message, /would be configured/)
  const after = await client.read({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: ns } })
  t.equal(after.metadata?.generation, before.metadata?.generation, 'the live deployment spec is untouched')
  t.equal((after as KubernetesObject & { spec: { template: { spec: { containers: Array<{ image: string }> } } } }).spec.template.spec.containers[0].image, 'nginx:1.27')
  const cm = await client.read({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web-config', namespace: ns } }) as KubernetesObject & { data?: Record<string, string> }
  t.equal(cm.data?.LOG_LEVEL, 'info')
})

t.test('a field-manager conflict fails that object naming the other manager; force takes the field over', async (t) => {
  const ns = 'apply-conflict'
  const objects = await render(ns)
  await deploy(kc, objects, { workflowId: `wf-${ns}` })
  // Another tool takes spec.replicas (force: it conflicts with us just as we will with it).
  await client.patch({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: ns }, spec: { replicas: 5 } } as KubernetesObject, undefined, undefined, 'ops-console', true, PatchStrategy.ServerSideApply)
  const refused = await deploy(kc, objects, { workflowId: `wf-${ns}` })
  const dep = byKind(refused.objects).Deployment
  t.equal(dep.action, 'failed')
  t.match(dep.message, /"ops-console"/, 'names the other manager')
  t.match(dep.message, /\.spec\.replicas/, 'names the field')
  t.match(dep.message, /force: true/, 'says what to do')
  t.notMatch(dep.message, /\n/)
  t.same(refused.objects.filter((o) => o.kind !== 'Deployment').map((o) => o.action), ['unchanged', 'unchanged', 'unchanged', 'unchanged'], 'the others still report their outcome')
  t.equal(refused.error, null)

  const forced = await deploy(kc, objects, { workflowId: `wf-${ns}`, force: true })
  t.equal(byKind(forced.objects).Deployment.action, 'configured')
  const live = await client.read({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: ns } }) as KubernetesObject & { spec: { replicas: number } }
  t.equal(live.spec.replicas, 2, 'our value is back')
})

t.test('a custom resource whose CRD is not installed fails with the operator message; once installed it applies', async (t) => {
  const ns = 'apply-crd'
  const objects = await render(ns)
  const kafka: KubeObject = { apiVersion: 'kafka.strimzi.io/v1beta2', kind: 'Kafka', metadata: { name: 'events', namespace: ns, labels: { 'app.kubernetes.io/managed-by': FIELD_MANAGER } }, spec: { kafka: { replicas: 1 } } }
  const withCr = [...objects, { node_id: 'kafka', object: kafka }]
  const missing = await deploy(kc, withCr, { workflowId: `wf-${ns}` })
  const cr = missing.objects.at(-1)!
  t.equal(cr.action, 'failed')
  t.match(cr.message, /Kafka/)
  t.match(cr.message, /kafka\.strimzi\.io\/v1beta2/)
  t.match(cr.message, /install the operator/)
  t.same(missing.objects.slice(0, -1).map((o) => o.action), ['created', 'created', 'created', 'created', 'created'], 'the built-in objects are applied')
  t.equal(missing.pruned.length, 0)

  const custom = await deploy(kc, withCr, { workflowId: `wf-${ns}`, missingApiMessage: (o, id) => `node ${id}: install Strimzi for ${o.kind}` })
  t.equal(custom.objects.at(-1)!.message, 'node kafka: install Strimzi for Kafka')

  await client.create({
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'kafkas.kafka.strimzi.io' },
    spec: { group: 'kafka.strimzi.io', scope: 'Namespaced', names: { plural: 'kafkas', singular: 'kafka', kind: 'Kafka', listKind: 'KafkaList' }, versions: [{ name: 'v1beta2', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }] },
  } as KubernetesObject)
  const installed = await deploy(kc, withCr, { workflowId: `wf-${ns}` })
  t.equal(installed.objects.at(-1)!.action, 'created', 'discovery is asked again on the next deploy')
})

t.test('a 500 on one object fails only that object', async (t) => {
  const ns = 'apply-500'
  const objects = await render(ns)
  sim.faults.failNext(1, 500, { pathPrefix: `/api/v1/namespaces/${ns}/configmaps/web-config`, method: 'PATCH' })
  const r = await deploy(kc, objects, { workflowId: `wf-${ns}` })
  t.equal(r.error, null)
  t.same(r.objects.map((o) => [o.kind, o.action]), [['Namespace', 'created'], ['ConfigMap', 'failed'], ['Secret', 'created'], ['Deployment', 'created'], ['Service', 'created']])
  t.match(byKind(r.objects).ConfigMap.message, /the cluster answered 500/)
  t.equal(r.pruned.length, 0, 'no prune after a failed object')
  t.notOk(await exists('v1', 'ConfigMap', 'web-config', ns))
})

t.test('a namespace that fails skips the objects in it', async (t) => {
  const ns = 'apply-ns-fail'
  sim.faults.failNext(1, 403, { pathPrefix: `/api/v1/namespaces/${ns}`, method: 'PATCH', message: 'namespaces is forbidden' })
  const r = await deploy(kc, await render(ns), { workflowId: `wf-${ns}` })
  t.same(r.objects.map((o) => o.action), ['failed', 'skipped', 'skipped', 'skipped', 'skipped'])
  t.match(byKind(r.objects).Namespace.message, /403/)
  t.match(byKind(r.objects).Deployment.message, new RegExp(`namespace ${ns} could not be applied`))
  t.equal(r.error, null)
})

t.test('an unreachable cluster: every object failed with one message, the run error set, quickly', async (t) => {
  const port = await freePort()
  const dead = new KubeConfig()
  dead.loadFromString(sim.kubeconfigYaml().replace(sim.url, `https://127.0.0.1:${port}`))
  const started = Date.now()
  const r = await deploy(dead, await render('apply-dead'), { workflowId: 'wf-dead', requestTimeoutMs: 2000 })
  t.ok(Date.now() - started < 3000, `gave up in ${Date.now() - started} ms`)
  t.match(r.error, /cannot reach the cluster: connection refused/)
  t.same(r.objects.map((o) => o.action), ['failed', 'failed', 'failed', 'failed', 'failed'])
  t.same(new Set(r.objects.map((o) => o.message)).size, 1, 'one message')
  t.notMatch(r.error, String(port), 'no raw error text (address) in the message')
})

t.test('a cluster that stops answering mid-run: the rest fail with the run error, nothing hangs', async (t) => {
  const ns = 'apply-timeout'
  sim.faults.setLatency(1500)
  t.teardown(() => sim.faults.reset())
  const r = await deploy(kc, await render(ns), { workflowId: `wf-${ns}`, requestTimeoutMs: 300 })
  t.match(r.error, /timed out/)
  t.ok(r.objects.every((o) => o.action === 'failed'))
})

t.test('the simulator still answers plainly (the faults above were consumed)', async (t) => {
  t.equal((await raw(sim, 'GET', '/api/v1/namespaces/default')).status, 200)
})

t.test('an object that already exists (made by someone else) is not changed; adopted (when allowed) it is configured, then ours', async (t) => {
  await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'preexisting', namespace: 'default' }, data: { OTHER: 'x' } } as KubernetesObject)
  const object: KubeObject = {
    apiVersion: 'v1', kind: 'ConfigMap',
    metadata: { name: 'preexisting', namespace: 'default', labels: systemLabels(), annotations: systemAnnotations('wf-pre', 'cm') }, data: { MINE: 'y' },
  }
  const refused = await deploy(kc, [{ node_id: 'cm', object }], { workflowId: 'wf-pre' })
  t.equal(refused.objects[0].action, 'failed')
  t.match(refused.objects[0].message, /^conflict \(409\): ConfigMap preexisting \(namespace default\) exists and was not made by this service; not changed.*adopt: true/)
  const notAllowed = await deploy(kc, [{ node_id: 'cm', object }], { workflowId: 'wf-pre', adopt: true, mayAdopt: () => false })
  t.match(notAllowed.objects[0].message, /only the cluster's owner may adopt/)
  const untouched = await client.read({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'preexisting', namespace: 'default' } }) as KubernetesObject & { data?: Record<string, string> }
  t.same(untouched.data, { OTHER: 'x' }, 'the cluster object is unchanged')

  const asked: Array<string | null> = []
  const r = await deploy(kc, [{ node_id: 'cm', object }], { workflowId: 'wf-pre', adopt: true, mayAdopt: (o) => { asked.push(o); return true } })
  t.equal(r.objects[0].action, 'configured')
  t.match(r.objects[0].message, /adopted \(it was not made by this service\)/)
  t.same(asked, [null], 'asked once, about an unmanaged object')
  const absent: KubeObject = { ...object, metadata: { ...object.metadata, name: 'brand-new', annotations: systemAnnotations('wf-pre', 'new') } }
  const again = await deploy(kc, [{ node_id: 'cm', object }, { node_id: 'new', object: absent }], { workflowId: 'wf-pre' })
  t.same(again.objects.map((o) => o.action), ['unchanged', 'created'], 'adopted, it is ours: unchanged without adopt; a new one side by side')
})

t.test('failure messages go through redact', async (t) => {
  const ns = 'apply-redact'
  sim.faults.failNext(1, 422, { pathPrefix: `/api/v1/namespaces/${ns}/secrets/web-secret`, method: 'PATCH', message: `Secret "web-secret" is invalid: data[TOKEN]: Invalid value: "${SECRET_VALUE}"` })
  const lines: string[] = []
  const r = await deploy(kc, await render(ns), { workflowId: `wf-${ns}`, redact, log: (l) => lines.push(l) })
  const secret = byKind(r.objects).Secret
  t.equal(secret.action, 'failed')
  t.match(secret.message, /the cluster answered 422.*Invalid value: "\*\*\*"/)
  t.notOk(JSON.stringify(r.objects.map(({ live: _, ...o }) => o)).includes(SECRET_VALUE) || lines.join('\n').includes(SECRET_VALUE))
})

t.test('a cluster that goes away mid-run: the objects already applied keep their outcome, the rest fail with the run error', async (t) => {
  const ns = 'apply-gone'
  let stopping: Promise<void> | undefined
  t.teardown(() => sim.faults.restart())
  const started = Date.now()
  const r = await deploy(kc, await render(ns), {
    workflowId: `wf-${ns}`, requestTimeoutMs: 2000,
    onObject: (o) => { if (o.kind === 'Namespace') stopping = sim.faults.stop() },
  })
  await stopping
  t.ok(Date.now() - started < 3000, `gave up in ${Date.now() - started} ms`)
  t.equal(r.objects[0].action, 'created', 'the namespace was applied before the cluster went away')
  t.same(r.objects.slice(1).map((o) => o.action), ['failed', 'failed', 'failed', 'failed'])
  t.match(r.error, /cannot reach the cluster/)
  t.ok(r.objects.slice(1).every((o) => o.message.includes(r.error!)), 'each failure carries the run error')
  t.same(r.pruned, [])
})

t.test('every request-making step goes through opts.schedule, within its bound', async (t) => {
  const ns = 'apply-schedule'
  const bound = limiter(2)
  let active = 0
  let peak = 0
  let calls = 0
  const schedule = <T>(task: () => Promise<T>): Promise<T> => bound(async () => {
    calls++
    peak = Math.max(peak, ++active)
    try { return await task() } finally { active-- }
  })
  const r = await deploy(kc, await render(ns), { workflowId: `wf-${ns}`, schedule })
  t.same(r.objects.map((o) => o.action), ['created', 'created', 'created', 'created', 'created'])
  t.ok(calls >= r.objects.length, `${calls} scheduled tasks for ${r.objects.length} objects`)
  t.ok(peak <= 2, `at most 2 at once (peak ${peak})`)
  t.ok(peak === 2, 'and the bound is used')
})

t.test('an existing namespace is left as it is, so two workflows sharing it do not take turns re-annotating it', async (t) => {
  const first = await deploy(kc, await render('shared', {}, 'wf-one'), { workflowId: 'wf-one' })
  t.equal(byKind(first.objects).Namespace.action, 'created')
  const annotations = async () => (await client.read({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shared' } })).metadata?.annotations ?? {}
  const before = await annotations()
  const second = await deploy(kc, (await render('shared', {}, 'wf-two')).filter((o) => o.object.kind === 'Namespace' || o.object.kind === 'ConfigMap').map((o) => (o.object.kind === 'ConfigMap' ? { ...o, object: { ...o.object, metadata: { ...o.object.metadata, name: 'other-config' } } } : o)), { workflowId: 'wf-two' })
  t.match(byKind(second.objects).Namespace, { action: 'unchanged', message: /exists/ })
  t.equal(byKind(second.objects).ConfigMap.action, 'created', 'the other workflow\'s objects still go into it')
  t.same(await annotations(), before, 'the namespace keeps the first workflow\'s annotations')
  const again = await deploy(kc, await render('shared', {}, 'wf-one'), { workflowId: 'wf-one' })
  t.equal(byKind(again.objects).Namespace.action, 'unchanged')
})

t.test('a namespace being deleted fails its node and skips the objects in it', async (t) => {
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'leaving', finalizers: ['example.com/hold'] } } as KubernetesObject)
  await client.delete({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'leaving' } } as KubernetesObject)
  const phase = (await client.read({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'leaving' } }) as KubernetesObject & { status?: { phase?: string } }).status?.phase
  t.equal(phase, 'Terminating', 'the finalizer holds the namespace in Terminating')
  const result = await deploy(kc, await render('leaving'), { workflowId: 'wf-leaving' })
  t.match(byKind(result.objects).Namespace, { action: 'failed', message: /being deleted/ })
  t.equal(byKind(result.objects).Deployment.action, 'skipped')
})
