import t from 'tap'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'

const { app } = await startTestApp(t)
const alice = await registerUser(app)
const bob = await registerUser(app)
const as = (u: { token: string }) => ({ authorization: `Bearer ${u.token}` })
// A complete workflow document written straight to the database, behind the services' backs.
const rawWorkflow = (id: string, owner: string, name: string, at: Date) => ({
  _id: id as never, owner_id: owner, name, description: '', cluster_id: null, nodes: [], edges: [], metadata: {}, status: 'draft',
  current_version: 0, run_count: 0, success_count: 0, failure_count: 0, last_run_at: null, created_at: at, updated_at: at,
})
const stats = async (u = alice) => (await app.inject({ url: '/v1/api/dashboard/stats', headers: as(u) })).json()

t.test('statistics start at zero and follow workflow changes', async (t) => {
  const first = await stats()
  t.match(first, { total_workflows: { value: 0, change: 0, trend: 'neutral' }, success_rate: { value: 0 }, clusters: { value: 0 }, computed_at: String })
  const updated = app.bus.next('stats.updated', (e) => e.owner_id === alice.user.id)
  const created = await app.inject({ method: 'POST', url: '/v1/api/workflows', headers: as(alice), payload: { name: 'counted' } })
  await updated
  const after = await stats()
  t.match(after.total_workflows, { value: 1, change: 0, trend: 'neutral' }, 'new since last week: no percentage of nothing, no previous data')
  const published = app.bus.next('stats.updated', (e) => e.owner_id === alice.user.id)
  await app.inject({ method: 'PUT', url: `/v1/api/workflows/${created.json().id}/status`, headers: as(alice), payload: { status: 'published' } })
  await published
  t.equal((await stats()).published_workflows.value, 1)
  t.equal((await stats(bob)).total_workflows.value, 0, 'per user')
})

t.test('reading statistics does not count: drift stays until the scheduled repair runs', async (t) => {
  const now = new Date()
  await app.db.collection('workflows').insertOne(rawWorkflow('ffffffffffffffffffffffff', alice.user.id, 'sneaked in', now))
  t.equal((await stats()).total_workflows.value, 1, 'the stored figure is served')
  await app.services.stats.refreshAll()
  t.equal((await stats()).total_workflows.value, 2, 'the repair job corrects it')
})

t.test('the week-over-week change compares against 7 days ago', async (t) => {
  const old = new Date(Date.now() - 10 * 24 * 3600 * 1000)
  await app.db.collection('workflows').insertMany([1, 2].map((i) => rawWorkflow(`eeeeeeeeeeeeeeeeeeeeeee${i}`, bob.user.id, `old ${i}`, old)))
  await app.db.collection('workflows').insertOne(rawWorkflow('dddddddddddddddddddddddd', bob.user.id, 'new', new Date()))
  await app.services.stats.refresh(bob.user.id)
  t.match((await stats(bob)).total_workflows, { value: 3, change: 50, trend: 'up' })
})

t.test('recent workflows: the caller\'s, most recently updated first, limited', async (t) => {
  const res = await app.inject({ url: '/v1/api/dashboard/recent-workflows?limit=2', headers: as(alice) })
  t.equal(res.statusCode, 200)
  t.equal(res.json().workflows.length, 2)
  t.ok(res.json().workflows.every((w: { owner_id: string }) => w.owner_id === alice.user.id))
  t.equal((await app.inject({ url: '/v1/api/dashboard/recent-workflows?limit=0', headers: as(alice) })).statusCode, 400)
})

t.test('search: literal, owner-scoped, across workflows and templates, capped per group', async (t) => {
  for (const name of ['alpha (beta)', 'alphabet', 'gamma']) await app.inject({ method: 'POST', url: '/v1/api/workflows', headers: as(bob), payload: { name } })
  let res = await app.inject({ url: `/v1/api/search?q=${encodeURIComponent('(beta)')}`, headers: as(bob) })
  t.equal(res.statusCode, 200)
  t.same(res.json().workflows.map((w: { name: string }) => w.name), ['alpha (beta)'])
  res = await app.inject({ url: '/v1/api/search?q=alpha&limit=1', headers: as(bob) })
  t.equal(res.json().workflows.length, 1)
  res = await app.inject({ url: '/v1/api/search?q=alpha', headers: as(alice) })
  t.same(res.json().workflows, [], 'another user\'s workflows are not found')
  res = await app.inject({ url: '/v1/api/search?q=ingress', headers: as(alice) })
  t.same(res.json().templates.map((x: { name: string }) => x.name), ['ingress'])
  t.same(Object.keys(res.json()).sort(), ['builds', 'clusters', 'plugins', 'registries', 'resources', 'templates', 'workflows'])
  t.equal((await app.inject({ url: '/v1/api/search?q=', headers: as(alice) })).statusCode, 400)
})

t.test('templates list the built-in palette', async (t) => {
  const res = await app.inject({ url: '/v1/api/templates', headers: as(alice) })
  t.equal(res.statusCode, 200)
  t.equal(res.json().templates.length, 16)
  t.match(res.json().templates.find((x: { name: string }) => x.name === 'hpa'), { category: 'scaling', is_plugin: false })
})

t.test('search: a blank query is 400, not everything', async (t) => {
  for (const q of ['%20', '%20%20%09', '%0A']) {
    const res = await app.inject({ url: `/v1/api/search?q=${q}`, headers: as(bob) })
    t.equal(res.statusCode, 400, `q=${q}`)
    t.match(res.json().error, /q/, 'the message names the parameter')
  }
  await t.rejects(app.services.search.search(bob.user.id, '  ', 5), /non-space/, 'the service refuses it too')
  t.equal((await app.inject({ url: '/v1/api/search?q=%20alpha%20', headers: as(bob) })).statusCode, 200, 'surrounding spaces are fine')
})
