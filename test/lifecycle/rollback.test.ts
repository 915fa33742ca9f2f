// Rollback on the simulator: v1 (nginx:1.25) and v2 (nginx:1.27 plus a ConfigMap) are deployed; rolling back
// to v1 puts nginx:1.25 back on the cluster (read with kubectl), prunes the ConfigMap v2 added, records one
// version restored from v1 and a run of it (trigger rollback, rollback_of 1). A dry run changes nothing and
// answers the image diff. Refusals (missing version, another user's workflow, bad body, a run in progress)
// record nothing.
import t from 'tap'
import { runFixture, node } from '../runs/fixture.ts'
import { registerUser } from '../helpers/auth.ts'
import { widget } from '../plugins/fixtures.ts'

const NS = 'rb'
const f = await runFixture(t, { RUN_READY_TIMEOUT_MS: 1500 })
const { owner, call, kubectl, kubectlJson } = f

const web = (image: string) => node('web', 'deployment', { name: 'web', namespace: NS, image, port: 80, replicas: 2 })
const v1 = { nodes: [web('nginx:1.25')], edges: [] }
const v2 = { nodes: [web('nginx:1.27'), node('conf', 'configmap', { name: 'web-conf', namespace: NS, data: { MODE: 'v2' } })], edges: [] }

const id = await f.workflow(v1, 'rollback')
const url = (path: string) => `/v1/api/workflows/${id}/${path}`
const liveImage = async () => (await kubectlJson('get', 'deployment', 'web', '-n', NS)).spec.template.spec.containers[0].image
const configMapExists = async () => (await kubectl('get', 'configmaps', '-n', NS, '-o', 'name')).split('\n').includes('configmap/web-conf')
const versionCount = async () => (await call(owner, 'GET', url('versions'))).body.total as number

t.before(async () => {
  const first = await call(owner, 'POST', url('run'), {})
  if (first.body?.status !== 'completed' || first.body.version !== 1) throw new Error(`v1 run: ${JSON.stringify(first.body)}`)
  await f.save(id, v2)
  const second = await call(owner, 'POST', url('run'), {})
  if (second.body?.status !== 'completed' || second.body.version !== 2) throw new Error(`v2 run: ${JSON.stringify(second.body)}`)
})

t.test('v2 is what the cluster runs before any rollback', async (t) => {
  t.equal(await liveImage(), 'nginx:1.27')
  t.ok(await configMapExists(), 'the ConfigMap v2 added is there')
  t.equal(await versionCount(), 2)
})

t.test('a dry run answers the image diff and the graph changes, and changes nothing', async (t) => {
  const graphBefore = (await call(owner, 'GET', `/v1/api/workflows/${id}`)).body
  const res = await call(owner, 'POST', url('rollback'), { version: 1, dry_run: true })
  t.equal(res.status, 200, JSON.stringify(res.body))
  const { run, changes } = res.body
  t.match(run, { dry_run: true, status: 'completed', trigger: 'rollback', rollback_of: 1, version: 1 })
  const webNode = run.nodes.find((n: { kind: string }) => n.kind === 'Deployment')
  t.equal(webNode.action, 'configured', 'the Deployment would be changed')
  t.same(webNode.diff.changed.filter((c: { path: string }) => c.path.endsWith('.image')).map((c: { old: string; new: string }) => [c.old, c.new]), [['nginx:1.27', 'nginx:1.25']], 'the run\'s diff is the image going back')
  t.equal(changes.to_version, 1)
  t.same(changes.removed_nodes, [v2.nodes[1]], 'the graph loses the ConfigMap node (no live status in the diff)')
  t.same(changes.modified_nodes, [{ node_id: 'web', type: 'deployment', changes: [{ path: '/data/image', old: 'nginx:1.27', new: 'nginx:1.25' }] }])
  t.equal(await liveImage(), 'nginx:1.27', 'the cluster still runs v2')
  t.ok(await configMapExists(), 'nothing was pruned')
  t.equal(await versionCount(), 2, 'no version recorded')
  const graphAfter = (await call(owner, 'GET', `/v1/api/workflows/${id}`)).body
  t.same(graphAfter.nodes.map((n: { data: { image?: string } }) => n.data.image), graphBefore.nodes.map((n: { data: { image?: string } }) => n.data.image), 'the workflow\'s graph is unchanged')
  t.equal(graphAfter.run_count, 2, 'a dry run is not a counted run')
})

t.test('rolling back to v1 restores its graph as a new version, deploys it, and prunes what v2 added', async (t) => {
  const replicasBefore = (await kubectlJson('get', 'deployment', 'web', '-n', NS)).spec.replicas
  // Someone scaled by hand (kubectl now owns spec.replicas): the rollback takes the field back, not fails on it.
  await kubectl('scale', 'deployment/web', '--replicas=4', '-n', NS)
  const res = await call(owner, 'POST', url('rollback'), { version: 1 })
  t.equal(res.status, 200, JSON.stringify(res.body))
  const { run } = res.body
  t.match(run, { dry_run: false, status: 'completed', trigger: 'rollback', rollback_of: 1, version: 3, error: null })
  t.equal(await liveImage(), 'nginx:1.25', 'the cluster runs nginx:1.25 again (kubectl)')
  t.equal((await kubectlJson('get', 'deployment', 'web', '-n', NS)).spec.replicas, replicasBefore, 'the hand-scaled replicas taken back')
  t.notOk(await configMapExists(), 'the ConfigMap v2 added was pruned')
  const versions = (await call(owner, 'GET', url('versions?sort=version&order=asc'))).body
  t.equal(versions.total, 3, 'one version recorded: the restore; the run records no second one')
  t.match(versions.versions[2], { version: 3, restored_from: 1, is_automatic: true, run_status: 'completed', run_id: run.id })
  const wf = (await call(owner, 'GET', `/v1/api/workflows/${id}`)).body
  t.match(wf, { current_version: 3, run_count: 3, success_count: 3 })
  t.same(wf.nodes.map((n: { id: string; data: { image: string } }) => [n.id, n.data.image]), [['web', 'nginx:1.25']], 'the workflow\'s graph is v1\'s')
  t.same((await call(owner, 'GET', url(`runs/${run.id}`))).body, run, 'the run record says the same')
  const history = (await call(owner, 'GET', url('runs?sort=started_at&order=asc'))).body.runs
  t.same(history.map((r: { trigger: string; rollback_of: number | null }) => [r.trigger, r.rollback_of]), [['manual', null], ['manual', null], ['rollback', 1], ['rollback', 1]], 'earlier runs read manual')
})

t.test('refusals record nothing', async (t) => {
  const before = await versionCount()
  const missing = await call(owner, 'POST', url('rollback'), { version: 99 })
  t.equal(missing.status, 404)
  t.match(missing.body.error, /version not found/)
  const bob = await registerUser(f.app)
  const foreign = await call(bob, 'POST', url('rollback'), { version: 1 })
  t.equal(foreign.status, 404, 'another user\'s workflow')
  t.match(foreign.body.error, /not found/)
  for (const body of [{}, { version: 0 }, { version: 'one' }, { version: 1.5 }, { version: 1, force: true }, { version: 1, namespace: 'Bad_NS' }]) {
    const res = await call(owner, 'POST', url('rollback'), body)
    t.equal(res.status, 400, `${JSON.stringify(body)} → 400`)
    t.type(res.body.error, 'string')
  }
  t.equal(await versionCount(), before, 'no version recorded by a refused rollback')
})

t.test('a version saved with a secret value cannot be rolled back to (as restore answers), dry run or not', async (t) => {
  const admin = await registerUser(f.app, { role: 'admin' })
  const plugin = (await call(admin, 'POST', '/v1/api/plugins', widget())).body
  const SECRET = 'rollback-secret-never-shown'
  // As a version saved before save refused secret values would look (written directly, as old data is).
  await f.app.db.collection('workflow_versions').updateOne({ workflow_id: id, version: 2 }, {
    $set: { nodes: [{ id: 'old', type: 'plugin', position: { x: 0, y: 0 }, data: { name: 'old', namespace: NS, pluginId: plugin.id, size: 2, token: SECRET } }] },
  })
  const before = await versionCount()
  for (const dry_run of [false, true]) {
    const res = await call(owner, 'POST', url('rollback'), { version: 2, dry_run })
    t.equal(res.status, 400, `dry_run ${dry_run}`)
    t.match(res.body.error, /^version 2 cannot be restored: it was saved with a secret value/)
    t.notOk(JSON.stringify(res.body).includes(SECRET), 'the value is not in the reply')
  }
  t.equal(await versionCount(), before, 'nothing recorded')
  t.equal(await liveImage(), 'nginx:1.25', 'nothing applied')
})

t.test('while a run of the workflow is running: 409, nothing restored', async (t) => {
  // A run whose workload never gets ready holds the run lock until the ready timeout.
  f.sim.failingImages.neverReady('nginx:stuck')
  await f.save(id, { nodes: [web('nginx:stuck')], edges: [] })
  const held = await f.app.services.runs.start(owner.user.id, id, {})
  const versions = await versionCount()
  const res = await call(owner, 'POST', url('rollback'), { version: 1 })
  t.equal(res.status, 409)
  t.match(res.body.error, /already running/)
  t.equal(await versionCount(), versions, 'no version recorded')
  const wf = (await call(owner, 'GET', `/v1/api/workflows/${id}`)).body
  t.equal(wf.nodes[0].data.image, 'nginx:stuck', 'the graph was not restored')
  t.equal((await held.done).status, 'failed', 'the held run ends on its own')
})
