// Sync on the simulator: after a deploy, someone changes the cluster with kubectl; POST /sync puts back what
// was deployed there (the deployed version, not the graph saved since), in the namespace that deploy used,
// as a run with trigger "sync" that records no version. Nothing deployed on a cluster: 409.
import t from 'tap'
import { runFixture, node } from '../runs/fixture.ts'
import { registerUser } from '../helpers/auth.ts'
import { simClusterBody } from '../helpers/kube.ts'

const NS = 'sy'
const f = await runFixture(t, { RUN_READY_TIMEOUT_MS: 1500 })
const { owner, call, kubectl, kubectlJson } = f

const graph = (image: string) => ({ nodes: [node('web', 'deployment', { name: 'web', image, port: 80 })], edges: [] })
const id = await f.workflow(graph('nginx:1.25'), 'sync')
const url = (path: string) => `/v1/api/workflows/${id}/${path}`
const liveImage = async () => (await kubectlJson('get', 'deployment', 'web', '-n', NS)).spec.template.spec.containers[0].image
const versionCount = async () => (await call(owner, 'GET', url('versions'))).body.total as number

t.test('nothing deployed on the cluster yet: 409, no run recorded', async (t) => {
  const res = await call(owner, 'POST', url('sync'), {})
  t.equal(res.status, 409)
  t.match(res.body.error, /^nothing deployed on that cluster to sync/)
  t.equal((await call(owner, 'GET', url('runs'))).body.total, 0)
  t.equal(await versionCount(), 0)
})

t.test('sync takes back what kubectl changed, from the deployed version, recording no version', async (t) => {
  // Deployed into a namespace given at run time: sync must re-apply there, not where the graph alone would put it.
  const deployed = await call(owner, 'POST', url('run'), { namespace: NS })
  t.match(deployed.body, { status: 'completed', version: 1, namespace: NS, trigger: 'manual', rollback_of: null })
  await kubectl('set', 'image', 'deployment/web', 'web=nginx:9.9', '-n', NS)
  t.equal(await liveImage(), 'nginx:9.9', 'the cluster was changed behind the service\'s back')
  // A graph saved since but not run is not what the cluster should run.
  await f.save(id, graph('nginx:2.0'))

  const preview = await call(owner, 'POST', url('sync'), { dry_run: true })
  t.equal(preview.status, 200, JSON.stringify(preview.body))
  t.match(preview.body, { dry_run: true, trigger: 'sync', version: 1, namespace: NS })
  const diff = preview.body.nodes.find((n: { kind: string }) => n.kind === 'Deployment').diff
  t.same(diff.changed.filter((c: { path: string }) => c.path.endsWith('.image')).map((c: { old: string; new: string }) => [c.old, c.new]), [['nginx:9.9', 'nginx:1.25']], 'the dry run names the image going back')
  t.equal(await liveImage(), 'nginx:9.9', 'a dry sync changes nothing')

  const res = await call(owner, 'POST', url('sync'), {})
  t.equal(res.status, 200, JSON.stringify(res.body))
  t.match(res.body, { status: 'completed', dry_run: false, trigger: 'sync', rollback_of: null, version: 1, namespace: NS, error: null })
  t.equal(res.body.nodes.find((n: { kind: string }) => n.kind === 'Deployment').action, 'configured')
  t.equal(await liveImage(), 'nginx:1.25', 'the cluster runs the deployed image again (kubectl)')
  t.equal(await versionCount(), 1, 'no version recorded by the sync')
  const wf = (await call(owner, 'GET', `/v1/api/workflows/${id}`)).body
  t.match(wf, { current_version: 1, run_count: 2, success_count: 2 })
  t.equal(wf.nodes[0].data.image, 'nginx:2.0', 'the saved graph is left as it is')
  t.same((await call(owner, 'GET', url(`runs/${res.body.id}`))).body, res.body, 'the run record says the same')
})

t.test('a sync of an unchanged cluster changes nothing', async (t) => {
  const res = await call(owner, 'POST', url('sync'), {})
  t.match(res.body, { status: 'completed', trigger: 'sync', version: 1 })
  t.same([...new Set(res.body.nodes.map((n: { action: string }) => n.action))], ['unchanged'])
})

t.test('auto_sync: false by default and on records made before it, set through PUT /workflows/:id, shown on the workflow and in lists', async (t) => {
  t.equal((await call(owner, 'GET', `/v1/api/workflows/${id}`)).body.auto_sync, false)
  const set = await call(owner, 'PUT', `/v1/api/workflows/${id}`, { auto_sync: true })
  t.equal(set.status, 200)
  t.equal(set.body.auto_sync, true)
  t.equal((await call(owner, 'GET', `/v1/api/workflows/${id}`)).body.auto_sync, true)
  const listed = (await call(owner, 'GET', '/v1/api/workflows')).body.workflows.find((w: { id: string }) => w.id === id)
  t.equal(listed.auto_sync, true, 'lists show it')
  t.equal((await call(owner, 'PUT', `/v1/api/workflows/${id}`, { auto_sync: 'yes' })).status, 400)
  const old = (await call(owner, 'POST', '/v1/api/workflows', { name: 'old record' })).body
  await f.app.db.collection('workflows').updateOne({ _id: old.id }, { $unset: { auto_sync: '' } })
  t.equal((await f.app.db.collection('workflows').findOne({ _id: old.id }))!.auto_sync, undefined, 'stored without the field')
  t.equal((await call(owner, 'GET', `/v1/api/workflows/${old.id}`)).body.auto_sync, false, 'an old record reads false')
})

t.test('refusals: bad body 400, another user\'s workflow 404, another cluster with nothing deployed 409', async (t) => {
  for (const body of [{ version: 1 }, { namespace: 'Bad_NS' }, { dry_run: 'yes' }, { force: false }]) {
    const res = await call(owner, 'POST', url('sync'), body)
    t.equal(res.status, 400, `${JSON.stringify(body)} → 400`)
    t.type(res.body.error, 'string')
  }
  const bob = await registerUser(f.app)
  const foreign = await call(bob, 'POST', url('sync'), {})
  t.equal(foreign.status, 404)
  t.match(foreign.body.error, /not found/)
  const sim2 = await call(owner, 'POST', '/v1/api/clusters', simClusterBody(f.sim, 'sim-again'))
  t.equal(sim2.status, 201)
  const other = await call(owner, 'POST', url('sync'), { cluster: 'sim-again' })
  t.equal(other.status, 409, 'deployed on "sim", not on "sim-again"')
  t.equal((await call(owner, 'GET', url('runs'))).body.total, 4, 'no run recorded by a refusal')
})
