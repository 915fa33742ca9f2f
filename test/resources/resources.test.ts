// Tracked resources against the simulator: records written as a run writes them (recordApplied), the list
// filters and pages, the user fields, another user's ids, sync with objects made directly in the cluster,
// the pods of a workload, and a cluster that does not answer.
import t from 'tap'
import { startTestApp } from '../helpers/app.ts'
import { registerUser, type TestUser } from '../helpers/auth.ts'
import { startTestCluster } from '../helpers/kube.ts'
import { raw, waitFor } from '../kube-sim/test-helpers.ts'
import { freePort } from '../helpers/ports.ts'
import { MANAGED_BY, MANAGED_BY_LABEL, NODE_ID_ANNOTATION, WORKFLOW_ID_ANNOTATION } from '../../src/manifests/metadata.ts'
import { resourceReader } from '../../src/kube/resource-reader.ts'
import type { AppliedLike } from '../../src/services/resource-service.ts'
import type { KubeObject } from '../../src/manifests/types.ts'

const sim = await startTestCluster(t)
const { app } = await startTestApp(t, { CLUSTER_TIMEOUT_MS: 3000 })
const alice = await registerUser(app)
const bob = await registerUser(app)
const carol = await registerUser(app)

async function call(u: TestUser, method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, payload?: object) {
  const res = await app.inject({ method, url, headers: u.headers, ...(payload && { payload }) })
  return { status: res.statusCode, body: res.body ? res.json() : undefined }
}
const credentials = { token: sim.identities.admin.token, ca_data: sim.caPem }
async function addCluster(u: TestUser, name: string, server = sim.url) {
  const res = await call(u, 'POST', '/v1/api/clusters', { name, server, auth_type: 'token', credentials })
  if (res.status !== 201) throw new Error(JSON.stringify(res.body))
  return res.body as { id: string; name: string }
}
const seeded = await addCluster(alice, 'seeded')
const live = await addCluster(alice, 'live')
const wf = (await call(alice, 'POST', '/v1/api/workflows', { name: 'shop' })).body as { id: string }
const bobWf = (await call(bob, 'POST', '/v1/api/workflows', { name: 'bobs' })).body as { id: string }

const applied = (kind: string, name: string, namespace: string | null, extra: Partial<AppliedLike> = {}): AppliedLike => ({
  node_id: `node-${name}`, api_version: kind === 'Deployment' ? 'apps/v1' : 'v1', kind, name, namespace, action: 'created', uid: null, labels: { [MANAGED_BY_LABEL]: MANAGED_BY }, ...extra,
})
const liveDeployment = (name: string, ready: number): KubeObject => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: 'shop', uid: `uid-${name}`, generation: 1, labels: { [MANAGED_BY_LABEL]: MANAGED_BY } },
  spec: { replicas: 2 }, status: { observedGeneration: 1, replicas: 2, updatedReplicas: 2, readyReplicas: ready, availableReplicas: ready },
})

async function list(u: TestUser, query = '') {
  return call(u, 'GET', `/v1/api/resources${query ? `?${query}` : ''}`)
}

t.test('recordApplied writes what a run applied; failed and skipped objects are not recorded', async (t) => {
  const changed = app.bus.next('resources.changed', (p) => p.owner_id === alice.user.id)
  await app.services.resources.recordApplied(alice.user.id, { workflow_id: wf.id, cluster_id: seeded.id, cluster: 'seeded' }, [
    applied('Deployment', 'web', 'shop', { live: liveDeployment('web', 2), uid: 'uid-web' }),
    applied('Deployment', 'worker', 'shop', { live: liveDeployment('worker', 1) }),
    applied('Service', 'web', 'shop'),
    applied('ConfigMap', 'web-config', 'shop', { action: 'unchanged' }),
    applied('Namespace', 'shop', null),
    applied('ConfigMap', 'broken', 'shop', { action: 'failed' }),
    applied('Secret', 'skipped', 'shop', { action: 'skipped' }),
  ])
  await changed
  const res = await list(alice, 'limit=100')
  t.equal(res.status, 200)
  t.equal(res.body.total, 5)
  const web = res.body.resources.find((r: { kind: string; name: string }) => r.kind === 'Deployment' && r.name === 'web')
  t.match(web, {
    workflow_id: wf.id, node_id: 'node-web', owner_id: alice.user.id, cluster: 'seeded', cluster_id: seeded.id, namespace: 'shop', api_version: 'apps/v1',
    uid: 'uid-web', status: 'running', status_message: '2/2 replicas ready', ready: '2/2', counters: { replicas: 2, readyReplicas: 2 },
    is_favorite: false, user_tags: [], user_notes: '',
  })
  t.ok(web.last_seen_at)
  t.match(res.body.resources.find((r: { name: string }) => r.name === 'worker'), { status: 'pending', ready: '1/2' })
  t.match(res.body.resources.find((r: { kind: string }) => r.kind === 'Service'), { status: 'pending', status_message: /created; its status is not known yet/, ready: null })
  t.match(res.body.resources.find((r: { kind: string }) => r.kind === 'Namespace'), { namespace: null, name: 'shop' })
  t.notOk(res.body.resources.some((r: { name: string }) => r.name === 'broken' || r.name === 'skipped'))
  t.same(await app.services.resources.namespacesFor(alice.user.id, wf.id, seeded.id), ['shop'])
  t.same((await app.services.resources.findForNode(alice.user.id, wf.id, 'node-web')).map((r) => r.kind).sort(), ['Deployment', 'Service'])
})

t.test('list filters, literal search and pagination', async (t) => {
  const names = async (query: string) => (await list(alice, query)).body.resources.map((r: { kind: string; name: string }) => `${r.kind}/${r.name}`)
  t.same(await names('kind=Deployment&sort=name&order=asc'), ['Deployment/web', 'Deployment/worker'])
  t.same(await names('namespace=shop&kind=ConfigMap'), ['ConfigMap/web-config'])
  t.same(await names('status=running'), ['Deployment/web'], 'recorded with its live object: running')
  t.same(await names('status=pending&sort=name&order=asc'), ['Namespace/shop', 'Service/web', 'ConfigMap/web-config', 'Deployment/worker'], 'recorded without one, or not ready')
  t.equal((await list(alice, 'cluster=seeded')).body.total, 5, 'cluster by name')
  t.equal((await list(alice, `cluster=${seeded.id}`)).body.total, 5, 'cluster by id')
  t.equal((await list(alice, 'cluster=live')).body.total, 0)
  t.equal((await list(alice, `workflow_id=${wf.id}`)).body.total, 5)
  t.equal((await list(alice, `workflow_id=${bobWf.id}`)).body.total, 0)
  t.same(await names('search=WEB&sort=name&order=asc&kind=Deployment'), ['Deployment/web'], 'case-insensitive on the name')
  t.equal((await list(alice, 'search=w.b')).body.total, 0, 'search is literal, not a pattern')
  t.equal((await list(alice, 'search=web-c')).body.total, 1)
  const page2 = await list(alice, 'sort=name&order=asc&limit=2&page=2')
  t.match(page2.body, { total: 5, page: 2, limit: 2 })
  t.equal(page2.body.resources.length, 2)
  const all = (await list(alice, 'sort=name&order=asc&limit=100')).body.resources.map((r: { id: string }) => r.id)
  const paged = [...(await list(alice, 'sort=name&order=asc&limit=2&page=1')).body.resources, ...page2.body.resources, ...(await list(alice, 'sort=name&order=asc&limit=2&page=3')).body.resources].map((r: { id: string }) => r.id)
  t.same(paged, all, 'pages cover the list once, in order')
  for (const bad of ['sort=uid', 'status=gone', 'limit=101', 'page=0', 'colour=red']) t.equal((await list(alice, bad)).status, 400, bad)
})

t.test('PATCH takes only the user fields, and a run keeps them', async (t) => {
  const web = (await list(alice, 'kind=Deployment&search=web&sort=name&order=asc')).body.resources[0]
  const res = await call(alice, 'PATCH', `/v1/api/resources/${web.id}`, { is_favorite: true, user_tags: ['prod', 'frontend'], user_notes: 'the shop front' })
  t.equal(res.status, 200)
  t.match(res.body, { id: web.id, is_favorite: true, user_tags: ['prod', 'frontend'], user_notes: 'the shop front', status: 'running' })
  for (const body of [{ status: 'failed' }, { name: 'x' }, { is_favorite: true, labels: {} }, {}, { user_tags: ['a'.repeat(51)] }, { user_tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, { user_tags: ['a', 'a'] }, { user_notes: 'n'.repeat(4001) }, { is_favorite: 'yes' }]) {
    const bad = await call(alice, 'PATCH', `/v1/api/resources/${web.id}`, body)
    t.equal(bad.status, 400, JSON.stringify(body).slice(0, 60))
    t.type(bad.body.error, 'string')
  }
  await app.services.resources.recordApplied(alice.user.id, { workflow_id: wf.id, cluster_id: seeded.id, cluster: 'seeded' }, [applied('Deployment', 'web', 'shop', { action: 'configured', live: liveDeployment('web', 1) })])
  t.match((await call(alice, 'GET', `/v1/api/resources/${web.id}`)).body, { is_favorite: true, user_tags: ['prod', 'frontend'], user_notes: 'the shop front', status: 'pending', ready: '1/2' })
  t.equal((await list(alice)).body.total, 5, 'the same key is updated, not duplicated')
  // Re-applied unchanged: the object alone (the apply's answer) would say running; the stored status is the
  // watchers' (derived with its pods) and stays.
  await app.services.resources.recordApplied(alice.user.id, { workflow_id: wf.id, cluster_id: seeded.id, cluster: 'seeded' }, [applied('Deployment', 'web', 'shop', { action: 'unchanged', live: liveDeployment('web', 2) })])
  t.match((await call(alice, 'GET', `/v1/api/resources/${web.id}`)).body, { status: 'pending', ready: '1/2' }, 'an unchanged re-apply keeps the watched status')
})

t.test('another user\'s resource id is a 404 on every route, and nothing of the owner\'s changes', async (t) => {
  const target = (await list(alice, 'kind=Deployment&sort=name&order=asc')).body.resources[0]
  const before = JSON.stringify((await list(alice, 'limit=100&sort=name')).body)
  const requests: Record<string, { body?: object }> = { getResource: {}, updateResource: { body: { is_favorite: false, user_notes: 'stolen' } }, listResourcePods: {}, streamResource: {}, streamResourceLogs: {}, openResourceTerminal: {} }
  const paths = (app.swagger() as unknown as { paths: Record<string, Record<string, { operationId: string }>> }).paths
  let checked = 0
  for (const [path, ops] of Object.entries(paths)) {
    if (!path.startsWith('/v1/api/resources/{id}')) continue
    for (const [method, op] of Object.entries(ops)) {
      const req = requests[op.operationId]
      if (!t.ok(req, `${op.operationId} is in the BOLA table`)) continue
      for (const id of [target.id, '0123456789abcdef01234567', 'not-an-id']) {
        const res = await call(bob, method.toUpperCase() as 'GET', path.replace('{id}', id), req.body)
        t.equal(res.status, 404, `${method.toUpperCase()} ${path} (${id === target.id ? 'alice\'s id' : id})`)
        t.same(res.body, { error: 'resource not found' }, 'the same answer as a missing id')
      }
      checked++
    }
  }
  t.equal(checked, Object.keys(requests).length, 'every route in the table was exercised')
  t.equal((await list(bob)).body.total, 0, 'bob lists none of alice\'s')
  t.equal((await call(bob, 'POST', '/v1/api/resources/sync', { cluster: 'seeded' })).status, 404, 'nor syncs her cluster')
  t.equal((await call(bob, 'POST', '/v1/api/resources/sync', { cluster: seeded.id })).status, 404, 'by id either')
  t.equal(JSON.stringify((await list(alice, 'limit=100&sort=name')).body), before)
})

// Objects as the renderer labels them, created straight in the cluster (as if by an earlier process).
function labelled(workflowId: string, nodeId: string, labels: Record<string, string> = {}) {
  return { labels: { [MANAGED_BY_LABEL]: MANAGED_BY, ...labels }, annotations: { [WORKFLOW_ID_ANNOTATION]: workflowId, [NODE_ID_ANNOTATION]: nodeId } }
}
async function create(path: string, body: object) {
  const res = await raw(sim, 'POST', path, { body })
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${res.text}`)
  return res.json
}
const sync = (u: TestUser, cluster?: string) => call(u, 'POST', '/v1/api/resources/sync', cluster ? { cluster } : {})

t.test('sync adopts our labelled objects, updates known ones, marks vanished ones deleted, ignores the rest', async (t) => {
  await create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'store', ...labelled(wf.id, 'ns') } })
  await create('/apis/apps/v1/namespaces/store/deployments', {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'front', ...labelled(wf.id, 'node-front') },
    spec: { replicas: 1, selector: { matchLabels: { app: 'front' } }, template: { metadata: { labels: { app: 'front' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } } },
  })
  await create('/api/v1/namespaces/store/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'front-config', ...labelled(wf.id, 'node-cfg') }, data: { a: '1' } })
  await create('/api/v1/namespaces/store/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'front-secret', ...labelled(wf.id, 'node-sec') }, stringData: { password: 'hunter2-sync-secret' } })
  // Not ours: no managed-by label; another user's workflow; an ApplySet parent.
  await create('/api/v1/namespaces/store/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'foreign', annotations: { [WORKFLOW_ID_ANNOTATION]: wf.id } } })
  await create('/api/v1/namespaces/store/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'bobs-config', ...labelled(bobWf.id, 'b') } })
  await create('/api/v1/namespaces/store/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applyset-parent', ...labelled(wf.id, ''), labels: { [MANAGED_BY_LABEL]: MANAGED_BY, 'applyset.kubernetes.io/id': 'applyset-x-v1' } } })
  await waitFor('front ready', async () => (await raw(sim, 'GET', '/apis/apps/v1/namespaces/store/deployments/front')).json?.status?.readyReplicas === 1)
  // Known before the sync: front (without its live state yet), and one no longer in the cluster.
  await app.services.resources.recordApplied(alice.user.id, { workflow_id: wf.id, cluster_id: live.id, cluster: 'live' }, [
    { ...applied('Deployment', 'front', 'store'), node_id: 'node-front' }, applied('ConfigMap', 'gone', 'store'),
  ])

  const first = await sync(alice, 'live')
  t.equal(first.status, 200, JSON.stringify(first.body))
  t.same(first.body, { created: 3, updated: 1, deleted: 1 }, 'namespace, config map and secret new; front updated; gone deleted')
  const records = (await list(alice, 'cluster=live&limit=100&sort=name&order=asc')).body.resources as Array<Record<string, unknown>>
  t.same(records.map((r) => `${r.kind}/${r.name}`).sort(), ['ConfigMap/front-config', 'ConfigMap/gone', 'Deployment/front', 'Namespace/store', 'Secret/front-secret'])
  t.match(records.find((r) => r.name === 'front'), { status: 'running', ready: '1/1', node_id: 'node-front', workflow_id: wf.id, cluster: 'live', cluster_id: live.id })
  t.match(records.find((r) => r.name === 'gone'), { status: 'deleted', ready: null })
  t.match(records.find((r) => r.name === 'front-config'), { status: 'running', node_id: 'node-cfg', counters: { keys: 1 } })
  t.match(records.find((r) => r.kind === 'Namespace'), { namespace: null, status: 'running' })
  const stored = JSON.stringify(await app.db.collection('resources').find({}).toArray())
  t.notMatch(stored, /hunter2-sync-secret|aHVudGVyMi1zeW5jLXNlY3JldA/, 'no secret value in any record')

  t.same((await sync(alice, 'live')).body, { created: 0, updated: 0, deleted: 0 }, 'nothing changed, nothing counted')
  t.equal((await raw(sim, 'DELETE', '/api/v1/namespaces/store/configmaps/front-config')).status, 200)
  t.same((await sync(alice, live.id)).body, { created: 0, updated: 0, deleted: 1 }, 'by id too; the removed config map is deleted')
  t.match((await list(alice, 'cluster=live&status=deleted&sort=name&order=asc')).body.resources.map((r: { name: string }) => r.name), ['front-config', 'gone'])

  t.same((await sync(bob, undefined)).body, { created: 0, updated: 0, deleted: 0 }, 'bob reaches no cluster: nothing to sync')
  await call(alice, 'POST', '/v1/api/clusters/live/share', { email: carol.email, role: 'viewer' })
  const carolSync = await sync(carol, 'live')
  t.equal(carolSync.status, 200, 'viewer access is enough to read the cluster')
  t.same(carolSync.body, { created: 0, updated: 0, deleted: 0 }, 'none of the objects belongs to a workflow of hers')
})

t.test('Secrets are listed as metadata only: their data never reaches the service', async (t) => {
  const { kc } = await app.services.clusters.kubeConfigFor(alice.user.id, 'live', 'viewer')
  const reader = await resourceReader(kc, 3000)
  const secrets = await reader.list('v1', 'Secret', `${MANAGED_BY_LABEL}=${MANAGED_BY}`)
  t.same(secrets.map((s) => s.metadata.name), ['front-secret'])
  t.notOk('data' in secrets[0] || 'stringData' in secrets[0], 'no data in the listing')
  t.match(secrets[0], { apiVersion: 'v1', kind: 'Secret', metadata: { namespace: 'store' } })
})

t.test('concurrent syncs of one cluster share one listing', async (t) => {
  const before = sim.requestCount()
  t.same((await sync(alice, 'live')).body, { created: 0, updated: 0, deleted: 0 })
  const one = sim.requestCount() - before
  const start = sim.requestCount()
  const [a, b] = await Promise.all([sync(alice, 'live'), sync(alice, 'live')])
  t.equal(a.status, 200)
  t.same(a.body, b.body)
  t.equal(sim.requestCount() - start, one, `the second request joined the first (${one} requests, not ${2 * one})`)
})

t.test('credentials that may not list a kind cluster-wide: it is read in each namespace the records know', async (t) => {
  t.teardown(() => sim.faults.reset())
  sim.faults.failNext(1, 403, { pathPrefix: '/apis/apps/v1/deployments' })
  const narrowed = await sync(alice, 'live')
  t.equal(narrowed.status, 200, JSON.stringify(narrowed.body))
  t.same(narrowed.body, { created: 0, updated: 0, deleted: 0 }, 'front was found in its namespace: nothing reads as deleted')
  t.match((await list(alice, 'cluster=live&kind=Deployment')).body.resources, [{ name: 'front', status: 'running' }])

  const before = JSON.stringify((await list(alice, 'limit=100&sort=name')).body)
  sim.faults.failNext(1, 403, { pathPrefix: '/apis/apps/v1/deployments' })
  sim.faults.failNext(1, 403, { pathPrefix: '/apis/apps/v1/namespaces/store/deployments' })
  const refused = await sync(alice, 'live')
  t.equal(refused.status, 502)
  t.match(refused.body.error, /403 Forbidden/)
  t.equal(JSON.stringify((await list(alice, 'limit=100&sort=name')).body), before, 'nothing written')
})

t.test('a client that disconnects mid-sync does not stop it', async (t) => {
  await create('/api/v1/namespaces/store/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'late', ...labelled(wf.id, 'node-late') } })
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  sim.faults.setLatency(150)
  t.teardown(() => sim.faults.reset())
  const changed = app.bus.next('resources.changed', (p) => p.owner_id === alice.user.id)
  const before = sim.requestCount()
  const abort = new AbortController()
  const request = fetch(`${address}/v1/api/resources/sync`, { method: 'POST', headers: { ...alice.headers, 'content-type': 'application/json' }, body: JSON.stringify({ cluster: 'live' }), signal: abort.signal })
  await waitFor('the sync reading the cluster', () => sim.requestCount() > before)
  abort.abort()
  await t.rejects(request, 'the client gave up')
  await changed
  sim.faults.reset()
  t.match((await list(alice, 'cluster=live&search=late')).body.resources, [{ name: 'late', status: 'running', node_id: 'node-late' }], 'the sync finished and recorded it')
})

t.test('pods of a workload through its selector; kinds without pods say so', async (t) => {
  const front = (await list(alice, 'cluster=live&kind=Deployment')).body.resources[0]
  const res = await call(alice, 'GET', `/v1/api/resources/${front.id}/pods`)
  t.equal(res.status, 200, JSON.stringify(res.body))
  t.equal(res.body.pods.length, 1)
  t.match(res.body.pods[0], { name: /^front-/, namespace: 'store', phase: 'Running', ready: '1/1', restarts: 0, node_name: /./, containers: [{ name: 'web', image: 'nginx:1.27', ready: true, restarts: 0, state: 'running', reason: null }] })
  t.ok(Date.parse(res.body.pods[0].created_at))
  const cfg = (await list(alice, 'cluster=live&kind=Secret')).body.resources[0]
  const none = await call(alice, 'GET', `/v1/api/resources/${cfg.id}/pods`)
  t.equal(none.status, 404)
  t.match(none.body.error, /^a Secret has no pods/)
  const gone = (await list(alice, 'cluster=live&search=gone')).body.resources[0]
  t.match((await call(alice, 'GET', `/v1/api/resources/${gone.id}/pods`)).body.error, /has no pods/)
  // A Pod record answers itself.
  const podName = res.body.pods[0].name
  await app.services.resources.recordApplied(alice.user.id, { workflow_id: wf.id, cluster_id: live.id, cluster: 'live' }, [applied('Pod', podName, 'store')])
  const podRecord = (await list(alice, `cluster=live&kind=Pod`)).body.resources[0]
  t.match((await call(alice, 'GET', `/v1/api/resources/${podRecord.id}/pods`)).body, { pods: [{ name: podName }] })
})

t.test('pods of a Job through its generated selector, and of a Service through its own', async (t) => {
  await create('/apis/batch/v1/namespaces/store/jobs', {
    apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'migrate', ...labelled(wf.id, 'node-migrate') },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'migrate', image: 'busybox:1.36' }] } } },
  })
  await create('/api/v1/namespaces/store/services', {
    apiVersion: 'v1', kind: 'Service', metadata: { name: 'front', ...labelled(wf.id, 'node-svc') }, spec: { selector: { app: 'front' }, ports: [{ port: 80 }] },
  })
  await waitFor('the job to complete', async () => (await raw(sim, 'GET', '/apis/batch/v1/namespaces/store/jobs/migrate')).json?.status?.succeeded === 1)
  t.match((await sync(alice, 'live')).body, { created: 2 })
  const job = (await list(alice, 'cluster=live&kind=Job')).body.resources[0]
  t.match(job, { name: 'migrate', status: 'completed', ready: '1/1' })
  t.match((await call(alice, 'GET', `/v1/api/resources/${job.id}/pods`)).body, { pods: [{ name: /^migrate-/, phase: 'Succeeded', containers: [{ name: 'migrate', state: 'terminated', reason: 'Completed' }] }] })
  const svc = (await list(alice, 'cluster=live&kind=Service')).body.resources[0]
  t.match(svc, { status: 'running', counters: { type: 'ClusterIP', clusterIP: /\d+\.\d+\.\d+\.\d+/ } })
  const pods = (await call(alice, 'GET', `/v1/api/resources/${svc.id}/pods`)).body.pods
  t.same(pods.map((p: { name: string }) => p.name.replace(/-[^-]+-[^-]+$/, '')), ['front'], 'the Deployment front\'s pod, not the Job\'s')
})

t.test('a workload whose pods crash-loop syncs as failed, naming the pod and reason', async (t) => {
  await create('/apis/apps/v1/namespaces/store/deployments', {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'crashy', ...labelled(wf.id, 'node-crashy') },
    spec: { replicas: 1, selector: { matchLabels: { app: 'crashy' } }, template: { metadata: { labels: { app: 'crashy' } }, spec: { containers: [{ name: 'app', image: 'example/crashloop:1' }] } } },
  })
  // Between back-offs the container runs for a moment (pending, not ready): sync until a listing catches the loop.
  const record = await waitFor('a sync that sees the crash loop', async () => {
    t.equal((await sync(alice, 'live')).status, 200)
    const r = (await list(alice, 'cluster=live&search=crashy')).body.resources[0]
    return r?.status === 'failed' && r
  })
  t.match(record, { status: 'failed', status_message: /^no replica ready: pod crashy-\S+ container app: CrashLoopBackOff/, ready: '0/1', node_id: 'node-crashy' })
})

t.test('a cluster that does not answer: 502, and nothing is written', async (t) => {
  const port = await freePort()
  const down = await addCluster(alice, 'down', `https://127.0.0.1:${port}`)
  await app.services.resources.recordApplied(alice.user.id, { workflow_id: wf.id, cluster_id: down.id, cluster: 'down' }, [applied('ConfigMap', 'kept', 'shop')])
  const before = JSON.stringify((await list(alice, 'limit=100&sort=name')).body)
  const res = await sync(alice, 'down')
  t.equal(res.status, 502)
  t.match(res.body.error, /cluster/)
  t.equal(JSON.stringify((await list(alice, 'limit=100&sort=name')).body), before, 'the records are as they were')

  const record = (await list(alice, 'cluster=down')).body.resources[0]
  t.equal((await call(alice, 'GET', `/v1/api/resources/${record.id}/pods`)).status, 404, 'a ConfigMap has no pods even there')

  // An API server failing one of the lists half-way: nothing of that cluster is written either.
  sim.faults.failNext(1, 500, { pathPrefix: '/apis/batch' })
  t.equal((await raw(sim, 'DELETE', '/api/v1/namespaces/store/secrets/front-secret')).status, 200, 'a change a complete sync would record')
  const half = await sync(alice, 'live')
  t.equal(half.status, 502)
  t.equal(JSON.stringify((await list(alice, 'limit=100&sort=name')).body), before, 'the secret is not marked deleted on a partial listing')

  const all = await sync(alice)
  t.equal(all.status, 502, 'a sync of every cluster reports the one that failed')
  t.match(all.body.error, /cluster "down": .*; the other 2 clusters were synced/)
  await call(alice, 'DELETE', '/v1/api/clusters/down')
  const complete = await sync(alice)
  t.equal(complete.status, 200, 'without it every cluster syncs')
  t.match((await list(alice, 'cluster=live&kind=Secret')).body.resources[0], { name: 'front-secret', status: 'deleted' })
})

t.test('unreadable cluster credentials: 409 saying what to do', async (t) => {
  await app.db.collection('clusters').updateOne({ _id: seeded.id } as never, { $set: { credentials_sealed: 'sealed:v1:unknownkey00:AAAAAAAAAAAAAAAA:AAAA:AAAAAAAAAAAAAAAAAAAAAA' } })
  const res = await sync(alice, 'seeded')
  t.equal(res.status, 409)
  t.match(res.body.error, /cannot be opened .*PUT \/v1\/api\/clusters\/seeded\/credentials/)
  const web = (await list(alice, 'cluster=seeded&kind=Deployment&search=web&sort=name&order=asc')).body.resources[0]
  t.equal((await call(alice, 'GET', `/v1/api/resources/${web.id}/pods`)).status, 409)
})

t.test('global search lists the caller\'s tracked resources by name, and only theirs', async (t) => {
  const mine = await call(alice, 'GET', '/v1/api/search?q=front-c&limit=5')
  t.equal(mine.status, 200)
  t.same(mine.body.resources.map((r: { name: string }) => r.name), ['front-config'])
  t.match(mine.body.resources[0], { id: /^[0-9a-f]{24}$/, kind: 'ConfigMap', namespace: 'store', cluster: 'live', status: 'deleted' })
  t.same((await call(bob, 'GET', '/v1/api/search?q=front')).body.resources, [])
})
