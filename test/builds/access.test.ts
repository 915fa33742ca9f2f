// Who may do what with builds, and what a start refuses before recording anything: another user's build is
// 404 on every route (get, stream, cancel, list); a cluster shared as viewer refuses a start (403), as
// deployer allows it; unknown cluster, registry or workflow → 404; bad input and repository URLs the
// outbound policy refuses → 400; the dashboard's `builds` statistic counts the owner's builds.
import t from 'tap'
import { registerUser } from '../helpers/auth.ts'
import { buildFixture } from './fixture.ts'

const f = await buildFixture(t)
const other = await registerUser(f.app, { role: 'user' })
const viewer = await registerUser(f.app, { role: 'user' })
const deployer = await registerUser(f.app, { role: 'user' })
for (const [user, role] of [[viewer, 'viewer'], [deployer, 'deployer']] as const) {
  const shared = await f.call(f.owner, 'POST', '/v1/api/clusters/sim/share', { email: user.email, role })
  if (shared.status !== 200 && shared.status !== 201) throw new Error(`share: ${shared.status} ${JSON.stringify(shared.body)}`)
}
const count = async () => f.app.db.collection('builds').countDocuments()

t.test('another user\'s build: 404 everywhere, never in their list or search', async (t) => {
  const hold = f.sim.failingBuilds.hold('team/mine', 'build')
  t.teardown(() => hold.release())
  const mine = await f.start({ image_name: 'team/mine' })
  t.equal(mine.status, 201)
  const id = mine.body.id
  for (const [method, url] of [['GET', `/v1/api/builds/${id}`], ['POST', `/v1/api/builds/${id}/cancel`], ['GET', `/v1/api/builds/${id}/stream`]] as const) {
    const res = await f.call(other, method, url)
    t.equal(res.status, 404, `${method} ${url}`)
    t.same(res.body, { error: 'build not found' })
  }
  const s = await f.stream(id, other)
  t.equal(s.status, 404, 'the stream refuses before any event')
  t.same((await f.call(other, 'GET', '/v1/api/builds')).body, { builds: [], total: 0, page: 1, limit: 20 })
  t.same((await f.call(other, 'GET', '/v1/api/search?q=team')).body.builds, [])
  t.equal((await f.call(f.owner, 'GET', '/v1/api/builds/not-an-id')).status, 404)
  await hold.reached
  t.equal((await f.until(id, (b) => b.status === 'building', 'building')).status, 'building', 'still running: the foreign cancel did nothing')
  t.equal((await f.call(f.owner, 'POST', `/v1/api/builds/${id}/cancel`)).status, 200)
})

t.test('cluster roles: viewer share → 403, deployer share → 201, not reachable → 404', async (t) => {
  const before = await count()
  const asViewer = await f.start({}, viewer)
  t.equal(asViewer.status, 403)
  t.match(asViewer.body.error, /shared with you as viewer/)
  t.equal((await f.start({}, other)).status, 404, 'a cluster not shared with the caller')
  t.equal(await count(), before, 'nothing recorded')
  const asDeployer = await f.start({ image_name: 'team/shared' }, deployer)
  t.equal(asDeployer.status, 201)
  t.equal((await f.call(f.owner, 'GET', `/v1/api/builds/${asDeployer.body.id}`)).status, 404, 'the build is the deployer\'s, not the cluster owner\'s')
  await f.app.services.builds.finished(asDeployer.body.id)
})

t.test('start refuses before recording anything', async (t) => {
  const before = await count()
  const wf = await f.call(f.owner, 'POST', '/v1/api/workflows', { name: 'refusals' })
  const othersWf = await f.call(other, 'POST', '/v1/api/workflows', { name: 'not-yours' })
  const cases: Array<[Record<string, unknown>, number, RegExp]> = [
    [{ registry_id: '0123456789abcdef01234567' }, 404, /registry not found/],
    [{ cluster: 'nope' }, 404, /cluster not found/],
    [{ workflow_id: othersWf.body.id, node_id: 'n1' }, 404, /workflow not found/],
    [{ workflow_id: wf.body.id, node_id: 'missing' }, 400, /node_id/],
    [{ repo_url: 'http://169.254.169.254/latest/meta-data.git' }, 400, /repo_url address 169\.254\.169\.254 is not allowed \(cloud metadata\)/],
    [{ repo_url: 'https://user:pw@example.com/x.git' }, 400, /credentials in the URL/],
    [{ repo_url: 'file:///etc/passwd' }, 400, /repo_url must use https/],
    [{ repo_url: 'not a url' }, 400, /absolute URL/],
    [{ context_dir: '../../etc' }, 400, /context_dir/],
    [{ dockerfile: '/etc/passwd' }, 400, /dockerfile/],
    [{ image_name: 'evil.example.com/x' }, 400, /registry host/],
    [{ image_tag: 'bad tag' }, 400, /image_tag/],
    [{ branch: '--upload-pack=x' }, 400, /branch/],
    [{ commit: 'deadbeef' }, 400, /commit/],
    [{ build_args: { 'BAD-KEY': 'x' } }, 400, /build_args/],
    [{ extra: true }, 400, /extra|additional/],
    [{ namespace: 'Not_Valid' }, 400, /namespace/],
  ]
  for (const [body, status, message] of cases) {
    const res = await f.start(body)
    t.equal(res.status, status, `${JSON.stringify(body)} → ${res.status} ${JSON.stringify(res.body)}`)
    t.match(res.body?.error, message)
  }
  t.equal(await count(), before, 'nothing recorded')
  t.equal((await f.call(f.owner, 'GET', '/v1/api/builds?status=bogus')).status, 400)
  t.equal((await f.call(f.owner, 'GET', '/v1/api/builds?sort=repo_url')).status, 400)
})

t.test('https only unless insecure is allowed', async (t) => {
  const strict = await import('../helpers/app.ts').then((m) => m.startTestApp(t, { ALLOW_INSECURE_CLUSTERS: false }))
  const user = await registerUser(strict.app, { role: 'admin' })
  const res = await strict.app.inject({
    method: 'POST', url: '/v1/api/builds/start', headers: user.headers,
    payload: { repo_url: 'http://git.example.com/x.git', registry_id: '0123456789abcdef01234567', image_name: 'a/b', cluster: 'c' },
  })
  // The registry is checked first, so name one that exists.
  t.equal(res.statusCode, 404)
  const reg = await strict.app.inject({ method: 'POST', url: '/v1/api/admin/registries', headers: user.headers, payload: { name: 'hub', registry_type: 'dockerhub' } })
  const again = await strict.app.inject({
    method: 'POST', url: '/v1/api/builds/start', headers: user.headers,
    payload: { repo_url: 'http://git.example.com/x.git', registry_id: reg.json().id, image_name: 'a/b', cluster: 'c' },
  })
  t.equal(again.statusCode, 400)
  t.match(again.json().error, /repo_url must use https/)
})

t.test('the dashboard counts the owner\'s builds', async (t) => {
  const stats = await f.call(f.owner, 'GET', '/v1/api/dashboard/stats')
  t.equal(stats.status, 200)
  const mine = await f.app.db.collection('builds').countDocuments({ owner_id: f.owner.user.id })
  t.ok(mine > 0)
  t.equal(stats.body.builds.value, mine)
  t.equal((await f.call(other, 'GET', '/v1/api/dashboard/stats')).body.builds.value, 0)
})
