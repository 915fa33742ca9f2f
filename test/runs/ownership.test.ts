// Two users on one shared cluster (issue 22, item 3): Alice owns the cluster, Dave deploys to it, Vera views
// it. A run never changes an object of another workflow (or one this service did not make) unless adopting is
// asked for by someone allowed to; deleting a workflow with its resources removes only what is still its own.
import t from 'tap'
import { runFixture, node } from './fixture.ts'
import { registerUser, type TestUser } from '../helpers/auth.ts'
import { WORKFLOW_ID_ANNOTATION } from '../../src/manifests/metadata.ts'

const f = await runFixture(t)
const { call, app } = f
const alice = f.owner
const dave = await registerUser(app)
const vera = await registerUser(app)
const must = (ok: boolean, what: string) => { if (!ok) throw new Error(`set-up failed: ${what}`) }
must((await call(alice, 'POST', '/v1/api/clusters/sim/share', { email: dave.user.email, role: 'deployer' })).status === 200, 'share with Dave as deployer')
must((await call(alice, 'POST', '/v1/api/clusters/sim/share', { email: vera.user.email, role: 'viewer' })).status === 200, 'share with Vera as viewer')

const NS = 'team'
type Graph = { nodes: object[]; edges: object[] }
const service = (port = 80) => node('n-svc', 'service', { name: 'web', namespace: NS, serviceType: 'ClusterIP', port, targetPort: 8080 })
const config = (name: string) => node('n-cm', 'configmap', { name, namespace: NS, data: { K: name } })

async function workflowOf(user: TestUser, name: string, graph: Graph): Promise<string> {
  const res = await call(user, 'POST', '/v1/api/workflows', { name, cluster_id: 'sim' })
  must(res.status === 201, `workflow ${name}: ${res.status}`)
  must((await call(user, 'POST', `/v1/api/workflows/${res.body.id}/save`, graph)).status === 200, `save ${name}`)
  return res.body.id
}
const runOf = async (user: TestUser, id: string, body: object = {}) => {
  const res = await call(user, 'POST', `/v1/api/workflows/${id}/run`, body)
  must(res.status === 200, `run: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body
}
const liveService = () => f.kubectlJson('get', 'service', 'web', '-n', NS)
const exists = (kind: string, name: string) => f.kubectl('get', kind, name, '-n', NS, '--ignore-not-found', '-o', 'name').then((out) => out.trim() !== '')
/** The node's own object (the Namespace a node's namespace needs is reported under the first node in it). */
const nodeOf = (run: { nodes: Array<{ node_id: string; kind: string; action: string; message: string }> }, id: string) => run.nodes.find((n) => n.node_id === id && n.kind !== 'Namespace')!

// Alice's first workflow owns Service web in the shared namespace.
const aliceWf = await workflowOf(alice, 'alice-web', { nodes: [service(80), config('alice-config')], edges: [] })
must((await runOf(alice, aliceWf)).status === 'completed', 'Alice\'s run')

t.test('Dave\'s run with Alice\'s Service name fails that node naming her workflow; her Service is unchanged', async (t) => {
  const before = await liveService()
  const daveWf = await workflowOf(dave, 'dave-web', { nodes: [service(9999), config('dave-config')], edges: [] })
  for (const dry_run of [true, false]) {
    const run = await runOf(dave, daveWf, { dry_run })
    t.equal(run.status, 'failed', `dry_run ${dry_run}: the run fails`)
    const svc = nodeOf(run, 'n-svc')
    t.equal(svc.action, 'failed')
    t.match(svc.message, new RegExp(`^conflict \\(409\\): Service web \\(namespace ${NS}\\) belongs to workflow ${aliceWf}; not changed`))
    t.notMatch(JSON.stringify(run), alice.user.email, 'Alice\'s email appears nowhere in Dave\'s run')
    t.equal(nodeOf(run, 'n-cm').action, 'created', 'his other object is unaffected')
  }
  const after = await liveService()
  t.equal(after.metadata.resourceVersion, before.metadata.resourceVersion, 'Alice\'s Service was not written')
  t.equal(after.metadata.annotations[WORKFLOW_ID_ANNOTATION], aliceWf)
  t.same(after.spec.ports.map((p: { port: number }) => p.port), [80])

  const adopt = await runOf(dave, daveWf, { adopt: true })
  t.equal(nodeOf(adopt, 'n-svc').action, 'failed', 'Dave\'s adopt is refused: the workflow is not his and the cluster is not his')
  t.match(nodeOf(adopt, 'n-svc').message, new RegExp(`adopt is allowed only for the owner of workflow ${aliceWf} or the cluster's owner`))
  t.equal((await liveService()).metadata.resourceVersion, before.metadata.resourceVersion, 'still not written')

  const deleted = await call(dave, 'DELETE', `/v1/api/workflows/${daveWf}?delete_resources=true`)
  t.equal(deleted.status, 204, JSON.stringify(deleted.body))
  t.ok(await exists('service', 'web'), 'Dave\'s delete_resources leaves Alice\'s Service')
  t.equal((await liveService()).metadata.annotations[WORKFLOW_ID_ANNOTATION], aliceWf)
  t.notOk(await exists('configmap', 'dave-config'), 'and removes his own objects')
  t.ok(await exists('configmap', 'alice-config'))
})

t.test('Alice adopts her own other workflow\'s object; the first workflow\'s prune and delete then leave it', async (t) => {
  const second = await workflowOf(alice, 'alice-web-2', { nodes: [service(8081)], edges: [] })
  const refused = await runOf(alice, second)
  t.equal(nodeOf(refused, 'n-svc').action, 'failed', 'without adopt, even her own other workflow\'s object is not changed')
  t.match(nodeOf(refused, 'n-svc').message, new RegExp(`belongs to workflow ${aliceWf}`))

  const adopted = await runOf(alice, second, { adopt: true })
  t.equal(adopted.status, 'completed', JSON.stringify(adopted.nodes))
  t.match(nodeOf(adopted, 'n-svc'), { action: 'configured', message: new RegExp(`adopted from workflow ${aliceWf}`) })
  const live = await liveService()
  t.equal(live.metadata.annotations[WORKFLOW_ID_ANNOTATION], second)
  t.same(live.spec.ports.map((p: { port: number }) => p.port), [8081])

  // The first workflow drops its Service node: prune must not delete what the second one took over.
  await f.save(aliceWf, { nodes: [config('alice-config')], edges: [] })
  const pruned = await runOf(alice, aliceWf)
  t.equal(pruned.status, 'completed', JSON.stringify(pruned))
  t.ok(await exists('service', 'web'), 'prune left the adopted Service')
  t.equal((await call(alice, 'DELETE', `/v1/api/workflows/${aliceWf}?delete_resources=true`)).status, 204)
  t.ok(await exists('service', 'web'), 'so did delete_resources of the first workflow')
  t.notOk(await exists('configmap', 'alice-config'))
  t.equal((await liveService()).metadata.annotations[WORKFLOW_ID_ANNOTATION], second)
})

t.test('an object made with kubectl is not changed without adopt; only the cluster\'s owner may adopt it', async (t) => {
  await f.kubectl('create', 'configmap', 'hand-made', '-n', NS, '--from-literal=OWNER=ops')
  const graph = { nodes: [config('hand-made')], edges: [] }
  const daveWf = await workflowOf(dave, 'dave-hand', graph)
  for (const body of [{}, { adopt: true }]) {
    const run = await runOf(dave, daveWf, body)
    t.equal(nodeOf(run, 'n-cm').action, 'failed', `Dave ${JSON.stringify(body)}`)
    t.match(nodeOf(run, 'n-cm').message, /ConfigMap hand-made \(namespace team\) exists and was not made by this service/)
  }
  t.match(nodeOf(await runOf(dave, daveWf, { adopt: true }), 'n-cm').message, /only the cluster's owner may adopt/)
  const aliceWf2 = await workflowOf(alice, 'alice-hand', graph)
  t.equal(nodeOf(await runOf(alice, aliceWf2), 'n-cm').action, 'failed', 'the cluster\'s owner too needs adopt')
  const cm = () => f.kubectlJson('get', 'configmap', 'hand-made', '-n', NS)
  t.same((await cm()).data, { OWNER: 'ops' }, 'unchanged so far')
  const adopted = await runOf(alice, aliceWf2, { adopt: true })
  t.match(nodeOf(adopted, 'n-cm'), { action: 'configured', message: /adopted \(it was not made by this service\)/ })
  t.equal((await cm()).metadata.annotations[WORKFLOW_ID_ANNOTATION], aliceWf2)
})

t.test('the run option is validated: adopt must be a boolean', async (t) => {
  const id = await workflowOf(dave, 'dave-bad', { nodes: [config('dave-bad')], edges: [] })
  const runs = () => app.db.collection('workflow_runs').countDocuments({ workflow_id: id })
  for (const adopt of ['yes', { all: true }, 'null']) {
    const res = await call(dave, 'POST', `/v1/api/workflows/${id}/run`, { adopt })
    t.equal(res.status, 400, `adopt: ${JSON.stringify(adopt)}`)
    t.match(res.body, { error: /adopt/ })
  }
  t.equal(await runs(), 0, 'nothing recorded')
})

t.test('refresh writes the cluster\'s stored metadata: a viewer gets 403, a deployer and the owner may', async (t) => {
  const before = await app.db.collection('clusters').findOne({ name: 'sim' })
  const res = await call(vera, 'POST', '/v1/api/clusters/sim/refresh')
  t.equal(res.status, 403)
  t.match(res.body, { error: /viewer/ })
  const after = await app.db.collection('clusters').findOne({ name: 'sim' })
  t.same(after?.last_checked_at, before?.last_checked_at, 'nothing recorded for the viewer')
  t.equal((await call(vera, 'GET', '/v1/api/clusters/sim')).status, 200, 'the viewer still sees it')
  t.equal((await call(dave, 'POST', '/v1/api/clusters/sim/refresh')).status, 200)
  t.equal((await call(alice, 'POST', '/v1/api/clusters/sim/refresh')).status, 200)
  const stranger = await registerUser(app)
  t.equal((await call(stranger, 'POST', '/v1/api/clusters/sim/refresh')).status, 404, 'someone it is not shared with: not found')
})
