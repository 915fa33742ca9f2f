// Failures end in a finished run with the right outcome per node, and never with a secret in a record or
// a log line: an unreachable cluster, a 500 on one object, a workload that never becomes ready, a missing
// CRD, a field-manager conflict (then taken over with force).
import t from 'tap'
import { runFixture, shopGraph, node, TRIGGER, SECRET_VALUE, ENV_VALUE } from './fixture.ts'
import { registerUser } from '../helpers/auth.ts'
import { freePort } from '../helpers/ports.ts'
import { RunRepository } from '../../src/repositories/runs.ts'

const f = await runFixture(t, { RUN_READY_TIMEOUT_MS: 1500 })
const { owner, call } = f
type Node = { node_id: string; kind: string; action: string; message: string }
const byNode = (run: { nodes: Node[] }, id: string, kind?: string) => run.nodes.find((n) => n.node_id === id && (!kind || n.kind === kind))!
const runOf = async (id: string, body: object = {}) => {
  const res = await call(owner, 'POST', `/v1/api/workflows/${id}/run`, { trigger_data: TRIGGER, ...body })
  if (res.status !== 200) throw new Error(`run: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body
}

t.test('an unreachable cluster: a failed run saying so, and the lock released', async (t) => {
  const port = await freePort()
  const added = await call(owner, 'POST', '/v1/api/clusters', { name: 'gone', server: `https://127.0.0.1:${port}`, auth_type: 'token', credentials: { token: 'x', ca_data: f.sim.caPem } })
  t.equal(added.status, 201)
  const id = await f.workflow(shopGraph({ namespace: 'gone' }), 'unreachable')
  const run = await runOf(id, { cluster: 'gone' })
  t.equal(run.status, 'failed')
  t.match(run.error, /refused|reach|unreachable|connect/i)
  t.ok(run.nodes.every((n: Node) => n.action !== 'created'), 'nothing claims to be created')
  t.match((await call(owner, 'GET', `/v1/api/workflows/${id}`)).body, { run_count: 1, failure_count: 1, success_count: 0 })
  t.match((await call(owner, 'GET', `/v1/api/workflows/${id}/versions/1`)).body, { run_status: 'failed' })
  t.equal((await call(owner, 'POST', `/v1/api/workflows/${id}/run`, { cluster: 'gone', trigger_data: TRIGGER })).status, 200, 'not locked')
  t.equal(await new RunRepository(f.app.db).lastDeployment(owner.user.id, id), null, 'nothing was deployed anywhere')
})

t.test('a 500 on one object fails that node; the others still say what happened', async (t) => {
  const id = await f.workflow(shopGraph({ namespace: 'five' }), 'five hundred')
  f.sim.faults.failNext(10, 500, { pathPrefix: '/apis/networking.k8s.io/v1/namespaces/five/ingresses', message: 'etcd is having a moment' })
  t.teardown(() => f.sim.faults.reset())
  const run = await runOf(id)
  f.sim.faults.reset()
  t.equal(run.status, 'failed')
  t.equal(byNode(run, 'n-ing').action, 'failed')
  t.match(byNode(run, 'n-ing').message, /500|internal|etcd/i)
  for (const other of ['n-config', 'n-secret', 'n-pvc', 'n-api', 'n-svc']) t.equal(byNode(run, other, other === 'n-config' ? 'ConfigMap' : undefined).action, 'created', other)
  t.match(run.error, /Ingress web/)
})

t.test('a workload that never becomes ready fails its node with the status message', async (t) => {
  const id = await f.workflow(shopGraph({ namespace: 'never', image: 'acme/never-ready:1' }), 'never ready')
  const run = await runOf(id)
  t.equal(run.status, 'failed')
  const api = byNode(run, 'n-api')
  t.equal(api.action, 'failed')
  t.match(api.message, /ready/i)
  t.equal(byNode(run, 'n-svc').action, 'created', 'the service is fine')
  t.match(run.error, /Deployment api/)
  // Diagnostics look where it was deployed: a failed run that put objects on the cluster counts.
  const dryRun = await call(owner, 'POST', `/v1/api/workflows/${id}/run`, { dry_run: true, trigger_data: TRIGGER })
  t.equal(dryRun.status, 200)
  t.same(await new RunRepository(f.app.db).lastDeployment(owner.user.id, id), { cluster: 'sim', cluster_id: run.cluster_id, namespace: null, run_id: run.id }, 'the last real deployment, not the dry run')
  // Even when its only object failed to become ready: it is on the cluster.
  const lone = await f.workflow({ nodes: [node('n-lone', 'deployment', { name: 'lone', image: 'acme/never-ready:2', port: 80 })], edges: [] }, 'lone')
  const loneRun = await runOf(lone)
  t.same(loneRun.nodes.map((n: Node) => n.action), ['failed'])
  t.match(await new RunRepository(f.app.db).lastDeployment(owner.user.id, lone), { run_id: loneRun.id })
})

t.test('an image that cannot be pulled: the node says so', async (t) => {
  const id = await f.workflow(shopGraph({ namespace: 'pull', image: 'acme/fail-pull:1' }), 'fail pull')
  const run = await runOf(id)
  t.equal(run.status, 'failed')
  t.equal(byNode(run, 'n-api').action, 'failed')
  t.match(byNode(run, 'n-api').message, /pull|ImagePullBackOff|ErrImagePull|ready/i)
})

t.test('a plugin node whose CRD is not installed fails naming the operator to install', async (t) => {
  const admin = await registerUser(f.app, { role: 'admin' })
  const plugin = await f.app.db.collection('plugins').findOne({ name: 'cert-manager-certificate' })
  t.ok(plugin)
  t.equal((await call(admin, 'POST', `/v1/api/plugins/${plugin!._id}/enable`)).status, 200)
  const graph = shopGraph({ namespace: 'crd' })
  graph.nodes.push(node('n-cert', 'plugin', { name: 'shop-tls', namespace: 'crd', pluginId: 'cert-manager-certificate', dnsName: 'shop.example.com', secretName: 'shop-tls' }))
  const id = await f.workflow(graph, 'missing crd')
  const run = await runOf(id)
  t.equal(run.status, 'failed')
  const cert = byNode(run, 'n-cert')
  t.equal(cert.action, 'failed')
  t.match(cert.message, /cert-manager/)
  t.match(cert.message, /install/)
  t.equal(byNode(run, 'n-api').action, 'created', 'the rest of the graph is applied')
})

t.test('a field another manager owns: the node fails naming it; force: true takes it over', async (t) => {
  const id = await f.workflow(shopGraph({ namespace: 'owned' }), 'conflict')
  t.equal((await runOf(id)).status, 'completed')
  const patch = JSON.stringify({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'api', namespace: 'owned' }, spec: { template: { spec: { containers: [{ name: 'api', image: 'acme/hotfix:9' }] } } } })
  // Asynchronously: the simulator answers from this process's event loop.
  await f.kubectlStdin(patch, 'apply', '--server-side', '--field-manager=ops-oncall', '--force-conflicts', '-f', '-')
  const conflicted = await runOf(id)
  t.equal(conflicted.status, 'failed')
  const api = byNode(conflicted, 'n-api')
  t.equal(api.action, 'failed')
  t.match(api.message, /ops-oncall/)
  t.match(api.message, /force/)
  const image = async () => (await f.kubectlJson('get', 'deployment', 'api', '-n', 'owned')).spec.template.spec.containers[0].image
  t.equal(await image(), 'acme/hotfix:9', 'the other manager\'s value stands')
  const forced = await runOf(id, { force: true })
  t.equal(forced.status, 'completed', JSON.stringify(forced.error))
  t.equal(byNode(forced, 'n-api').action, 'configured')
  t.equal(await image(), 'ghcr.io/acme/api:1.4.2')
})

t.test('after all of that, no secret or env value is in any record or log line', async (t) => {
  const everything = await f.everythingStored()
  t.ok(everything.length > 1000)
  t.notOk(everything.includes(SECRET_VALUE))
  t.notOk(everything.includes(Buffer.from(SECRET_VALUE).toString('base64').replace(/=+$/, '')))
  t.notOk(everything.includes(ENV_VALUE))
})
