// The KubeOrch UI's resource pages on the adapter (CONTRACT.md §2.7, OBSERVED rows 14–15): the list with
// the exact query strings the page sends (sync on first load, hideSystem, limit/offset, sort_by/sort_order,
// cluster/namespace/type/search), the detail page's {resource, history}, favourites, the pods of a
// workload, refusals in the UI's {error, message}, and the bounded sync before a list.
import t, { type Test } from 'tap'
import { runFixture, node, edge, TRIGGER } from '../../runs/fixture.ts'
import { registerUser, type TestUser } from '../../helpers/auth.ts'
import { freePort } from '../../helpers/ports.ts'
import { raw, waitFor } from '../../kube-sim/test-helpers.ts'
import { MANAGED_BY, MANAGED_BY_LABEL, NODE_ID_ANNOTATION, WORKFLOW_ID_ANNOTATION } from '../../../src/manifests/metadata.ts'
import { ListSyncs, FRESH_MS } from '../../../src/compat/kubeorch/list-sync.ts'
import { UpstreamError } from '../../../src/errors.ts'

// The simulator's cron clock runs a minute per second, so a CronJob starts a Job every second.
const f = await runFixture(t, { RUN_READY_TIMEOUT_MS: 8000 }, { timing: { cronMinuteMs: 1000 } })
const { app, owner: alice, call } = f
const bob = await registerUser(app)

const STATUSES = ['running', 'pending', 'failed', 'completed', 'unknown', 'deleted', 'warning']
type Json = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

/** A request as the UI sends it, on the adapter's root. */
async function ui(u: TestUser | null, method: 'GET' | 'PATCH' | 'POST', path: string, payload?: object) {
  const res = await app.inject({ method, url: `/kubeorch/v1/api${path}`, headers: u ? u.headers : {}, ...(payload && { payload }) })
  return { status: res.statusCode, body: (res.body ? res.json() : undefined) as Json }
}

// A deployed workflow: a Deployment of two replicas and its Service, run for real on the simulator.
const wfRes = await call(alice, 'POST', '/v1/api/workflows', { name: 'shop-ui', cluster_id: 'sim' })
const wfId = wfRes.body.id as string
await f.save(wfId, {
  nodes: [
    node('n-web', 'deployment', { name: 'web', namespace: 'uishop', image: 'nginx:1.27', port: 8080, replicas: 2 }),
    node('n-svc', 'service', { name: 'web-svc', namespace: 'uishop', serviceType: 'ClusterIP', port: 80, targetPort: 8080 }),
  ],
  edges: [edge('n-web', 'n-svc')],
})
const ran = await call(alice, 'POST', `/v1/api/workflows/${wfId}/run`, { trigger_data: TRIGGER })
if (ran.body?.status !== 'completed') throw new Error(`run: ${ran.status} ${JSON.stringify(ran.body)}`)

// Objects of the same workflow made straight in the cluster (found only by a sync): one in the user's
// namespace, one in kube-system (a system namespace the page hides).
const labelled = (nodeId: string) => ({ labels: { [MANAGED_BY_LABEL]: MANAGED_BY }, annotations: { [WORKFLOW_ID_ANNOTATION]: wfId, [NODE_ID_ANNOTATION]: nodeId } })
async function create(path: string, body: object) {
  const res = await raw(f.sim, 'POST', path, { body })
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${res.text}`)
}
await create('/api/v1/namespaces/uishop/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'found-later', ...labelled('n-extra') }, data: { a: '1' } })
await create('/api/v1/namespaces/kube-system/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'sys-config', ...labelled('n-sys') }, data: { b: '2' } })

/** Every field the list and detail pages read, with its type and allowed values. */
function checkUiResource(t: Test, r: Json, what: string) {
  for (const key of ['id', 'name', 'type', 'uid', 'resourceVersion', 'createdAt', 'clusterName', 'userNotes', 'workflowId']) t.type(r[key], 'string', `${what}: ${key} is a string`)
  t.ok(r.namespace === null || typeof r.namespace === 'string', `${what}: namespace`)
  t.ok(STATUSES.includes(r.status), `${what}: status "${r.status}" is one the page has a badge for`)
  t.ok(!Number.isNaN(Date.parse(r.createdAt)), `${what}: createdAt is a date`)
  t.type(r.isFavorite, 'boolean', `${what}: isFavorite`)
  t.ok(Array.isArray(r.userTags), `${what}: userTags`)
  t.ok(Array.isArray(r.ownerReferences), `${what}: ownerReferences`)
  for (const key of ['labels', 'annotations', 'spec']) t.ok(r[key] && typeof r[key] === 'object' && !Array.isArray(r[key]), `${what}: ${key} is an object`)
}

t.test('the first load, verbatim: ?sync=true&hideSystem=true&limit=25&offset=0', async (t) => {
  const res = await ui(alice, 'GET', '/resources?sync=true&hideSystem=true&limit=25&offset=0')
  t.equal(res.status, 200, JSON.stringify(res.body))
  t.ok(Array.isArray(res.body.resources))
  t.type(res.body.total, 'number')
  t.same(res.body.sync, { state: 'done' }, 'the sync ran before the list')
  const byName = new Map(res.body.resources.map((r: Json) => [`${r.type}/${r.name}`, r]))
  t.ok(byName.has('Deployment/web') && byName.has('Service/web-svc'), 'the run\'s objects')
  t.ok(byName.has('ConfigMap/found-later'), 'the sync adopted an object made outside a run')
  t.notOk(byName.has('ConfigMap/sys-config'), 'hideSystem leaves kube-system out')
  t.notOk(res.body.resources.some((r: Json) => r.type === 'Pod'), 'pods are not listed unless asked for')
  t.equal(res.body.total, res.body.resources.length, 'total counts what the filters keep')
  for (const r of res.body.resources) checkUiResource(t, r, `${r.type}/${r.name}`)
  const web = byName.get('Deployment/web') as Json
  t.match(web, { type: 'Deployment', namespace: 'uishop', clusterName: 'sim', workflowId: wfId, status: 'running', isFavorite: false, userTags: [], userNotes: '' })
  t.equal(web.spec.replicas, 2, 'the desired replicas, as the list page types spec')

  const all = await ui(alice, 'GET', '/resources?sync=true&limit=25&offset=0')
  t.ok(all.body.resources.some((r: Json) => r.name === 'sys-config' && r.namespace === 'kube-system'), 'without hideSystem it is listed')
  t.equal(all.body.total, res.body.total + 1)
  t.same(all.body.sync, { state: 'reused' }, 'a second sync=true within the window reuses the first sync')
})

t.test('a second load within the window does not sync again; the watchers still keep the records', async (t) => {
  await create('/api/v1/namespaces/uishop/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'made-in-window', ...labelled('n-late') }, data: {} })
  const res = await ui(alice, 'GET', '/resources?sync=true&hideSystem=true&limit=25&offset=0')
  t.same(res.body.sync, { state: 'reused' })
  t.notOk(res.body.resources.some((r: Json) => r.name === 'made-in-window'), 'not found: no second sync ran')
  const forced = await call(alice, 'POST', '/v1/api/resources/sync', { cluster: 'sim' })
  t.same(forced.body, { created: 1, updated: 0, deleted: 0 }, 'the object was still there to find')
})

t.test('the page\'s filters: cluster, namespace, type, search; offset pages', async (t) => {
  const names = async (query: string) => {
    const res = await ui(alice, 'GET', `/resources?${query}`)
    t.equal(res.status, 200, query)
    return res.body.resources.map((r: Json) => `${r.type}/${r.name}`).sort()
  }
  t.same(await names('hideSystem=true&type=Deployment&limit=25&offset=0'), ['Deployment/web'])
  t.same(await names('hideSystem=true&type=Service&cluster=sim&namespace=uishop&limit=25&offset=0'), ['Service/web-svc'])
  t.same(await names('hideSystem=true&search=found&limit=25&offset=0'), ['ConfigMap/found-later'])
  t.same(await names('hideSystem=true&cluster=elsewhere&limit=25&offset=0'), [])
  t.same(await names('namespace=kube-system&limit=25&offset=0'), ['ConfigMap/sys-config'])
  t.same(await names('namespace=kube-system&hideSystem=true&limit=25&offset=0'), [], 'hideSystem wins over a system namespace filter')
  const everything = await ui(alice, 'GET', '/resources?hideSystem=true&sort_by=name&sort_order=asc&limit=100&offset=0')
  const first = await ui(alice, 'GET', '/resources?hideSystem=true&sort_by=name&sort_order=asc&limit=2&offset=0')
  const second = await ui(alice, 'GET', '/resources?hideSystem=true&sort_by=name&sort_order=asc&limit=2&offset=2')
  t.equal(first.body.total, everything.body.total, 'total is the whole count, not the page\'s')
  t.same([...first.body.resources, ...second.body.resources].map((r: Json) => r.id), everything.body.resources.slice(0, 4).map((r: Json) => r.id), 'offset 2 with limit 2 is the second page')
})

t.test('sort_by: every column of the page, both directions', async (t) => {
  const keyOf: Record<string, (r: Json) => string> = {
    name: (r) => r.name, type: (r) => r.type, namespace: (r) => r.namespace ?? '', cluster: (r) => r.clusterName, status: (r) => r.status, created: (r) => r.createdAt,
  }
  // A second cluster's record, so sorting by cluster has two values to order.
  const other = await call(alice, 'POST', '/v1/api/clusters', { name: 'another', server: f.sim.url, auth_type: 'token', credentials: { token: f.sim.identities.admin.token, ca_data: f.sim.caPem } })
  t.equal(other.status, 201)
  await app.services.resources.recordApplied(alice.user.id, { workflow_id: wfId, cluster_id: other.body.id, cluster: 'another' }, [
    { node_id: 'n-x', api_version: 'v1', kind: 'ConfigMap', name: 'aaa-elsewhere', namespace: 'uishop', action: 'created', uid: null, labels: {} },
  ])
  for (const [column, key] of Object.entries(keyOf)) {
    for (const order of ['asc', 'desc'] as const) {
      const res = await ui(alice, 'GET', `/resources?hideSystem=true&sort_by=${column}&sort_order=${order}&limit=25&offset=0`)
      t.equal(res.status, 200, `${column} ${order}`)
      const values = res.body.resources.map(key)
      const sorted = [...values].sort()
      if (order === 'desc') sorted.reverse()
      t.same(values, sorted, `sorted by ${column}, ${order}`)
    }
  }
  const clusters = (await ui(alice, 'GET', '/resources?sort_by=cluster&sort_order=asc&limit=25&offset=0')).body.resources.map((r: Json) => r.clusterName)
  t.equal(clusters[0], 'another', 'the cluster column orders by cluster name')
  await app.services.resources.markDeleted(alice.user.id, other.body.id, [{ kind: 'ConfigMap', name: 'aaa-elsewhere', namespace: 'uishop' }])
  t.equal((await call(alice, 'DELETE', '/v1/api/clusters/another')).status, 204)
})

t.test('bad list queries are 400 with error and message', async (t) => {
  for (const query of ['sort_by=size&sort_order=asc', 'sort_by=name&sort_order=up', 'limit=500&offset=0', 'limit=25&offset=-5', 'sync=maybe', 'hideSystem=perhaps', 'bogus=1', 'type=' + 'x'.repeat(200)]) {
    const res = await ui(alice, 'GET', `/resources?${query}`)
    t.equal(res.status, 400, query)
    t.type(res.body.error, 'string', `${query}: error`)
    t.equal(res.body.message, res.body.error, `${query}: message`)
  }
  const anonymous = await ui(null, 'GET', '/resources?sync=true&hideSystem=true&limit=25&offset=0')
  t.equal(anonymous.status, 401)
  t.equal(anonymous.body.message, anonymous.body.error)
})

t.test('a sync that fails does not fail the list: the page shows what is recorded, the reply says why', async (t) => {
  const dead = await call(bob, 'POST', '/v1/api/clusters', { name: 'dead', server: `https://127.0.0.1:${await freePort()}`, auth_type: 'token', credentials: { token: 'x', ca_data: f.sim.caPem } })
  t.equal(dead.status, 201, JSON.stringify(dead.body))
  await app.services.resources.recordApplied(bob.user.id, { workflow_id: 'w-bob', cluster_id: dead.body.id, cluster: 'dead' }, [
    { node_id: 'n', api_version: 'v1', kind: 'ConfigMap', name: 'bobs', namespace: 'default', action: 'created', uid: null, labels: {} },
  ])
  const res = await ui(bob, 'GET', '/resources?sync=true&hideSystem=true&limit=25&offset=0')
  t.equal(res.status, 200)
  t.same(res.body.resources.map((r: Json) => r.name), ['bobs'], 'the recorded state')
  t.equal(res.body.sync.state, 'failed')
  t.match(res.body.sync.error, /cluster "dead"/)
  t.notMatch(JSON.stringify(res.body), /ECONNREFUSED|at .*\.ts:\d+/, 'no internals')
  const again = await ui(bob, 'GET', '/resources?sync=true&hideSystem=true&limit=25&offset=0')
  t.equal(again.body.sync.state, 'failed', 'a failed sync is tried again, not reused')
})

t.test('ListSyncs: one sync per user and cluster per window, bounded waits, failures not kept', async (t) => {
  let now = 1_000_000
  let calls = 0
  const gates: Array<{ resolve: () => void; reject: (e: Error) => void }> = []
  const syncs = new ListSyncs({
    sync: () => { calls++; return new Promise<void>((resolve, reject) => gates.push({ resolve, reject })) },
    waitMs: 50, now: () => now, log: { warn: () => {} },
  })
  const first = syncs.before('u1')
  gates[0].resolve()
  t.same(await first, { state: 'done' })
  t.same(await syncs.before('u1'), { state: 'reused' })
  t.equal(calls, 1)
  const otherCluster = syncs.before('u1', 'c2')
  const otherUser = syncs.before('u2')
  t.equal(calls, 3, 'another cluster reference and another user sync on their own')
  gates[1].resolve(); gates[2].resolve()
  await Promise.all([otherCluster, otherUser])
  now += FRESH_MS
  const late = syncs.before('u1')
  t.equal(calls, 4, 'after the window a new sync runs')
  t.same(await late, { state: 'running' }, 'a sync slower than waitMs: the list goes on without it')
  gates[3].reject(new UpstreamError('cluster "x" is unreachable'))
  now += 1
  t.same(await syncs.before('u1'), { state: 'failed', error: 'cluster "x" is unreachable' }, 'a joiner sees how it ended')
  const retried = syncs.before('u1')
  t.equal(calls, 5, 'a failed sync is not reused')
  gates[4].reject(new Error('socket hang up at /srv/x.ts:1'))
  t.same(await retried, { state: 'failed', error: 'the sync failed' }, 'an unexpected error is not shown')
})

let webId = ''
t.test('the detail page: {resource, history}', async (t) => {
  const list = await ui(alice, 'GET', '/resources?hideSystem=true&type=Deployment&limit=25&offset=0')
  webId = list.body.resources[0].id
  const res = await ui(alice, 'GET', `/resources/${webId}`)
  t.equal(res.status, 200)
  checkUiResource(t, res.body.resource, 'detail')
  t.match(res.body.resource, { id: webId, name: 'web', type: 'Deployment', namespace: 'uishop', clusterName: 'sim', workflowId: wfId, workflowName: 'shop-ui' })
  t.ok(Array.isArray(res.body.history))
  for (const h of res.body.history) {
    t.type(h.id, 'string'); t.type(h.action, 'string')
    t.ok(!Number.isNaN(Date.parse(h.timestamp)), 'history timestamps are dates')
  }
  t.same(res.body.history.map((h: Json) => h.action), ['created'], 'what is known: when it was first recorded')
  t.equal(res.body.history[0].timestamp, res.body.resource.createdAt)
})

t.test('favourite, tags and notes as the page sends them', async (t) => {
  const before = (await ui(alice, 'GET', `/resources/${webId}`)).body.resource
  const res = await ui(alice, 'PATCH', `/resources/${webId}`, { isFavorite: !before.isFavorite, userTags: before.userTags, userNotes: before.userNotes })
  t.equal(res.status, 200)
  t.equal(res.body.resource.isFavorite, true)
  const tagged = await ui(alice, 'PATCH', `/resources/${webId}`, { isFavorite: true, userTags: ['prod', 'web'], userNotes: 'the storefront' })
  t.match(tagged.body.resource, { isFavorite: true, userTags: ['prod', 'web'], userNotes: 'the storefront' })
  t.match((await call(alice, 'GET', `/v1/api/resources/${webId}`)).body, { is_favorite: true, user_tags: ['prod', 'web'], user_notes: 'the storefront' }, 'stored as /v1/api has it')
  for (const bad of [{ isFavorite: 'yes' }, { userTags: ['a', 'a'] }, { userNotes: 'x'.repeat(4001) }, { status: 'running' }, {}]) {
    const refused = await ui(alice, 'PATCH', `/resources/${webId}`, bad)
    t.equal(refused.status, 400, Object.keys(bad).join() || 'empty')
    t.equal(refused.body.message, refused.body.error, 'error and message')
  }
  t.match((await ui(alice, 'GET', `/resources/${webId}`)).body.resource, { userTags: ['prod', 'web'], userNotes: 'the storefront' }, 'nothing half-written')
})

t.test('the pods of a workload: pods[] with id, name, namespace, status, spec.nodeName', async (t) => {
  await waitFor('two pods', async () => (await ui(alice, 'GET', `/resources/${webId}/pods`)).body.pods?.length === 2)
  const res = await ui(alice, 'GET', `/resources/${webId}/pods`)
  t.equal(res.status, 200)
  for (const p of res.body.pods) {
    t.match(p, { name: /^web-/, namespace: 'uishop' })
    t.ok(STATUSES.includes(p.status), `status "${p.status}" has a badge`)
    t.type(p.spec, 'object')
    t.type(p.spec.nodeName, 'string', 'the node it runs on')
  }
  const recorded = await waitFor('the pods recorded', async () => {
    const pods = (await ui(alice, 'GET', `/resources/${webId}/pods`)).body.pods as Json[]
    return pods.every((p) => p.id) && pods
  })
  for (const p of recorded) t.equal(p.status, (await call(alice, 'GET', `/v1/api/resources/${p.id}`)).body.status, `${p.name}: the pod record's status`)
  const svc = (await ui(alice, 'GET', '/resources?type=Service&limit=25&offset=0')).body.resources[0]
  t.equal((await ui(alice, 'GET', `/resources/${svc.id}/pods`)).status, 200, 'a Service lists its pods through its selector')
})

t.test('another user\'s resource is 404 with error and message on every route; a malformed id too', async (t) => {
  for (const [method, path, payload] of [
    ['GET', `/resources/${webId}`], ['PATCH', `/resources/${webId}`, { isFavorite: true }], ['GET', `/resources/${webId}/pods`],
    ['GET', `/resources/${webId}/stream`], ['GET', `/resources/${webId}/logs/stream?follow=true&tail=100`],
    ['GET', `/resources/${webId}/exec/terminal?shell=%2Fbin%2Fsh&container=web`],
  ] as Array<['GET' | 'PATCH', string, object?]>) {
    const res = await ui(bob, method, path, payload)
    t.equal(res.status, 404, `${method} ${path}`)
    t.same(res.body, { error: 'resource not found', message: 'resource not found' })
  }
  t.equal((await ui(alice, 'GET', '/resources/not-an-id')).status, 404)
  t.equal((await ui(alice, 'GET', `/resources/${'x'.repeat(65)}`)).status, 400)
  t.match((await call(alice, 'GET', `/v1/api/resources/${webId}`)).body, { is_favorite: true }, 'bob changed nothing')
})

t.test('a crash-looping pod: its badge is its record\'s `failed`, although its phase still says Running', async (t) => {
  // Its pods carry our label, as the renderer's do: the watchers' pod streams select on it.
  f.sim.failingImages.crashLoop('registry.example/crashy')
  await create('/apis/apps/v1/namespaces/uishop/deployments', {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'crashy', ...labelled('n-crashy') },
    spec: { replicas: 1, selector: { matchLabels: { app: 'crashy' } }, template: { metadata: { labels: { app: 'crashy', [MANAGED_BY_LABEL]: MANAGED_BY } }, spec: { containers: [{ name: 'app', image: 'registry.example/crashy:1' }] } } },
  })
  t.equal((await call(alice, 'POST', '/v1/api/resources/sync', { cluster: 'sim' })).status, 200)
  const crashy = (await ui(alice, 'GET', '/resources?type=Deployment&search=crashy&limit=25&offset=0')).body.resources[0]
  let last: unknown
  const pod = await waitFor('the crash loop recorded on the pod', async () => {
    const pods = (await ui(alice, 'GET', `/resources/${crashy.id}/pods`)).body.pods as Json[]
    last = pods
    return pods?.length === 1 && pods[0].status === 'failed' && pods[0]
  }, 20_000).catch(async (err) => {
    t.comment(JSON.stringify(last))
    t.comment(JSON.stringify((await call(alice, 'GET', `/v1/api/resources/${crashy.id}`)).body))
    t.comment(JSON.stringify((await call(alice, 'GET', `/v1/api/resources?kind=Pod&limit=100`)).body.resources.map((r: Json) => [r.name, r.parent_id, r.status])))
    throw err
  })
  t.equal(pod.phase, 'Running', 'the phase alone would have said running')
  t.ok(pod.containers[0].restarts >= 1, 'it has restarted')
})

t.test('a CronJob\'s page asks for its children: the pods of its jobs, from their records', async (t) => {
  const ours = { [MANAGED_BY_LABEL]: MANAGED_BY }
  await create('/apis/batch/v1/namespaces/uishop/cronjobs', {
    apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'tick', ...labelled('n-tick') },
    spec: { schedule: '* * * * *', jobTemplate: { spec: { template: { metadata: { labels: { job: 'tick', ...ours } }, spec: { restartPolicy: 'Never', containers: [{ name: 'tick', image: 'busybox:1.36' }] } } } } },
  })
  t.equal((await call(alice, 'POST', '/v1/api/resources/sync', { cluster: 'sim' })).status, 200)
  const cron = (await ui(alice, 'GET', '/resources?type=CronJob&limit=25&offset=0')).body.resources[0]
  t.match(cron, { name: 'tick', type: 'CronJob' })
  t.equal((await call(alice, 'GET', `/v1/api/resources/${cron.id}/pods`)).status, 404, '/v1/api has no selector to list a CronJob\'s pods by')
  const pods = await waitFor('a job\'s pod recorded under the CronJob', async () => {
    const res = await ui(alice, 'GET', `/resources/${cron.id}/pods`)
    return res.status === 200 && res.body.pods.length > 0 && res.body.pods as Json[]
  }, 20_000)
  for (const p of pods) {
    t.match(p, { id: String, name: /^tick-/, namespace: 'uishop' })
    t.ok(STATUSES.includes(p.status), `status "${p.status}" has a badge`)
    t.match((await ui(alice, 'GET', `/resources/${p.id}`)).body.resource, { type: 'Pod', parentId: cron.id })
  }
  t.equal((await ui(bob, 'GET', `/resources/${cron.id}/pods`)).status, 404, 'and only for its owner')
})
