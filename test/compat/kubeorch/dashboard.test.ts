// The KubeOrch UI's dashboard cards and its global search against the adapter (CONTRACT.md §2.3
// "Dashboard", §2.13 "Search"; OBSERVED.md rows 3, 23): the fields the UI reads, with their types and the
// status values it switches on, only the caller's own things, and the refusals with `error` and `message`.
import t, { type Test } from 'tap'
import { startTestApp } from '../../helpers/app.ts'
import { registerUser } from '../../helpers/auth.ts'
import { simClusterBody, startTestCluster } from '../../helpers/kube.ts'

const sim = await startTestCluster(t)
const { app } = await startTestApp(t)
const alice = await registerUser(app)
const bob = await registerUser(app)
const API = '/kubeorch/v1/api'

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each test reads the fields it checks
type Body = Record<string, any>
async function call(who: typeof alice, method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) {
  const res = await app.inject({ method, url, headers: who.headers, ...(payload && { payload }) })
  return { status: res.statusCode, body: (res.body ? res.json() : undefined) as Body }
}
const ui = (who: typeof alice, path: string) => call(who, 'GET', `${API}${path}`)

function refused(t: Test, res: { status: number; body: Body }, status: number, text?: RegExp) {
  t.equal(res.status, status)
  t.type(res.body.error, 'string')
  t.equal(res.body.message, res.body.error, 'message beside error')
  if (text) t.match(res.body.message, text)
}

const WORKFLOW_STATUSES = ['draft', 'published', 'archived']
const CLUSTER_STATUSES = ['connected', 'disconnected', 'error', 'unknown']
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

const cluster = (await call(alice, 'POST', '/v1/api/clusters', { ...simClusterBody(sim, 'shopsim'), display_name: 'Shop Sim' })).body
const front = (await call(alice, 'POST', '/v1/api/workflows', { name: 'shop-front', description: 'storefront', cluster_id: 'shopsim' })).body
const back = (await call(alice, 'POST', '/v1/api/workflows', { name: 'shop-back', description: 'orders' })).body
await call(alice, 'PUT', `/v1/api/workflows/${back.id}/status`, { status: 'archived' })
await call(bob, 'POST', '/v1/api/workflows', { name: 'shop-of-bob' })
// A tracked resource, recorded as a run records what it applied.
await app.services.resources.recordApplied(alice.user.id, { workflow_id: front.id, cluster_id: cluster.id, cluster: 'shopsim' }, [
  { node_id: 'node-1', api_version: 'apps/v1', kind: 'Deployment', name: 'shop-api', namespace: 'shop', action: 'created', uid: null, labels: {} },
])

t.test('GET /search?q=: workflows, resources and clusters with the fields the command palette shows', async (t) => {
  const res = await ui(alice, '/search?q=shop')
  t.equal(res.status, 200)
  const { workflows, resources, clusters } = res.body
  t.same(workflows.map((w: Body) => w.name).sort(), ['shop-back', 'shop-front'], 'only the caller\'s workflows')
  for (const w of workflows) {
    t.match(w, { id: String, name: String, description: String, status: String })
    t.ok(WORKFLOW_STATUSES.includes(w.status), `workflow status ${w.status} is the UI's`)
  }
  t.equal(workflows.find((w: Body) => w.id === back.id).status, 'archived')
  t.match(resources, [{ id: String, name: 'shop-api', namespace: 'shop', type: 'Deployment', clusterName: 'shopsim' }])
  t.equal(resources.length, 1)
  t.match(clusters, [{ name: 'shopsim', displayName: 'Shop Sim' }])
  t.equal(clusters.length, 1)
  t.ok(CLUSTER_STATUSES.includes(clusters[0].status), `cluster status ${clusters[0].status} is the UI's`)
})

t.test('search shows nothing of another user\'s', async (t) => {
  const res = await ui(bob, '/search?q=shop')
  t.equal(res.status, 200)
  t.same(res.body.workflows.map((w: Body) => w.name), ['shop-of-bob'])
  t.same(res.body.resources, [])
  t.same(res.body.clusters, [])
})

t.test('search refusals: a blank or missing term, an unknown parameter, no token', async (t) => {
  refused(t, await ui(alice, '/search?q=%20%20'), 400, /q/)
  refused(t, await ui(alice, '/search'), 400, /q/)
  refused(t, await ui(alice, '/search?q=shop&everything=1'), 400, /everything/)
  const anonymous = await app.inject({ url: `${API}/search?q=shop` })
  refused(t, { status: anonymous.statusCode, body: anonymous.json() }, 401)
})

t.test('GET /dashboard/recent-workflows: workflows[] with the status the dashboard switches on', async (t) => {
  const res = await ui(alice, '/dashboard/recent-workflows')
  t.equal(res.status, 200)
  const list = res.body.workflows as Body[]
  t.same(list.map((w) => w.name), ['shop-back', 'shop-front'], 'the caller\'s, most recently updated first')
  for (const w of list) {
    t.match(w, { id: String, name: String, status: String, current_version: Number, updated_at: ISO })
    t.ok(WORKFLOW_STATUSES.includes(w.status), `status ${w.status} (another value crashes the dashboard)`)
    t.ok(w.cluster_id === null || typeof w.cluster_id === 'string')
  }
  t.equal(list.find((w) => w.id === front.id)!.cluster_id, 'shopsim', 'the cluster name, as the card shows it')
  t.same((await ui(bob, '/dashboard/recent-workflows')).body.workflows.map((w: Body) => w.name), ['shop-of-bob'])
  refused(t, await ui(alice, '/dashboard/recent-workflows?limit=0'), 400, /limit/)
})

t.test('GET /dashboard/stats: each card {value as text, change, trend}, the same numbers as /v1/api', async (t) => {
  const res = await ui(alice, '/dashboard/stats')
  t.equal(res.status, 200)
  const canonical = (await call(alice, 'GET', '/v1/api/dashboard/stats')).body
  for (const key of ['total_workflows', 'published_workflows', 'total_runs', 'success_rate']) {
    const card = res.body[key]
    t.type(card.value, 'string', `${key}.value is shown as it comes`)
    t.type(card.change, 'number')
    t.ok(['up', 'down', 'neutral'].includes(card.trend), `${key}.trend`)
    t.equal(card.change, canonical[key].change)
  }
  t.equal(res.body.total_workflows.value, '2')
  t.equal(res.body.total_workflows.value, String(canonical.total_workflows.value))
  t.equal(res.body.success_rate.value, `${canonical.success_rate.value}%`, 'a rate reads as one')
  const anonymous = await app.inject({ url: `${API}/dashboard/stats` })
  refused(t, { status: anonymous.statusCode, body: anonymous.json() }, 401)
})

t.test('GET /dashboard/stats: trends from the history, not "+100% from last month" on every card', async (t) => {
  // History seeded behind the services' backs: what existed 40 days ago, then what happened this week.
  const carol = await registerUser(app)
  const daysAgo = (d: number) => new Date(Date.now() - d * 24 * 3600 * 1000)
  let n = 0
  const workflow = (at: Date, status = 'draft') => ({
    owner_id: carol.user.id, name: `seeded ${++n}`, description: '', cluster_id: null, nodes: [], edges: [], metadata: {}, status,
    current_version: 0, run_count: 0, success_count: 0, failure_count: 0, last_run_at: null, created_at: at, updated_at: at,
  })
  const run = (at: Date, status: string) => ({ owner_id: carol.user.id, workflow_id: 'w', status, dry_run: false, started_at: at, finished_at: at })
  await app.db.collection('workflows').insertMany([workflow(daysAgo(40)), workflow(daysAgo(40), 'published'), workflow(daysAgo(40), 'published'), workflow(daysAgo(40), 'published')])
  await app.db.collection('workflow_runs').insertMany([run(daysAgo(40), 'completed'), run(daysAgo(40), 'completed')])
  await app.services.stats.refresh(carol.user.id)
  let cards = (await ui(carol, '/dashboard/stats')).body
  t.match(cards.total_workflows, { value: '4', change: 0, trend: 'neutral' }, 'the same count then and now: 0 %')
  t.match(cards.published_workflows, { value: '3', change: 0, trend: 'neutral' })
  t.match(cards.success_rate, { value: '100%', change: 0, trend: 'neutral' })

  // This week: one more workflow (4 → 5, +25 %), and a failed run (100 % → 66.7 %, a third down).
  await app.db.collection('workflows').insertOne(workflow(daysAgo(1)))
  await app.db.collection('workflow_runs').insertOne(run(daysAgo(1), 'failed'))
  await app.services.stats.refresh(carol.user.id)
  cards = (await ui(carol, '/dashboard/stats')).body
  t.match(cards.total_workflows, { value: '5', change: 25, trend: 'up' })
  t.match(cards.published_workflows, { value: '3', change: 0, trend: 'neutral' })
  t.match(cards.total_runs, { value: '3', change: 50, trend: 'up' })
  t.match(cards.success_rate, { value: '66.7%', change: -33.3, trend: 'down' })

  // A new account: everything grew from nothing, which has no percentage; the UI shows "No previous data".
  const dave = await registerUser(app)
  for (const name of ['first', 'second']) t.equal((await call(dave, 'POST', `${API}/workflows`, { name, description: '' })).status, 201)
  await app.services.stats.refresh(dave.user.id)
  cards = (await ui(dave, '/dashboard/stats')).body
  t.match(cards.total_workflows, { value: '2', change: 0, trend: 'neutral' })
  for (const key of ['total_workflows', 'published_workflows', 'total_runs', 'success_rate']) t.not(cards[key].change, 100, `${key}: no made-up +100 %`)
})

t.test('GET /dashboard/stats: measured against the figures recorded a week ago, deletions and status changes included', async (t) => {
  const erin = await registerUser(app)
  const daysAgo = (d: number) => new Date(Date.now() - d * 24 * 3600 * 1000)
  const old = daysAgo(40)
  await app.db.collection('workflows').insertMany(['kept', 'published'].map((name) => ({
    owner_id: erin.user.id, name, description: '', cluster_id: null, nodes: [], edges: [], metadata: {}, status: name === 'published' ? 'published' : 'draft',
    current_version: 0, run_count: 0, success_count: 0, failure_count: 0, last_run_at: null, created_at: old, updated_at: old,
  })))
  // Eight days ago there were 4 workflows, 2 of them published; two have been deleted since, and one unpublished.
  const zero = { total_workflows: 0, published_workflows: 0, total_runs: 0, success_rate: 0, clusters: 0, healthy_clusters: 0, tracked_resources: 0, builds: 0 }
  await app.db.collection('dashboard_stats').insertOne({
    _id: erin.user.id as never, metrics: {}, computed_at: daysAgo(8),
    history: [{ day: daysAgo(20).toISOString().slice(0, 10), figures: { ...zero, total_workflows: 9 } }, { day: daysAgo(8).toISOString().slice(0, 10), figures: { ...zero, total_workflows: 4, published_workflows: 2 } }],
  })
  await app.services.stats.refresh(erin.user.id)
  const cards = (await ui(erin, '/dashboard/stats')).body
  t.match(cards.total_workflows, { value: '2', change: -50, trend: 'down' }, '4 → 2 (the records alone would say 0 %: both left were created before)')
  t.match(cards.published_workflows, { value: '1', change: -50, trend: 'down' }, '2 → 1')
  const stored = await app.db.collection('dashboard_stats').findOne({ _id: erin.user.id as never })
  t.equal(stored!.history.at(-1).day, new Date().toISOString().slice(0, 10), 'today\'s figures are recorded for next week')
  t.match(stored!.history.at(-1).figures, { total_workflows: 2, published_workflows: 1 })
  await app.services.stats.refresh(erin.user.id)
  const again = await app.db.collection('dashboard_stats').findOne({ _id: erin.user.id as never })
  t.equal(again!.history.length, 3, 'one entry a day: the second computation today replaced the first')
})
