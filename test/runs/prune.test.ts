// Prune and delete_resources: what left the graph goes, what stays is untouched, and nothing this service
// did not create for this workflow is ever touched. A cluster that cannot be reached keeps the workflow.
import t from 'tap'
import { runFixture, shopGraph, node, TRIGGER } from './fixture.ts'

const f = await runFixture(t)
const { owner, call } = f
const graph = shopGraph({ namespace: 'pr' })
const id = await f.workflow(graph)
const runOf = async (wid: string, body: object = {}) => {
  const res = await call(owner, 'POST', `/v1/api/workflows/${wid}/run`, { trigger_data: TRIGGER, ...body })
  if (res.status !== 200) throw new Error(`run: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body
}
const exists = async (kind: string, name: string, ns = 'pr') => {
  try { await f.kubectl('get', kind, name, '-n', ns, '-o', 'name'); return true } catch { return false }
}
const without = (ids: string[]) => ({
  nodes: graph.nodes.filter((n) => !ids.includes(n.id)),
  edges: graph.edges.filter((e) => !ids.includes(e.source) && !ids.includes(e.target)),
})

// Neighbours that must survive everything: a hand-made object, and another workflow's object in the same namespace.
t.before(async () => {
  if ((await runOf(id)).status !== 'completed') throw new Error('first run failed')
  await f.kubectlStdin(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'hand-made', namespace: 'pr' }, data: { a: '1' } }), 'apply', '-f', '-')
  const neighbour = await f.workflow({ nodes: [node('n-other', 'configmap', { name: 'neighbour', namespace: 'pr', data: { b: '2' } })], edges: [] }, 'neighbour')
  if ((await runOf(neighbour)).status !== 'completed') throw new Error('neighbour run failed')
})

t.test('a node removed from the graph: its object is pruned, the others untouched', async (t) => {
  const before = await f.kubectlJson('get', 'deployment', 'api', '-n', 'pr')
  await f.save(id, without(['n-hpa']))
  const run = await runOf(id)
  t.equal(run.status, 'completed', JSON.stringify(run.error))
  t.notOk(run.nodes.some((n: { node_id: string }) => n.node_id === 'n-hpa'))
  // The namespace is shared with the neighbour workflow, whose runs re-annotate it: only the graph's own objects are compared.
  t.ok(run.nodes.filter((n: { kind: string }) => n.kind !== 'Namespace').every((n: { action: string }) => n.action === 'unchanged'), `the rest is unchanged: ${JSON.stringify(run.nodes.map((n: { node_id: string; kind: string; action: string; message: string }) => [n.node_id, n.kind, n.action, n.message]))}`)
  t.ok(run.logs.some((l: string) => /HorizontalPodAutoscaler api-hpa .*deleted/.test(l)), 'the log says what was pruned')
  t.notOk(await exists('hpa', 'api-hpa'), 'the HPA is gone')
  const after = await f.kubectlJson('get', 'deployment', 'api', '-n', 'pr')
  t.equal(after.metadata.resourceVersion, before.metadata.resourceVersion, 'the deployment was not written')
  t.ok(await exists('configmap', 'hand-made'), 'a hand-made object is never touched')
  t.ok(await exists('configmap', 'neighbour'), 'another workflow\'s object is never touched')
  const tracked = await f.app.db.collection('resources').findOne({ owner_id: owner.user.id, kind: 'HorizontalPodAutoscaler', name: 'api-hpa' })
  t.equal(tracked?.status, 'deleted', 'its tracked resource is marked deleted')
})

t.test('prune: false keeps what left the graph; the next pruning run removes it', async (t) => {
  await f.save(id, without(['n-hpa', 'n-ing']))
  let run = await runOf(id, { prune: false })
  t.equal(run.status, 'completed')
  t.ok(await exists('ingress', 'web'), 'kept')
  run = await runOf(id)
  t.equal(run.status, 'completed')
  t.notOk(await exists('ingress', 'web'), 'pruned by the next run')
})

t.test('a failed run prunes nothing', async (t) => {
  await f.save(id, without(['n-hpa', 'n-ing', 'n-svc']))
  f.sim.faults.failNext(10, 500, { pathPrefix: '/api/v1/namespaces/pr/configmaps/api-config' })
  t.teardown(() => f.sim.faults.reset())
  const run = await runOf(id)
  f.sim.faults.reset()
  t.equal(run.status, 'failed')
  t.ok(await exists('service', 'api-svc'), 'the service that left the graph stays until a run succeeds')
})

t.test('delete_resources on an unreachable cluster: 502 and the workflow is kept', async (t) => {
  await f.sim.faults.stop()
  try {
    const res = await call(owner, 'DELETE', `/v1/api/workflows/${id}?delete_resources=true`)
    t.equal(res.status, 502, JSON.stringify(res.body))
    t.match(res.body.error, /kept/)
  } finally {
    await f.sim.faults.restart()
  }
  t.equal((await call(owner, 'GET', `/v1/api/workflows/${id}`)).status, 200)
  t.ok(await exists('deployment', 'api'))
})

t.test('delete_resources=true removes the workflow\'s objects, then the workflow; neighbours stay', async (t) => {
  const res = await call(owner, 'DELETE', `/v1/api/workflows/${id}?delete_resources=true`)
  t.equal(res.status, 204, JSON.stringify(res.body))
  t.equal((await call(owner, 'GET', `/v1/api/workflows/${id}`)).status, 404)
  for (const [kind, name] of [['deployment', 'api'], ['service', 'api-svc'], ['configmap', 'api-config'], ['secret', 'api-secrets'], ['pvc', 'uploads']]) {
    t.notOk(await exists(kind, name), `${kind} ${name} removed`)
  }
  t.ok(await exists('configmap', 'hand-made'))
  t.ok(await exists('configmap', 'neighbour'))
  // Namespaces are never removed (other things may live in them), so their tracked records stay live.
  const live = await f.app.db.collection('resources').find({ owner_id: owner.user.id, workflow_id: id, kind: { $ne: 'Namespace' }, status: { $ne: 'deleted' } }).toArray()
  t.same(live.map((r) => `${r.kind} ${r.name}`), [], 'its tracked resources are marked deleted')
  t.ok(await exists('namespace', 'pr', 'default'), 'the namespace stays')
})

t.test('without the flag, deleting a workflow leaves its objects in the cluster', async (t) => {
  const keep = await f.workflow(shopGraph({ namespace: 'keep' }), 'keep')
  t.equal((await runOf(keep)).status, 'completed')
  t.equal((await call(owner, 'DELETE', `/v1/api/workflows/${keep}`)).status, 204)
  t.ok(await exists('deployment', 'api', 'keep'))
})
