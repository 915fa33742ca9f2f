// Drift detection end to end (API.md §12): a workflow deployed to the simulator, then changed behind the
// service's back with the real kubectl. Each change shows as drift (bus event, stream event, the node's
// status, GET /drift with path, applied and live values); POST /sync (or putting it back) resolves it.
// What is not drift is proven by a check that ran and reported nothing, never by an event that did not come.
import t from 'tap'
import { runFixture, node, edge, SECRET_VALUE } from '../runs/fixture.ts'
import { nextBusEvent } from '../helpers/bus.ts'
import { listen, openStream, type SseStream } from '../streams/sse-client.ts'
import { EventBus } from '../../src/events/bus.ts'
import { WorkflowRepository } from '../../src/repositories/workflows.ts'
import { DriftBaselineRepository } from '../../src/repositories/drift-baselines.ts'
import { DriftStateRepository } from '../../src/repositories/drift-states.ts'
import { DriftService } from '../../src/services/lifecycle/drift/drift-service.ts'
import { Digester } from '../../src/services/lifecycle/drift/digest.ts'
import { resourceReader } from '../../src/kube/resource-reader.ts'

const f = await runFixture(t, { SSE_HEARTBEAT_MS: 15_000, LOG_LEVEL: 'info' }, { timing: { podStartMs: 50, podReadyMs: 50 } })
t.setTimeout(90_000)
const { app, owner, call } = f
const NS = 'drift'
const trigger = { secrets: { 'n-secret': { DB_PASSWORD: SECRET_VALUE } } }
const b64 = (s: string) => Buffer.from(s).toString('base64')

const id = await f.workflow({
  nodes: [
    node('n-secret', 'secret', { name: 'api-secrets', namespace: NS, secretType: 'Opaque', keys: ['DB_PASSWORD'] }),
    node('n-config', 'configmap', { name: 'api-config', namespace: NS, data: { MODE: 'prod' } }),
    node('n-api', 'deployment', { name: 'api', namespace: NS, image: 'nginx:1.27', port: 8080, replicas: 1, labels: { team: 'payments' } }),
    node('n-auto', 'deployment', { name: 'auto', namespace: NS, image: 'nginx:1.27', port: 8080 }),
    node('n-hpa', 'hpa', { name: 'auto-hpa', namespace: NS, minReplicas: 1, maxReplicas: 5, targetCPUUtilization: 70 }),
  ],
  edges: [edge('n-secret', 'n-api'), edge('n-config', 'n-api'), edge('n-auto', 'n-hpa')],
}, 'drifty')

const first = await call(owner, 'POST', `/v1/api/workflows/${id}/run`, { trigger_data: trigger })
if (first.status !== 200 || first.body.status !== 'completed') throw new Error(`run: ${first.status} ${JSON.stringify(first.body)}`)
const base = await listen(app)
const stream: SseStream = await openStream(base, `/v1/api/workflows/${id}/status/stream`, { authorization: `Bearer ${owner.token}` })
t.teardown(() => stream.close())
await stream.until('metadata', (e) => e.length >= 1)
const clusterId = (await app.db.collection('drift_baselines').findOne({ workflow_id: id }))!.cluster_id as string
const container = (await f.kubectlJson('-n', NS, 'get', 'deployment', 'api')).spec.template.spec.containers[0].name as string

const detected = (node: string, what: string, pred: (fields: string[]) => boolean = () => true) =>
  nextBusEvent(app, 'drift.detected', `drift.detected of ${node} (${what})`, (e) => e.workflow_id === id && e.node_id === node && pred(e.fields))
const resolved = (node: string) => nextBusEvent(app, 'drift.resolved', `drift.resolved of ${node}`, (e) => e.workflow_id === id && e.node_id === node)
const report = async () => {
  const res = await call(owner, 'GET', `/v1/api/workflows/${id}/drift`)
  if (res.status !== 200) throw new Error(`drift: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body as { nodes: Array<{ node_id: string; objects: Array<{ kind: string; name: string; namespace: string; missing: boolean; fields: Array<{ path: string; applied: unknown; live: unknown }> }> }>; checked_at: string }
}
const nodeStatus = async (nodeId: string) => (await call(owner, 'GET', `/v1/api/workflows/${id}`)).body.nodes.find((n: { id: string }) => n.id === nodeId).data._status
const sync = async () => {
  const res = await call(owner, 'POST', `/v1/api/workflows/${id}/sync`, { trigger_data: trigger })
  if (res.status !== 200) throw new Error(`sync: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body
}

t.test('right after the run: baselines stored, no drift, no secret in them', async (t) => {
  const docs = await app.db.collection('drift_baselines').find({ workflow_id: id }).toArray()
  t.same(docs.map((d) => `${d.kind}/${d.name}`).sort(), ['ConfigMap/api-config', 'Deployment/api', 'Deployment/auto', 'HorizontalPodAutoscaler/auto-hpa', 'Secret/api-secrets', ...docs.filter((d) => d.kind === 'Namespace').map((d) => `Namespace/${d.name}`)].sort())
  const text = JSON.stringify(docs)
  t.notMatch(text, SECRET_VALUE)
  t.notMatch(text, b64(SECRET_VALUE))
  const secret = docs.find((d) => d.kind === 'Secret')!.fields as Array<{ path: string; digest?: string; value?: unknown }>
  t.match(secret.find((f) => f.path === 'data.DB_PASSWORD'), { digest: /^[\w-]+:[\w-]{43}$/ }, 'the secret value only as a digest')
  t.notOk('value' in secret.find((f) => f.path === 'data.DB_PASSWORD')!, 'and no value')
  t.same((await report()).nodes, [], 'a fresh check finds everything as applied')
})

t.test('kubectl scale: spec.replicas drifted (bus, stream, node status, GET /drift); sync heals it', async (t) => {
  const seen = detected('n-api', 'scale', (fields) => fields.includes('spec.replicas'))
  await f.kubectl('-n', NS, 'scale', 'deployment/api', '--replicas=3')
  t.same((await seen).fields, ['spec.replicas'])
  await stream.until('drift_detected', (e) => e.some((x) => x.type === 'drift_detected' && x.data.node_id === 'n-api'))
  const status = await nodeStatus('n-api')
  t.equal(status.state, 'drifted')
  t.match(status.drift, { detected_at: String, fields: ['spec.replicas'] })
  t.type(status.live_state, 'string', 'the watchers\' state is kept beside it')
  const r = await report()
  t.same(r.nodes, [{ node_id: 'n-api', objects: [{ cluster_id: clusterId, kind: 'Deployment', name: 'api', namespace: NS, missing: false, fields: [{ path: 'spec.replicas', applied: 1, live: 3 }] }] }])
  t.ok(Date.parse(r.checked_at) > 0)
  const healed = resolved('n-api')
  const run = await sync()
  t.equal(run.trigger, 'sync')
  await healed
  t.equal((await f.kubectlJson('-n', NS, 'get', 'deployment', 'api')).spec.replicas, 1)
  t.not((await nodeStatus('n-api')).state, 'drifted')
  t.notOk((await nodeStatus('n-api')).drift, 'the drift is gone from the node')
  await stream.until('drift_resolved', (e) => e.some((x) => x.type === 'drift_resolved' && x.data.node_id === 'n-api'))
  t.same((await report()).nodes, [])
})

t.test('a sync whose apply of the object fails keeps its baseline: the drift stays until a sync succeeds', async (t) => {
  const seen = detected('n-api', 'scale before a failing sync', (fields) => fields.includes('spec.replicas'))
  await f.kubectl('-n', NS, 'scale', 'deployment/api', '--replicas=2')
  await seen
  const before = await app.db.collection('drift_baselines').findOne({ workflow_id: id, kind: 'Deployment', name: 'api' })
  f.sim.faults.failNext(20, 500, { pathPrefix: `/apis/apps/v1/namespaces/${NS}/deployments/api`, method: 'PATCH', message: 'injected' })
  const res = await call(owner, 'POST', `/v1/api/workflows/${id}/sync`, { trigger_data: trigger })
  f.sim.faults.reset()
  t.equal(res.body.status, 'failed')
  t.equal(res.body.nodes.find((n: { node_id: string; kind: string }) => n.node_id === 'n-api' && n.kind === 'Deployment').action, 'failed')
  await app.services.drift.idle()
  const after = await app.db.collection('drift_baselines').findOne({ workflow_id: id, kind: 'Deployment', name: 'api' })
  t.equal(after!.run_id, before!.run_id, 'the baseline of the object the sync could not apply is the earlier run\'s')
  t.same((await report()).nodes[0].objects[0].fields, [{ path: 'spec.replicas', applied: 1, live: 2 }], 'still drifted')
  t.equal((await nodeStatus('n-api')).state, 'drifted')
  const healed = resolved('n-api')
  await sync()
  await healed
})

t.test('kubectl set image: the container image drifted; sync heals it', async (t) => {
  const path = `spec.template.spec.containers[name=${container}].image`
  const seen = detected('n-api', 'set image', (fields) => fields.includes(path))
  await f.kubectl('-n', NS, 'set', 'image', 'deployment/api', `${container}=nginx:1.28`)
  await seen
  const r = await report()
  t.same(r.nodes[0].objects[0].fields, [{ path, applied: 'nginx:1.27', live: 'nginx:1.28' }])
  const healed = resolved('n-api')
  await sync()
  await healed
  t.equal((await f.kubectlJson('-n', NS, 'get', 'deployment', 'api')).spec.template.spec.containers[0].image, 'nginx:1.27')
})

t.test('kubectl label: a label added is drift; sync removes it (server-side apply alone would leave it)', async (t) => {
  const seen = detected('n-api', 'label', (fields) => fields.includes('metadata.labels.extra'))
  await f.kubectl('-n', NS, 'label', 'deployment/api', 'extra=by-hand', 'node.kubernetes.io/by-controller=kept')
  await seen
  const r = await report()
  t.same(r.nodes, [{ node_id: 'n-api', objects: [{ cluster_id: clusterId, kind: 'Deployment', name: 'api', namespace: NS, missing: false, fields: [{ path: 'metadata.labels.extra', applied: null, live: 'by-hand' }] }] }])
  const healed = resolved('n-api')
  await sync()
  await healed
  const labels = (await f.kubectlJson('-n', NS, 'get', 'deployment', 'api')).metadata.labels
  t.notOk('extra' in labels, 'the sync removed the label nobody in the graph set')
  t.equal(labels.team, 'payments', 'the graph\'s own label stays')
  t.equal(labels['node.kubernetes.io/by-controller'], 'kept', 'a reserved (controller) label is left alone')
  t.not((await nodeStatus('n-api')).state, 'drifted')
  t.same((await report()).nodes, [])
  await f.kubectl('-n', NS, 'label', 'deployment/api', 'node.kubernetes.io/by-controller-')
})

t.test('kubectl delete: the object is reported missing; sync brings it back', async (t) => {
  const seen = detected('n-config', 'delete', (fields) => fields.includes('(missing)'))
  await f.kubectl('-n', NS, 'delete', 'configmap', 'api-config')
  await seen
  const status = await nodeStatus('n-config')
  t.equal(status.state, 'drifted')
  t.same(status.drift.fields, ['(missing)'])
  t.same((await report()).nodes, [{ node_id: 'n-config', objects: [{ cluster_id: clusterId, kind: 'ConfigMap', name: 'api-config', namespace: NS, missing: true, fields: [] }] }])
  const healed = resolved('n-config')
  await sync()
  await healed
  t.equal((await f.kubectlJson('-n', NS, 'get', 'configmap', 'api-config')).data.MODE, 'prod')
  t.same((await report()).nodes, [])
})

t.test('not drift: another tool\'s annotation, an autoscaled workload\'s replicas, a controller\'s label', async (t) => {
  await f.kubectl('-n', NS, 'annotate', 'deployment/api', 'other-tool.example/seen=yes')
  await f.kubectl('-n', NS, 'scale', 'deployment/auto', '--replicas=4')
  await f.kubectl('-n', NS, 'label', 'deployment/api', 'node.kubernetes.io/by-controller=yes')
  const live = await f.kubectlJson('-n', NS, 'get', 'deployment', 'api')
  t.equal(live.metadata.annotations['other-tool.example/seen'], 'yes', 'the annotation is there')
  t.equal(live.metadata.labels['node.kubernetes.io/by-controller'], 'yes', 'the reserved label is there')
  // The same check does see drift in the same objects: the empty answer is not a check that saw nothing.
  await f.kubectl('-n', NS, 'label', 'deployment/auto', 'probe=1')
  const r = await report()
  t.same(r.nodes, [{ node_id: 'n-auto', objects: [{ cluster_id: clusterId, kind: 'Deployment', name: 'auto', namespace: NS, missing: false, fields: [{ path: 'metadata.labels.probe', applied: null, live: '1' }] }] }], 'only the probe label: not the annotation, not the autoscaled replicas, not the reserved label')
  const healed = resolved('n-auto')
  await f.kubectl('-n', NS, 'label', 'deployment/auto', 'probe-')
  await healed
  t.same((await report()).nodes, [])
})

t.test('a Secret\'s value changed: reported hidden, the value nowhere', async (t) => {
  const other = 'An0ther-s3cret-v4lue-x1'
  const seen = detected('n-secret', 'secret value', (fields) => fields.includes('data.DB_PASSWORD'))
  await f.kubectl('-n', NS, 'patch', 'secret', 'api-secrets', '-p', JSON.stringify({ data: { DB_PASSWORD: b64(other) } }))
  await seen
  const r = await report()
  t.same(r.nodes, [{ node_id: 'n-secret', objects: [{ cluster_id: clusterId, kind: 'Secret', name: 'api-secrets', namespace: NS, missing: false, fields: [{ path: 'data.DB_PASSWORD', applied: '(hidden)', live: '(hidden)' }] }] }])
  const healed = resolved('n-secret')
  await f.kubectl('-n', NS, 'patch', 'secret', 'api-secrets', '-p', JSON.stringify({ data: { DB_PASSWORD: b64(SECRET_VALUE) } }))
  await healed
  const stored = await f.everythingStored()
  const drift = JSON.stringify(await app.db.collection('drift_baselines').find({}).toArray()) + JSON.stringify(await app.db.collection('drift_states').find({}).toArray())
  for (const value of [SECRET_VALUE, other]) {
    for (const form of [value, b64(value)]) {
      t.notMatch(stored, form, 'not in the records or the log')
      t.notMatch(drift, form, 'not in the drift collections')
      t.notMatch(stream.raw(), form, 'not on the stream')
      t.notMatch(JSON.stringify(r), form, 'not in the report')
    }
  }
})

t.test('auto_sync: drift is healed without a request', async (t) => {
  // Run-time secret values are never stored, so only a workflow without them can be re-applied unattended.
  const auto = await f.workflow({ nodes: [node('n-web', 'deployment', { name: 'web', namespace: 'drift-auto', image: 'nginx:1.27', port: 8080, replicas: 1 })], edges: [] }, 'auto')
  t.equal((await call(owner, 'POST', `/v1/api/workflows/${auto}/run`, {})).body.status, 'completed')
  t.equal((await call(owner, 'PUT', `/v1/api/workflows/${auto}`, { auto_sync: true })).status, 200)
  const web = (await f.kubectlJson('-n', 'drift-auto', 'get', 'deployment', 'web')).spec.template.spec.containers[0].name as string
  const seen = nextBusEvent(app, 'drift.detected', 'drift of web', (e) => e.workflow_id === auto && e.node_id === 'n-web')
  const healed = nextBusEvent(app, 'drift.resolved', 'web healed', (e) => e.workflow_id === auto && e.node_id === 'n-web')
  await f.kubectl('-n', 'drift-auto', 'set', 'image', 'deployment/web', `${web}=nginx:1.29`)
  await seen
  await healed
  t.equal((await f.kubectlJson('-n', 'drift-auto', 'get', 'deployment', 'web')).spec.template.spec.containers[0].image, 'nginx:1.27', 'the applied image is back')
  const runs = await call(owner, 'GET', `/v1/api/workflows/${auto}/runs`)
  t.same(runs.body.runs.map((x: { trigger: string }) => x.trigger).sort(), ['auto_sync', 'manual'], 'by one run with trigger auto_sync')
  t.notOk(f.logs.some((l: string) => l.includes('nginx:1.29')), 'the log names no value')
})

t.test('auto_sync of a workflow with run-time secrets cannot re-apply them: logged, nothing else runs', async (t) => {
  t.equal((await call(owner, 'PUT', `/v1/api/workflows/${id}`, { auto_sync: true })).status, 200)
  const seen = detected('n-api', 'image for the failing auto_sync')
  await f.kubectl('-n', NS, 'set', 'image', 'deployment/api', `${container}=nginx:1.29`)
  await seen
  await app.services.drift.idle()
  const runs = await call(owner, 'GET', `/v1/api/workflows/${id}/runs`)
  t.notOk(runs.body.runs.some((x: { trigger: string }) => x.trigger === 'auto_sync'), 'no run started')
  t.ok(f.logs.some((l: string) => l.includes('drift: auto_sync failed') && l.includes('no value supplied')), 'the reason is logged')
  t.notOk(f.logs.some((l: string) => l.includes(SECRET_VALUE)), 'without any value')
  t.equal((await call(owner, 'PUT', `/v1/api/workflows/${id}`, { auto_sync: false })).status, 200)
  const healed = resolved('n-api')
  await sync()
  await healed
})

t.test('the periodic check: one GET per baseline object finds drift by itself; a workflow holding the run lock is skipped', async (t) => {
  // A second checker, as another replica would run it: its own bus and drift records, the app's baselines
  // and workflows, the simulator through the owner's credentials. No watch feeds it: only its sweep can see.
  const db = app.db.client.db(`drift-sweep-${process.pid}`)
  t.teardown(() => db.dropDatabase())
  await db.collection('drift_baselines').insertMany(await app.db.collection('drift_baselines').find({ workflow_id: id }).toArray())
  const bus = new EventBus()
  const events: string[] = []
  bus.on('drift.detected', (e) => events.push(`detected ${e.node_id} ${e.fields.join(',')}`))
  bus.on('drift.resolved', (e) => events.push(`resolved ${e.node_id}`))
  const workflows = new WorkflowRepository(app.db)
  const sweeper = new DriftService({
    baselines: new DriftBaselineRepository(db), states: new DriftStateRepository(db), bus,
    workflows: { get: (o, w) => workflows.get(o, w), lockedForRuns: () => workflows.lockedForRuns(), deployedIds: (o) => workflows.deployedIds(o), setNodeStatus: async () => true },
    ownership: { owns: () => true, ownedClusters: () => null },
    hasher: new Digester({ current: Buffer.alloc(32, 7), old: [] }),
    reader: async (ownerId, cluster) => resourceReader((await app.services.clusters.kubeConfigFor(ownerId, cluster, 'viewer')).kc, 5000),
    derivedStatus: () => null, intervalMs: 3_600_000, concurrency: 4, log: { info: () => {}, warn: (o, m) => events.push(`warn ${m}`), error: () => {} },
  })
  const baselines = await db.collection('drift_baselines').countDocuments({ workflow_id: id })
  await f.kubectl('-n', NS, 'label', 'deployment/api', 'sweep=1')
  t.equal((await app.db.collection('workflows').updateOne({ _id: id as never }, { $set: { running_run_id: 'held-by-test' } })).modifiedCount, 1, 'the run lock taken')
  const before = f.sim.requestCount()
  await sweeper.sweep()
  t.equal(f.sim.requestCount() - before, 0, 'locked: nothing read')
  t.same(events, [])
  await app.db.collection('workflows').updateOne({ _id: id as never }, { $set: { running_run_id: null } })
  const start = f.sim.requestCount()
  await sweeper.sweep()
  t.ok(f.sim.requestCount() - start >= baselines, `one GET per baseline object (${baselines})`)
  t.same(events, ['detected n-api metadata.labels.sweep'])
  t.same((await db.collection('drift_states').find({}).toArray()).map((d) => d.fields), [['metadata.labels.sweep']], 'stored')
  await sweeper.sweep()
  t.same(events, ['detected n-api metadata.labels.sweep'], 'the same drift again is not announced again')
  await f.kubectl('-n', NS, 'label', 'deployment/api', 'sweep-')
  await sweeper.sweep()
  t.same(events, ['detected n-api metadata.labels.sweep', 'resolved n-api'])
  t.equal(await db.collection('drift_states').countDocuments({}), 0)
  await sweeper.close()
})

t.test('a replica taking the cluster over learns the stored drift: the node keeps showing it, nothing is announced again', async (t) => {
  const seen = detected('n-api', 'label before the takeover', (fields) => fields.includes('metadata.labels.takeover'))
  await f.kubectl('-n', NS, 'label', 'deployment/api', 'takeover=1')
  await seen
  const bus = new EventBus()
  const announced: string[] = []
  bus.on('drift.detected', (e) => announced.push(e.node_id))
  const written: Array<Record<string, unknown>> = []
  const workflows = new WorkflowRepository(app.db)
  const successor = new DriftService({
    baselines: new DriftBaselineRepository(app.db), states: new DriftStateRepository(app.db), bus,
    workflows: { get: (o, w) => workflows.get(o, w), lockedForRuns: () => workflows.lockedForRuns(), deployedIds: (o) => workflows.deployedIds(o), setNodeStatus: async (_o, _w, n, status) => { if (n === 'n-api') written.push(status); return true } },
    ownership: { owns: () => true, ownedClusters: () => null },
    hasher: new Digester({ current: Buffer.alloc(32, 7), old: [] }),
    reader: async (ownerId, cluster) => resourceReader((await app.services.clusters.kubeConfigFor(ownerId, cluster, 'viewer')).kc, 5000),
    derivedStatus: () => ({ state: 'running', message: 'ok' }), intervalMs: 3_600_000, concurrency: 4, log: { info: () => {}, warn: () => {}, error: () => {} },
  })
  t.equal(successor.overlay(owner.user.id, id, 'n-api', { state: 'running', message: 'ok' }).state, 'running', 'before: it knows nothing')
  await successor.sweep()
  t.match(successor.overlay(owner.user.id, id, 'n-api', { state: 'running', message: 'ok' }), { state: 'drifted', drift: { fields: ['metadata.labels.takeover'] } })
  t.match(written, [{ state: 'drifted', live_state: 'running', drift: { fields: ['metadata.labels.takeover'] } }], 'the node status written once, with the drift')
  t.same(announced, [], 'not announced again')
  await successor.close()
  const healed = resolved('n-api')
  await f.kubectl('-n', NS, 'label', 'deployment/api', 'takeover-')
  await healed
})

t.test('GET /drift answers 502 when the cluster does not answer, saying nothing of the driver', async (t) => {
  f.sim.faults.failNext(1, 503, { pathPrefix: `/api/v1/namespaces/${NS}/configmaps` })
  const res = await call(owner, 'GET', `/v1/api/workflows/${id}/drift`)
  t.equal(res.status, 502)
  t.same(Object.keys(res.body), ['error'])
  t.notMatch(res.body.error, /at .*\.ts:|stack/i)
  f.sim.faults.reset()
  t.same((await report()).nodes, [], 'answering again: in sync')
})

t.test('another user gets 404, and a bad id 404/400', async (t) => {
  const { registerUser } = await import('../helpers/auth.ts')
  const bob = await registerUser(app)
  t.equal((await call(bob, 'GET', `/v1/api/workflows/${id}/drift`)).status, 404)
  t.equal((await call(owner, 'GET', '/v1/api/workflows/000000000000000000000000/drift')).status, 404)
})

t.test('deleting a workflow with its objects is not drift, and its baselines go', async (t) => {
  const auto = (await app.db.collection('workflows').findOne({ name: 'auto' }))!._id as unknown as string
  const announced: string[] = []
  const off = app.bus.on('drift.detected', (e) => { if (e.workflow_id === auto) announced.push(e.node_id) })
  t.teardown(off)
  const res = await call(owner, 'DELETE', `/v1/api/workflows/${auto}?delete_resources=true`)
  t.equal(res.status, 204)
  await app.services.resourceWatch.idle()
  await app.services.drift.idle()
  t.same(announced, [], 'the objects removed under the run lock were not reported')
  t.equal(await app.db.collection('drift_baselines').countDocuments({ workflow_id: auto }), 0)
  t.equal(await app.db.collection('drift_states').countDocuments({ workflow_id: auto }), 0)
})
