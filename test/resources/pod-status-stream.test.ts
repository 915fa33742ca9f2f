// A workload's pod record has live status on its own resource stream (GET /v1/api/resources/<pod id>/stream):
// node_update with the pod's status (counters such as restarts included) and status_change when its status
// moves, over a real HTTP connection, from a simulated cluster. The pod reaches nothing else: the workflow
// stream and notifications follow the workload only.
import t from 'tap'
import { runFixture, node } from '../runs/fixture.ts'
import { listen, openStream, type SseEvent, type SseStream } from '../streams/sse-client.ts'
import { waitFor } from '../kube-sim/test-helpers.ts'
import { Value } from 'typebox/value'
import { NodeUpdateEvent, StatusChangeEvent } from '../../schemas/streams.ts'

const f = await runFixture(t, { RUN_READY_TIMEOUT_MS: 4000 }, { timing: { podStartMs: 100, podReadyMs: 100, podTerminateMs: 200, crashBackoffMs: 300 } })
t.setTimeout(120_000)
const { owner, call } = f
const base = await listen(f.app)
const auth = { authorization: `Bearer ${owner.token}` }
type Json = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

async function stream(t: { teardown(fn: () => unknown): void }, path: string): Promise<SseStream> {
  const s = await openStream(base, path, auth)
  t.teardown(() => s.close())
  if (s.status !== 200) throw new Error(`${path}: ${s.status} ${JSON.stringify(s.body)}`)
  await s.until('metadata', (e) => e.some((x) => x.type === 'metadata'))
  return s
}

/** The workflow's Deployment record and its (first) pod record, once the pod's record exists with this status. */
async function podOf(workflowId: string, status: string): Promise<{ deployment: Json; pod: Json }> {
  const deployment = (await call(owner, 'GET', `/v1/api/resources?workflow_id=${workflowId}&kind=Deployment`)).body.resources[0] as Json
  const pod = await waitFor(`a ${status} pod record`, async () => {
    await f.app.services.resourceWatch.idle()
    const pods = (await call(owner, 'GET', `/v1/api/resources?kind=Pod&parent_id=${deployment.id}`)).body.resources as Json[]
    return pods.find((p) => p.status === status) ?? null
  }, 10_000)
  return { deployment, pod }
}

async function notifications(): Promise<Json[]> {
  const res = await call(owner, 'GET', '/v1/api/notifications?limit=100')
  return (res.body.notifications ?? res.body.items ?? res.body) as Json[]
}

const mentionsPod = (events: SseEvent[], pod: Json) => events.filter((e) => e.type !== 'metadata' && (e.data?.kind === 'Pod' || e.data?.resource_id === pod.id || JSON.stringify(e.data ?? null).includes(pod.name)))

t.test('scaling to zero: the pod\'s stream gets node_update and status_change running → deleted; the workflow stream nothing of the pod', async (t) => {
  const id = await f.workflow({ nodes: [node('n-web', 'deployment', { name: 'web', namespace: 'podlive', image: 'nginx:1.27', port: 8080, replicas: 1 })], edges: [] }, 'pod-scale')
  t.equal((await call(owner, 'POST', `/v1/api/workflows/${id}/run`, {})).body?.status, 'completed', 'the run completed')
  const { pod } = await podOf(id, 'running')
  const podStream = await stream(t, `/v1/api/resources/${pod.id}/stream`)
  const wfStream = await stream(t, `/v1/api/workflows/${id}/status/stream`)
  t.equal(podStream.events[0].data.id, pod.id, 'metadata is the pod record')

  await f.kubectl('scale', 'deployment/web', '-n', 'podlive', '--replicas=0')
  const events = await podStream.until('status_change to deleted', (e) => e.some((x) => x.type === 'status_change' && x.data.new_status === 'deleted'))
  const change = events.find((x) => x.type === 'status_change' && x.data.new_status === 'deleted')!
  t.match(change.data, { resource_id: pod.id, kind: 'Pod', name: pod.name, namespace: 'podlive', node_id: 'n-web' }, 'status_change names the pod record')
  t.equal(change.data.old_status, events.slice(0, events.indexOf(change)).filter((x) => x.type === 'status_change').at(-1)?.data.new_status ?? 'running', 'from the status it had')
  const update = events.slice(0, events.indexOf(change)).findLast((x) => x.type === 'node_update')
  t.ok(update, 'a node_update comes before it')
  t.equal(update!.data.status.state, 'deleted', 'carrying the pod\'s own state')
  t.equal(update!.data.kind, 'Pod')
  for (const e of events.filter((x) => x.type === 'node_update')) t.ok(Value.Check(NodeUpdateEvent, e.data), `node_update as documented: ${JSON.stringify(e.data)}`)
  for (const e of events.filter((x) => x.type === 'status_change')) t.ok(Value.Check(StatusChangeEvent, e.data), 'status_change as documented')

  // The workload's own change reaches the workflow stream (ready 0/0): that stream is open and working.
  await wfStream.until('the Deployment\'s node_update', (e) => e.some((x) => x.type === 'node_update' && x.data.node_id === 'n-web' && x.data.status.ready === '0/0'))
  await f.app.services.resourceWatch.idle()
  await f.app.workflowStreams.idle()
  t.same(mentionsPod(wfStream.events, pod), [], 'the workflow stream carried nothing of the pod')
})

t.test('a crash-looping pod: its stream shows the restarts counting up; notifications only name the Deployment', async (t) => {
  const id = await f.workflow({ nodes: [node('n-bad', 'deployment', { name: 'bad', namespace: 'podcrash', image: 'example/app-crashloop:1', port: 8080, replicas: 1 })], edges: [] }, 'pod-crash')
  const ran = await call(owner, 'POST', `/v1/api/workflows/${id}/run`, {})
  t.equal(ran.body?.status, 'failed', 'the run failed on the crash loop')
  const { deployment, pod } = await podOf(id, 'failed')
  const wfStream = await stream(t, `/v1/api/workflows/${id}/status/stream`)
  const podStream = await stream(t, `/v1/api/resources/${pod.id}/stream`)
  const restartsAtOpen = Number(podStream.events[0].data.counters?.restarts ?? 0)
  const events = await podStream.until('a node_update with more restarts', (e) => e.some((x) => x.type === 'node_update' && Number(x.data.status.restarts) > restartsAtOpen))
  const update = events.find((x) => x.type === 'node_update' && Number(x.data.status.restarts) > restartsAtOpen)!
  t.equal(update.data.status.state, 'failed', 'the pod is still failed')
  t.match(update.data.status.message, /CrashLoopBackOff|Error|back-off/i, 'with the pod\'s reason')
  t.equal(update.data.kind, 'Pod')
  t.notOk(events.some((x) => x.type === 'status_change'), 'no status_change: the status did not move, only the counter')
  // The rate: what the record shows changes once per restart (the count; the reason's numbers tick without
  // counting), so a few restarts publish about as many updates, not one per pod event.
  const more = await podStream.until('two more restarts', (e) => e.some((x) => x.type === 'node_update' && Number(x.data.status.restarts) >= Number(update.data.status.restarts) + 2))
  const updates = more.filter((x) => x.type === 'node_update')
  const restarts = Number(updates.at(-1)!.data.status.restarts) - restartsAtOpen
  t.comment(`pod stream: ${updates.length} node_update for ${restarts} restarts`)
  t.ok(updates.length <= 2 * restarts + 1, `${updates.length} node_update for ${restarts} restarts: about one per restart`)

  const failed = await waitFor('the Deployment\'s resource_failed notification', async () => {
    const list = await notifications()
    return list.find((n) => n.type === 'resource_failed' && String(n.link).includes(deployment.id)) ?? null
  }, 10_000)
  t.ok(failed, 'the Deployment\'s failure was notified')
  await f.app.services.resourceWatch.idle()
  await f.app.workflowStreams.idle()
  const aboutPods = (await notifications()).filter((n) => /\bPod\b/.test(String(n.title)) || String(n.link).includes(pod.id))
  t.same(aboutPods, [], 'no notification about the pod')
  t.same(mentionsPod(wfStream.events, pod), [], 'the workflow stream carried nothing of the pod')
})
