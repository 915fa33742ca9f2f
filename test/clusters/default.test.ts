// A user's default cluster: the first one they add becomes it (as the first registry does), at most one is
// theirs whatever runs at once, and losing it (deleted, share revoked) falls back to their oldest cluster.
import t from 'tap'
import { startTestApp } from '../helpers/app.ts'
import { registerUser, type TestUser } from '../helpers/auth.ts'
import { startTestCluster, simClusterBody } from '../helpers/kube.ts'
import { ClusterRepository } from '../../src/repositories/clusters.ts'
import { indexSetups } from '../../src/repositories/indexes.ts'

const sim = await startTestCluster(t)
const { app } = await startTestApp(t)
const call = async (u: TestUser, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) => {
  const res = await app.inject({ method, url, headers: u.headers, ...(payload && { payload }) })
  return { status: res.statusCode, body: res.body ? res.json() : undefined }
}
const add = (u: TestUser, name: string, extra: object = {}) => call(u, 'POST', '/v1/api/clusters', { ...simClusterBody(sim, name), ...extra })
const defaultName = async (u: TestUser) => {
  const res = await call(u, 'GET', '/v1/api/clusters/default')
  return res.status === 200 ? res.body.name as string : res.status
}
/** How many stored clusters name the user as a default: the invariant is at most one. */
const defaultsOf = (u: TestUser) => app.db.collection('clusters').countDocuments({ default_of: u.user.id })

t.test('the first cluster a user adds is their default; the next ones are not', async (t) => {
  const ada = await registerUser(app)
  t.equal(await defaultName(ada), 404, 'no cluster, no default')
  const first = await add(ada, 'first')
  t.equal(first.status, 201)
  t.equal(first.body.is_default, true, 'the reply says so')
  const second = await add(ada, 'second')
  t.equal(second.body.is_default, false)
  t.equal(await defaultName(ada), 'first')
  const listed = (await call(ada, 'GET', '/v1/api/clusters?sort=created_at&order=asc')).body.clusters.map((c: { name: string; is_default: boolean }) => [c.name, c.is_default])
  t.same(listed, [['first', true], ['second', false]])

  const third = await add(ada, 'third', { is_default: true })
  t.equal(third.body.is_default, true, 'is_default: true on a later one moves the default')
  t.equal(await defaultName(ada), 'third')
  t.equal(await defaultsOf(ada), 1)
})

t.test('defaults are per user: another user\'s first cluster is theirs, and a share does not take it', async (t) => {
  const bo = await registerUser(app)
  const cy = await registerUser(app)
  t.equal((await add(bo, 'shared')).body.is_default, true)
  t.equal((await call(bo, 'POST', '/v1/api/clusters/shared/share', { email: cy.user.email, role: 'deployer' })).status, 200)
  t.equal((await add(cy, 'own')).body.is_default, true, 'a shared cluster reached first does not count as added')
  t.equal(await defaultName(cy), 'own')
  t.equal(await defaultName(bo), 'shared')
})

t.test('clusters added at once: exactly one becomes the default', async (t) => {
  const dee = await registerUser(app)
  const names = ['c0', 'c1', 'c2', 'c3', 'c4', 'c5']
  const replies = await Promise.all(names.map((n) => add(dee, n)))
  t.same(replies.map((r) => r.status), names.map(() => 201))
  const defaults = replies.filter((r) => r.body.is_default).map((r) => r.body.name)
  t.equal(defaults.length, 1, `one reply says default: ${defaults.join(', ')}`)
  t.equal(await defaultsOf(dee), 1, 'and one stored')
  t.equal(await defaultName(dee), defaults[0])
})

t.test('the database keeps one default per user, whoever writes', async (t) => {
  const eve = await registerUser(app)
  const repo = new ClusterRepository(app.db)
  await add(eve, 'e1')
  await add(eve, 'e2')
  const [e1, e2] = await Promise.all(['e1', 'e2'].map(async (n) => (await repo.findByName(eve.user.id, n))!.doc))
  t.equal(await repo.claimDefault(eve.user.id, e2._id), null, 'a claim while another is the default is refused')
  const results = await Promise.all([repo.setDefault(eve.user.id, e2._id), repo.claimDefault(eve.user.id, e1._id), repo.setDefault(eve.user.id, e1._id)])
  t.ok(results[0] && results[2], 'switches succeed')
  t.equal(await defaultsOf(eve), 1, 'still one default after racing switches and claims')
  await t.rejects(app.db.collection('clusters').updateOne({ _id: (await repo.findDefault(eve.user.id))!.doc._id === e1._id ? e2._id : e1._id } as never, { $push: { default_of: eve.user.id } } as never), { code: 11000 }, 'a direct second default is a duplicate key')
})

t.test('deleting the default makes the oldest remaining cluster the default; deleting the last leaves none', async (t) => {
  const fay = await registerUser(app)
  await add(fay, 'old')
  await add(fay, 'mid')
  await add(fay, 'new')
  t.equal((await call(fay, 'PUT', '/v1/api/clusters/new/default')).status, 200)
  t.equal((await call(fay, 'DELETE', '/v1/api/clusters/new')).status, 204)
  t.equal(await defaultName(fay), 'old')
  t.equal((await call(fay, 'DELETE', '/v1/api/clusters/mid')).status, 204)
  t.equal(await defaultName(fay), 'old', 'deleting another cluster leaves the default alone')
  t.equal((await call(fay, 'DELETE', '/v1/api/clusters/old')).status, 204)
  t.equal(await defaultName(fay), 404)
  t.equal((await add(fay, 'again')).body.is_default, true, 'a user with none again: the next added becomes it')
})

t.test('a revoked share that was the user\'s default hands it to their oldest cluster; other users keep theirs', async (t) => {
  const gus = await registerUser(app)
  const hal = await registerUser(app)
  await add(gus, 'team')
  t.equal((await call(gus, 'POST', '/v1/api/clusters/team/share', { email: hal.user.email, role: 'viewer' })).status, 200)
  await add(hal, 'mine')
  t.equal((await call(hal, 'PUT', '/v1/api/clusters/team/default')).status, 200)
  t.equal((await call(gus, 'DELETE', `/v1/api/clusters/team/share/${hal.user.id}`)).status, 204)
  t.equal(await defaultName(hal), 'mine')
  t.equal(await defaultName(gus), 'team', 'the owner\'s default is untouched')

  // Deleting a cluster that was several users' default: each falls back to their own oldest.
  t.equal((await call(gus, 'POST', '/v1/api/clusters/team/share', { email: hal.user.email, role: 'viewer' })).status, 200)
  t.equal((await call(hal, 'PUT', '/v1/api/clusters/team/default')).status, 200)
  t.equal((await call(gus, 'DELETE', '/v1/api/clusters/team')).status, 204)
  t.equal(await defaultName(hal), 'mine')
  t.equal(await defaultName(gus), 404, 'the owner had no other cluster')
})

t.test('a database from an earlier version: its plain default_of index gives way to the unique one', async (t) => {
  const c = app.db.collection('clusters')
  await c.dropIndex('one_default_per_user')
  await c.createIndex({ default_of: 1 })
  for (const setup of indexSetups) await setup(app.db)
  const names = (await c.indexes()).map((i) => i.name)
  t.ok(names.includes('one_default_per_user'))
  t.notOk(names.includes('default_of_1'))
})
