// Pods as tracked resources (API.md §10) on the simulator: a deployed 2-replica Deployment's pods become
// records of their own (kind Pod, parent_id, containers, status from the pod), hidden from lists unless asked
// for, reachable from GET /resources/:id/pods by id, usable for logs and the terminal, the owner's alone.
// A scale-down marks the pod that went deleted; a sync keeps the live ones; a crash-looping pod reads
// failed without a notification of its own and without a write per watch event; deleting the workflow
// leaves no pod record behind. Every wait is on an event or a bounded check of the API.
import t from 'tap'
import WebSocket from 'ws'
import { watchFixture } from '../watch/fixture.ts'
import { node } from '../runs/fixture.ts'
import { registerUser } from '../helpers/auth.ts'
import { waitFor } from '../kube-sim/test-helpers.ts'
import { listen } from '../streams/sse-client.ts'

const f = await watchFixture(t, {}, { timing: { crashBackoffMs: 300 } })
t.setTimeout(240_000)
const { app, owner, call } = f
const base = await listen(app)
const bob = await registerUser(app)
type Rec = { id: string; kind: string; name: string; status: string; parent_id: string | null; containers?: string[]; counters: Record<string, unknown>; [k: string]: unknown }

const list = async (query: string): Promise<Rec[]> => {
  const res = await call(owner, 'GET', `/v1/api/resources?limit=100&${query}`)
  if (res.status !== 200) throw new Error(`list: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body.resources
}
const podsOf = (parentId: string) => list(`parent_id=${parentId}`)

const wf = await f.workflow({ nodes: [node('n-web', 'deployment', { name: 'web', namespace: 'pods', image: 'nginx:1.27', port: 8080, replicas: 2 })], edges: [] }, 'pods')
// The fixture's runs do not wait for readiness (the watch is what this file is about).
await f.deploy(wf)
const web = (await list(`workflow_id=${wf}&kind=Deployment`))[0]
const running = await waitFor('two running pod records', async () => {
  const pods = await podsOf(web.id)
  return pods.length === 2 && pods.every((p) => p.status === 'running') && pods
}, 20_000)

t.test('each pod of the Deployment is a Pod record: parent, workflow, node, owner, status, containers, counters', async (t) => {
  for (const p of running) {
    t.match(p, { kind: 'Pod', api_version: 'v1', namespace: 'pods', parent_id: web.id, workflow_id: wf, node_id: 'n-web', owner_id: owner.user.id, cluster: 'sim', status: 'running', ready: '1/1', containers: ['web'] })
    t.match(p.name, /^web-/)
    t.match(p.counters, { phase: 'Running', restarts: 0, nodeName: /./ })
  }
  t.equal(web.parent_id, null, 'a workload has no parent')
  t.notOk('containers' in web, 'containers only on pods')
})

t.test('lists hide pods unless kind=Pod or parent_id= asks; search and the dashboard leave them out', async (t) => {
  const all = await list(`workflow_id=${wf}`)
  t.same(all.map((r) => r.kind).sort(), ['Deployment', 'Namespace'], 'the workflow\'s resources, without its pods')
  t.equal((await list('kind=Pod')).length, 2)
  t.same((await podsOf(web.id)).map((p) => p.id).sort(), running.map((p) => p.id).sort())
  t.same(await podsOf(running[0].id), [], 'a pod has no pods')
  t.equal((await call(owner, 'GET', '/v1/api/resources?parent_id=')).status, 400, 'an empty parent_id is refused')
  const search = await call(owner, 'GET', '/v1/api/search?q=web')
  t.same(search.body.resources.map((r: { kind: string }) => r.kind), ['Deployment'], 'search finds the Deployment, not its pods')
  // Computed now (pod records do not refresh the stored statistics: they do not count).
  const stats = await app.services.stats.refresh(owner.user.id)
  t.equal(stats.tracked_resources.value, 2, 'tracked resources: the Deployment and its Namespace')
  const overview = await call(owner, 'GET', '/v1/api/metrics/overview')
  t.equal(overview.body.resources.total, 2, 'the overview counts the same')
})

t.test('GET /resources/:id/pods items carry the Pod records\' ids, which GET /resources/:id resolves', async (t) => {
  const res = await call(owner, 'GET', `/v1/api/resources/${web.id}/pods`)
  t.equal(res.status, 200)
  t.equal(res.body.pods.length, 2)
  for (const p of res.body.pods) {
    t.ok(p.id, `${p.name} has an id`)
    const one = await call(owner, 'GET', `/v1/api/resources/${p.id}`)
    t.match(one.body, { id: p.id, kind: 'Pod', name: p.name, parent_id: web.id })
    const self = await call(owner, 'GET', `/v1/api/resources/${p.id}/pods`)
    t.same(self.body.pods.map((x: { id: string; name: string }) => [x.id, x.name]), [[p.id, p.name]], 'a Pod record lists itself, with its id')
  }
})

t.test('logs and the terminal take a Pod record\'s id: that pod, its namespace and cluster', async (t) => {
  const pod = running[1]
  const ac = new AbortController()
  const res = await fetch(`${base}/v1/api/resources/${pod.id}/logs/stream?follow=false&tail=5`, { headers: { authorization: `Bearer ${owner.token}` }, signal: ac.signal })
  t.equal(res.status, 200)
  const text = await res.text()
  const meta = /event: metadata\ndata: (.*)\n/.exec(text)
  t.ok(meta, 'a metadata event')
  t.same(JSON.parse(meta![1]), { pod: pod.name, container: 'web', namespace: 'pods', cluster: 'sim' })
  t.match(text, /event: complete/)

  const frames: Array<{ type: string; data: any }> = [] // eslint-disable-line @typescript-eslint/no-explicit-any
  const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/v1/api/resources/${pod.id}/exec/terminal?${new URLSearchParams({ token: owner.token, shell: 'sh' })}`)
  t.teardown(() => ws.close())
  ws.on('message', (data) => frames.push(JSON.parse(String(data))))
  const output = () => frames.filter((x) => x.type === 'output').map((x) => x.data).join('')
  const metadata = await waitFor('terminal metadata', () => frames.find((x) => x.type === 'metadata'))
  t.match(metadata.data, { pod: pod.name, container: 'web', namespace: 'pods', cluster: 'sim' })
  await waitFor('prompt', () => output().includes('# '))
  ws.send(JSON.stringify({ type: 'input', data: 'echo hi\r' }))
  await waitFor('echo round trip', () => /\r\nhi\r\n/.test(output()))
  ws.send(JSON.stringify({ type: 'input', data: 'exit 0\r' }))
  t.same((await waitFor('close', () => frames.find((x) => x.type === 'close'))).data, { reason: 'exited', exit_code: 0 })

  const wrong = await fetch(`${base}/v1/api/resources/${pod.id}/logs/stream?follow=false&pod=${running[0].name}`, { headers: { authorization: `Bearer ${owner.token}` } })
  t.equal(wrong.status, 404, 'a Pod record does not reach another pod')
  await wrong.text()
})

t.test('another user gets 404 for the pod records, their logs and their terminal', async (t) => {
  const id = running[0].id
  t.equal((await call(bob, 'GET', `/v1/api/resources/${id}`)).status, 404)
  t.equal((await call(bob, 'GET', `/v1/api/resources/${id}/pods`)).status, 404)
  t.same((await call(bob, 'GET', `/v1/api/resources?kind=Pod`)).body.resources, [])
  t.same((await call(bob, 'GET', `/v1/api/resources?parent_id=${web.id}`)).body.resources, [])
  const logs = await fetch(`${base}/v1/api/resources/${id}/logs/stream?follow=false`, { headers: { authorization: `Bearer ${bob.token}` } })
  t.equal(logs.status, 404)
  await logs.text()
  const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/v1/api/resources/${id}/exec/terminal?${new URLSearchParams({ token: bob.token, shell: 'sh' })}`)
  const refused = await new Promise<string>((resolve) => {
    ws.on('unexpected-response', (_req, res) => resolve(`HTTP ${res.statusCode}`))
    ws.on('message', (data) => { const m = JSON.parse(String(data)); if (m.type === 'error' || m.type === 'close') resolve(`${m.type}: ${JSON.stringify(m.data)}`) })
    ws.on('close', (code) => resolve(`closed ${code}`))
  })
  ws.close()
  t.match(refused, /404|not found/i, 'the terminal refuses it as not found')
})

t.test('a sync keeps live pods as they are', async (t) => {
  const res = await call(owner, 'POST', '/v1/api/resources/sync', { cluster: 'sim' })
  t.equal(res.status, 200)
  t.same((await podsOf(web.id)).map((p) => [p.name, p.status]).sort(), running.map((p) => [p.name, 'running']).sort(), 'both pods still running')
})

t.test('scaled to 1 with kubectl: the pod that went is marked deleted (and due to expire), the other stays', async (t) => {
  await f.kubectl('scale', 'deployment/web', '-n', 'pods', '--replicas=1')
  const after = await waitFor('one pod record deleted', async () => {
    const pods = await podsOf(web.id)
    return pods.filter((p) => p.status === 'deleted').length === 1 && pods.filter((p) => p.status === 'running').length === 1 && pods
  }, 20_000)
  const gone = after.find((p) => p.status === 'deleted')!
  const stored = await app.db.collection('resources').findOne({ _id: gone.id as never })
  t.ok(stored?.expires_at instanceof Date, 'the deleted pod record carries its expiry (TTL index)')
  t.notOk('expires_at' in gone, 'which the API does not show')
  const live = await f.kubectlJson('get', 'pods', '-n', 'pods')
  t.same(live.items.map((p: { metadata: { name: string } }) => p.metadata.name), [after.find((p) => p.status === 'running')!.name], 'the running record is the pod left')
  const logs = await fetch(`${base}/v1/api/resources/${gone.id}/logs/stream?follow=false`, { headers: { authorization: `Bearer ${owner.token}` } })
  t.equal(logs.status, 404, 'the pod that went has no logs')
  t.match(((await logs.json()) as { error: string }).error, `/v1/api/resources/${web.id}/pods`, 'and the answer says where its workload\'s pods are')
})

t.test('pod events that change nothing the record shows do not reach the database', async (t) => {
  const pod = (await podsOf(web.id)).find((p) => p.status === 'running')!
  const stats = app.services.resourceWatch.pods.stats
  const before = { ...stats }
  let events = 0
  const off = app.services.resourceWatch.hub.subscribe({ cluster: pod.cluster_id as string, apiVersion: 'v1', kind: 'Pod', namespace: 'pods' }, { name: pod.name, event: () => { events++ } })
  t.teardown(off)
  for (let i = 1; i <= 3; i++) {
    await f.kubectl('annotate', `pod/${pod.name}`, '-n', 'pods', `example.com/touch=${i}`, '--overwrite')
    await waitFor(`annotation event ${i}`, () => events >= i)
    await app.services.resourceWatch.idle()
  }
  t.equal(stats.observed - before.observed, 0, 'no flush reached the database')
  t.ok(stats.skipped - before.skipped >= 3, `${stats.skipped - before.skipped} flushes found nothing new`)
  const after = (await podsOf(web.id)).find((p) => p.id === pod.id)!
  t.equal(after.updated_at, pod.updated_at, 'the record is untouched')
})

t.test('a crash-looping pod: its record reads failed, no notification of its own, one write per restart at most', async (t) => {
  const loop = await f.workflow({ nodes: [node('n-bad', 'deployment', { name: 'bad', namespace: 'loop', image: 'example/app-crashloop:1', port: 8080, replicas: 1 })], edges: [] }, 'loop')
  await f.deploy(loop)
  const bad = (await list(`workflow_id=${loop}&kind=Deployment`))[0]
  const pod = await waitFor('the pod record failed', async () => (await podsOf(bad.id)).find((p) => p.status === 'failed'), 20_000)
  t.match(pod.status_message, /CrashLoopBackOff/)
  // Count the pod's watch events from here against the database flushes they cause.
  let events = 0
  const off = app.services.resourceWatch.hub.subscribe({ cluster: pod.cluster_id as string, apiVersion: 'v1', kind: 'Pod', namespace: 'loop' }, { name: pod.name, event: () => { events++ } })
  t.teardown(off)
  const stats = app.services.resourceWatch.pods.stats
  const before = { ...stats }
  const restarts0 = Number(pod.counters.restarts)
  const later = await waitFor('three more restarts recorded', async () => {
    const now = (await podsOf(bad.id)).find((p) => p.id === pod.id)!
    return Number(now.counters.restarts) >= restarts0 + 3 && now
  }, 30_000)
  await app.services.resourceWatch.idle()
  const writes = stats.observed - before.observed
  const restarts = Number(later.counters.restarts) - restarts0
  t.ok(writes <= events && writes <= restarts + 1, `${writes} flushes reached the database for ${events} pod events and ${restarts} restarts (${stats.skipped - before.skipped} showed nothing new)`)
  t.equal(later.status, 'failed', 'still failed between restarts')
  await app.services.notifications.idle()
  const notes = (await call(owner, 'GET', '/v1/api/notifications?limit=100')).body.notifications as Array<{ type: string; link: string; title: string }>
  const failed = notes.filter((n) => n.type === 'resource_failed')
  t.same(failed.map((n) => n.link), [`/v1/api/resources/${bad.id}`], 'one resource_failed, the Deployment\'s; none for its pod')
})

t.test('deleting the workflow leaves no pod record behind', async (t) => {
  const ids = (await list('kind=Pod')).filter((p) => p.workflow_id === wf && p.status !== 'deleted').map((p) => p.id)
  t.ok(ids.length >= 1)
  const res = await call(owner, 'DELETE', `/v1/api/workflows/${wf}`)
  t.equal(res.status, 204)
  await waitFor('its pod records removed', async () => (await list('kind=Pod')).every((p) => p.workflow_id !== wf || p.status === 'deleted'), 10_000)
  for (const id of ids) t.equal((await call(owner, 'GET', `/v1/api/resources/${id}`)).status, 404)
  t.equal((await call(owner, 'GET', `/v1/api/resources/${web.id}`)).body.kind, 'Deployment', 'the Deployment\'s record stays (it is still in the cluster)')
})
