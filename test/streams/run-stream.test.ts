// The workflow and resource streams against a real run on the simulator: a run's objects arrive as
// node_update, its end as workflow_sync (every node) and complete; a failed run also sends error; a dry run
// publishes no node status. The resource stream opens on a tracked resource of the run, is owner-scoped,
// carries its resource's status changes and says so when its cluster becomes unreachable.
import t from 'tap'
import { Value } from 'typebox/value'
import { runFixture, shopGraph, TRIGGER } from '../runs/fixture.ts'
import { registerUser } from '../helpers/auth.ts'
import { listen, openStream, type SseEvent } from './sse-client.ts'
import { CompleteEvent, ErrorEvent, NodeUpdateEvent, WorkflowSyncEvent, StatusChangeEvent } from '../../schemas/streams.ts'

const f = await runFixture(t, { RUN_READY_TIMEOUT_MS: 3000, SSE_HEARTBEAT_MS: 15_000 })
const { app, owner, call } = f
const base = await listen(app)
const auth = { authorization: `Bearer ${owner.token}` }
const types = (events: SseEvent[]) => events.map((e) => e.type)
const completed = (runId: string) => (events: SseEvent[]) => events.some((e) => e.type === 'complete' && e.data.run_id === runId)

const id = await f.workflow(shopGraph({ namespace: 'streamed' }), 'streamed')
const streamPath = `/v1/api/workflows/${id}/status/stream`

t.test('a run: node_update per object as it applies, then workflow_sync of every node and complete', async (t) => {
  const s = await openStream(base, streamPath, auth)
  t.teardown(() => s.close())
  await s.until('metadata', (e) => e.length >= 1)
  t.equal(s.events[0].type, 'metadata')
  t.equal(s.events[0].data.id, id)
  const res = await call(owner, 'POST', `/v1/api/workflows/${id}/run`, { trigger_data: TRIGGER })
  if (res.status !== 200) t.fail(`run: ${res.status} ${JSON.stringify(res.body)}`)
  const runId = res.body.id as string
  const events = await s.until('complete', completed(runId))
  const runEvents = events.slice(1)
  const updates = runEvents.filter((e) => e.type === 'node_update')
  const run = res.body as { nodes: Array<{ node_id: string; kind: string; action: string }> }
  for (const n of run.nodes) {
    t.ok(updates.some((u) => u.data.node_id === n.node_id && u.data.kind === n.kind && u.data.status.action === n.action), `node_update for ${n.node_id} ${n.kind} (${n.action})`)
  }
  for (const u of updates) t.ok(Value.Check(NodeUpdateEvent, u.data), `node_update ${u.data.node_id} matches its schema`)
  const order = types(runEvents).filter((x) => x === 'workflow_sync' || x === 'complete')
  t.same(order.slice(-2), ['workflow_sync', 'complete'], 'workflow_sync, then complete, at the end of the run')
  t.notOk(types(runEvents).includes('error'), 'no error for a completed run')
  const sync = runEvents.findLast((e) => e.type === 'workflow_sync')!
  t.ok(Value.Check(WorkflowSyncEvent, sync.data))
  const synced = new Map(sync.data.nodes.map((n: { node_id: string; status: { state: string } }) => [n.node_id, n.status.state]))
  t.same([...synced.keys()].sort(), [...new Set(run.nodes.map((n) => n.node_id))].sort(), 'every node of the run')
  t.equal(synced.get('n-api'), 'running', 'the deployment became ready during the run')
  t.ok(Value.Check(CompleteEvent, runEvents.at(-1)!.data))
  t.same(events.find((e) => e.type === 'complete' && e.data.run_id === runId)!.data, { run_id: runId, status: 'completed' })
  const ids = events.map((e) => e.id!)
  t.same(ids, [...ids].sort((a, b) => a - b), 'ids increase')
  t.equal(new Set(ids.slice(1)).size, ids.length - 1, 'no id repeats')
})

t.test('a failed run: error {error}, then complete with status failed', async (t) => {
  const failing = await f.workflow(shopGraph({ namespace: 'fails' }), 'fails')
  const s = await openStream(base, `/v1/api/workflows/${failing}/status/stream`, auth)
  t.teardown(() => s.close())
  await s.until('metadata', (e) => e.length >= 1)
  f.sim.faults.failNext(10, 500, { pathPrefix: '/apis/networking.k8s.io/v1/namespaces/fails/ingresses', message: 'etcd is having a moment' })
  t.teardown(() => f.sim.faults.reset())
  const res = await call(owner, 'POST', `/v1/api/workflows/${failing}/run`, { trigger_data: TRIGGER })
  t.equal(res.body.status, 'failed')
  const events = await s.until('complete', completed(res.body.id))
  const ingress = events.find((e) => e.type === 'node_update' && e.data.node_id === 'n-ing')
  t.equal(ingress?.data.status.state, 'failed', 'the failing object\'s node_update says failed')
  const error = events.find((e) => e.type === 'error')
  t.ok(error && Value.Check(ErrorEvent, error.data))
  t.equal(error!.data.error, res.body.error, 'the run\'s error')
  const sync = events.findLast((e) => e.type === 'workflow_sync')!
  t.equal(sync.data.nodes.find((n: { node_id: string }) => n.node_id === 'n-ing').status.state, 'failed')
  t.same(types(events).slice(-3), ['workflow_sync', 'error', 'complete'])
  t.same(events.at(-1)!.data, { run_id: res.body.id, status: 'failed' })
})

t.test('a dry run publishes no node status, only its end', async (t) => {
  const s = await openStream(base, streamPath, auth)
  t.teardown(() => s.close())
  await s.until('metadata', (e) => e.length >= 1)
  const res = await call(owner, 'POST', `/v1/api/workflows/${id}/run`, { dry_run: true, trigger_data: TRIGGER })
  t.equal(res.status, 200)
  const events = await s.until('complete', completed(res.body.id))
  const own = events.slice(1).filter((e) => e.type !== 'status_change' && !(e.type === 'node_update' && e.data.status.action === undefined))
  t.same(types(own), ['complete'], 'no node_update or workflow_sync from the dry run')
})

t.test('the resource stream: metadata, owner-scoped, status changes, cluster errors', async (t) => {
  const resource = (await call(owner, 'GET', `/v1/api/resources?workflow_id=${id}&kind=Deployment`)).body.resources[0]
  t.ok(resource, 'the run tracked its deployment')
  const path = `/v1/api/resources/${resource.id}/stream`
  const stranger = await registerUser(app)
  const foreign = await openStream(base, path, { authorization: `Bearer ${stranger.token}` })
  t.equal(foreign.status, 404)
  t.equal((await openStream(base, path)).status, 401)
  t.equal((await openStream(base, '/v1/api/resources/000000000000000000000000/stream', auth)).status, 404)

  const s = await openStream(base, path, auth)
  t.teardown(() => s.close())
  await s.until('metadata', (e) => e.length >= 1)
  t.match(s.raw(), /^retry: 3000\nid: \d+\nevent: metadata\ndata: /)
  t.match(s.events[0].data, { id: resource.id, kind: 'Deployment', name: 'api', namespace: 'streamed', workflow_id: id })
  t.same(s.events[0].data, (await call(owner, 'GET', `/v1/api/resources/${resource.id}`)).body, 'exactly what GET /resources/:id answers (nothing internal)')

  app.bus.emit('resource.status', {
    owner_id: owner.user.id, workflow_id: id, resource_id: resource.id, node_id: 'n-api', kind: 'Deployment', name: 'api', namespace: 'streamed',
    old_status: 'running', new_status: 'warning', message: '1 of 2 replicas ready', counters: { replicas: 2, readyReplicas: 1 },
  })
  const changed = await s.until('status_change', (e) => e.some((x) => x.type === 'status_change'))
  t.same(types(changed).slice(1, 3), ['node_update', 'status_change'])
  t.ok(Value.Check(StatusChangeEvent, changed[2].data))
  t.match(changed[2].data, { resource_id: resource.id, old_status: 'running', new_status: 'warning' })

  app.bus.emit('cluster.status', { owner_id: owner.user.id, cluster_id: resource.cluster_id, name: 'sim', from: 'connected', to: 'error', message: 'connection refused' })
  app.bus.emit('cluster.status', { owner_id: owner.user.id, cluster_id: 'another-cluster', name: 'other', from: 'connected', to: 'error', message: 'x' })
  const errored = await s.until('error', (e) => e.some((x) => x.type === 'error'))
  const errors = errored.filter((e) => e.type === 'error')
  t.equal(errors.length, 1, 'only the resource\'s own cluster')
  t.match(errors[0].data.error, /cluster "sim" is unreachable \(connection refused\)/)
  s.close()
  await s.ended
  await s.until('stream released', () => app.streams.subscriberCount(`resource:${resource.id}`) === 0)
  // With no stream open on it, a later outage publishes nothing for it: a reconnecting client replays nothing.
  const last = s.events.at(-1)!.id!
  app.bus.emit('cluster.status', { owner_id: owner.user.id, cluster_id: resource.cluster_id, name: 'sim', from: 'connected', to: 'error', message: 'again' })
  const again = await openStream(base, path, { ...auth, 'last-event-id': String(last) })
  t.teardown(() => again.close())
  await again.until('metadata', (e) => e.length >= 1)
  t.equal(again.events[0].id, last)
  app.bus.emit('cluster.status', { owner_id: owner.user.id, cluster_id: resource.cluster_id, name: 'sim', from: 'connected', to: 'error', message: 'third' })
  const next = await again.until('error', (e) => e.length >= 2)
  t.match(next[1].data.error, /third/, 'the first event after metadata is the outage seen while it is open')
})

t.test('a change in the cluster reaches both streams through the watcher, and the next metadata carries it', async (t) => {
  const resource = (await call(owner, 'GET', `/v1/api/resources?workflow_id=${id}&kind=Deployment`)).body.resources[0]
  const wf = await openStream(base, streamPath, auth)
  const res = await openStream(base, `/v1/api/resources/${resource.id}/stream`, auth)
  t.teardown(() => { wf.close(); res.close() })
  await wf.until('metadata', (e) => e.length >= 1)
  await res.until('metadata', (e) => e.length >= 1)
  await f.kubectl('delete', 'deployment', 'api', '-n', 'streamed', '--wait=false')
  const deleted = (e: SseEvent) => e.type === 'status_change' && e.data.resource_id === resource.id && e.data.new_status === 'deleted'
  for (const s of [wf, res]) {
    const events = await s.until('status_change to deleted', (e) => e.some(deleted), 20_000)
    const change = events.find(deleted)!
    t.ok(Value.Check(StatusChangeEvent, change.data))
    t.match(change.data, { node_id: 'n-api', kind: 'Deployment', name: 'api', namespace: 'streamed' })
    t.ok(events.some((e) => e.type === 'node_update' && e.data.node_id === 'n-api' && e.data.status.state === 'deleted'), 'with the node\'s update')
  }
  // A managed object deleted behind the service's back is also drift (API.md §12): once judged, the node shows
  // `drifted` with the watchers' `deleted` beside it.
  await app.services.drift.idle()
  const later = await openStream(base, streamPath, auth)
  t.teardown(() => later.close())
  await later.until('metadata', (e) => e.length >= 1)
  const node = later.events[0].data.nodes.find((n: { id: string }) => n.id === 'n-api')
  t.match(node.data._status, { state: 'drifted', live_state: 'deleted' }, 'the stored node status is in the snapshot')
})

t.test('node_update carries the node\'s stored status, whichever of its objects changed', async (t) => {
  // After the previous test the watcher stored n-api as deleted (and drift detection as drifted); another object of the node changes.
  const stored = (await call(owner, 'GET', `/v1/api/workflows/${id}`)).body.nodes.find((n: { id: string }) => n.id === 'n-api').data._status
  t.match(stored, { state: 'drifted', live_state: 'deleted' })
  const s = await openStream(base, streamPath, auth)
  t.teardown(() => s.close())
  await s.until('metadata', (e) => e.length >= 1)
  app.bus.emit('resource.status', {
    owner_id: owner.user.id, workflow_id: id, resource_id: 'other-object', node_id: 'n-api', kind: 'Namespace', name: 'streamed', namespace: null,
    old_status: 'pending', new_status: 'running', message: 'active', counters: {},
  })
  // The watchers keep reporting the workflow's other objects (the autoscaler whose target was deleted), so
  // pick out the events of this change.
  const ours = (x: SseEvent) => x.type === 'status_change' && x.data.resource_id === 'other-object'
  const events = await s.until('status_change', (e) => e.some(ours))
  t.same(events.find((e) => e.type === 'node_update' && e.data.node_id === 'n-api')!.data, { node_id: 'n-api', kind: 'Namespace', status: stored }, 'the node\'s status, not the object\'s')
  t.match(events.find(ours)!.data, { resource_id: 'other-object', new_status: 'running' })
})
