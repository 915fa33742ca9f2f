// The workflow status stream over real HTTP (no cluster needed): who may open it, the frames byte for byte,
// heartbeats, CORS for browsers on another origin, Last-Event-ID replay, a slow reader losing events (and
// the warning) while a fast one on the same key gets all, bus events becoming stream events, and shutdown
// ending open streams.
import t from 'tap'
import { Value } from 'typebox/value'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'
import { listen, openStream } from './sse-client.ts'
import { NodeUpdateEvent, StatusChangeEvent, WorkflowSyncEvent } from '../../schemas/streams.ts'

const { app, logs } = await startTestApp(t, { SSE_HEARTBEAT_MS: 40, SSE_BUFFER_SIZE: 8, SSE_REPLAY_SIZE: 16 })
const base = await listen(app)
const owner = await registerUser(app)
const other = await registerUser(app)
const auth = (user = owner) => ({ authorization: `Bearer ${user.token}` })

const created = await app.inject({ method: 'POST', url: '/v1/api/workflows', headers: auth(), payload: { name: 'streamed' } })
const workflowId = created.json().id as string
const path = `/v1/api/workflows/${workflowId}/status/stream`
const key = `workflow:${workflowId}`

t.test('no token → 401, a token in the query is not accepted, another user\'s workflow → 404, all as JSON', async (t) => {
  const anonymous = await openStream(base, path)
  t.equal(anonymous.status, 401)
  t.match(anonymous.body, { error: String })
  const query = await openStream(base, `${path}?token=${owner.token}`)
  t.equal(query.status, 401, 'streams take the header only')
  const foreign = await openStream(base, path, auth(other))
  t.equal(foreign.status, 404)
  t.same(Object.keys(foreign.body), ['error'], 'an {error} body')
  t.match(foreign.headers['content-type'], /application\/json/)
  const missing = await openStream(base, '/v1/api/workflows/000000000000000000000000/status/stream', auth())
  t.equal(missing.status, 404)
  t.equal(app.streams.subscriberCount(key), 0, 'refused requests leave no subscriber behind')
})

t.test('headers at once, then retry + metadata as the first frame, LF only, ids, heartbeats', async (t) => {
  const s = await openStream(base, path, { ...auth(), origin: 'https://app.example.com' })
  t.teardown(() => s.close())
  t.equal(s.status, 200)
  t.equal(s.headers['content-type'], 'text/event-stream')
  t.equal(s.headers['cache-control'], 'no-cache')
  t.equal(s.headers['x-accel-buffering'], 'no')
  t.equal(s.headers.connection, 'close', 'HTTP/1.1: the body ends with the connection, not chunked')
  t.equal(s.headers['transfer-encoding'], undefined)
  t.equal(s.headers['access-control-allow-origin'], '*', 'CORS headers reach the stream response')
  t.equal(s.headers['x-content-type-options'], 'nosniff', 'so do the security headers')
  await s.until('metadata', (e) => e.length >= 1)
  const first = s.raw()
  t.match(first, /^retry: 3000\nid: \d+\nevent: metadata\ndata: \{.*\}\n\n/, 'retry, id, event, one line of data')
  t.equal(s.events[0].type, 'metadata')
  t.equal(s.events[0].retry, 3000)
  t.match(s.events[0].data, { id: workflowId, name: 'streamed', nodes: Array })
  t.same(s.events[0].data, (await app.inject({ url: `/v1/api/workflows/${workflowId}`, headers: auth() })).json(), 'exactly what GET /workflows/:id answers (nothing internal)')
  await s.until('subscribed', () => app.streams.subscriberCount(key) === 1)
  app.streams.publish(key, 'node_update', { node_id: 'n1', kind: 'Deployment', status: { state: 'pending', message: 'multi\nline "quoted"' } })
  await s.until('node_update', (e) => e.some((x) => x.type === 'node_update'))
  const update = s.events.find((e) => e.type === 'node_update')!
  t.equal(update.id, s.events[0].id! + 1, 'ids increase per key')
  t.ok(s.raw().includes(`id: ${update.id}\nevent: node_update\ndata: {"node_id":"n1","kind":"Deployment","status":{"state":"pending","message":"multi\\nline \\"quoted\\""}}\n\n`), 'the frame, byte for byte')
  await s.until('two heartbeats', () => s.comments.filter((c) => c === 'ping').length >= 2)
  t.ok(s.raw().includes('\n\n: ping\n\n'), 'a heartbeat is a comment frame of its own')
  t.notOk(s.raw().includes('\r'), 'LF only')
})

t.test('CORS preflight of a stream allows Authorization and Last-Event-ID', async (t) => {
  const res = await app.inject({
    method: 'OPTIONS', url: path,
    headers: { origin: 'https://app.example.com', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization,last-event-id' },
  })
  t.equal(res.statusCode, 204)
  const allowed = String(res.headers['access-control-allow-headers']).toLowerCase().split(',').map((h) => h.trim())
  t.ok(allowed.includes('authorization'))
  t.ok(allowed.includes('last-event-id'))
  t.match(String(res.headers['access-control-allow-methods']), /GET/)
})

t.test('a client reconnecting with Last-Event-ID gets what it missed, after a fresh metadata', async (t) => {
  const s = await openStream(base, path, auth())
  await s.until('metadata', (e) => e.length >= 1)
  app.streams.publish(key, 'node_update', { node_id: 'a', kind: 'ConfigMap', status: { state: 'running', message: '' } })
  await s.until('a', (e) => e.some((x) => x.data?.node_id === 'a'))
  const last = s.events.at(-1)!.id!
  s.close()
  await s.ended
  await s.until('unsubscribed', () => app.streams.subscriberCount(key) === 0)
  app.streams.publish(key, 'node_update', { node_id: 'b', kind: 'ConfigMap', status: { state: 'running', message: '' } })
  app.streams.publish(key, 'complete', { run_id: 'r1', status: 'completed' })

  const again = await openStream(base, path, { ...auth(), 'last-event-id': String(last) })
  t.teardown(() => again.close())
  const events = await again.until('replay', (e) => e.length >= 3)
  t.same(events.map((e) => e.type), ['metadata', 'node_update', 'complete'])
  t.same(events.map((e) => e.id), [last, last + 1, last + 2], 'metadata carries the id resumed from; the missed events follow in order')
  t.equal(events[1].data.node_id, 'b')

  const fresh = await openStream(base, path, { ...auth(), 'last-event-id': 'not-a-number' })
  t.teardown(() => fresh.close())
  await fresh.until('metadata', (e) => e.length >= 1)
  t.equal(fresh.events[0].id, last + 2, 'a malformed Last-Event-ID starts from now')
  app.streams.publish(key, 'complete', { run_id: 'r2', status: 'failed' })
  await fresh.until('r2', (e) => e.length === 2)
  t.equal(fresh.events[1].data.run_id, 'r2', 'nothing replayed before it')
})

t.test('a slow reader loses events and a warning is logged; a fast reader on the same key gets every one', async (t) => {
  const fast = await openStream(base, path, auth())
  const slow = await openStream(base, path, auth())
  t.teardown(() => { fast.close(); slow.close() })
  await fast.until('metadata', (e) => e.length >= 1)
  await slow.until('metadata', (e) => e.length >= 1)
  await fast.until('both subscribed', () => app.streams.subscriberCount(key) === 2)
  slow.pause()
  // Enough bytes to fill the slow socket's kernel buffers, so its 8-event hub buffer fills and drops.
  const filler = 'x'.repeat(64 * 1024)
  const count = 400
  const logsBefore = logs.length
  for (let i = 0; i < count; i++) {
    app.streams.publish(key, 'log', { i, filler })
    // Paced by the fast reader: it is never behind by more than one event.
    await fast.until(`event ${i}`, (e) => e.at(-1)?.data?.i === i)
  }
  const got = fast.events.filter((e) => e.type === 'log').map((e) => e.data.i)
  t.equal(got.length, count, 'the fast reader got every event')
  t.same(got, [...Array(count).keys()], 'in order')
  const warning = logs.slice(logsBefore).find((l) => l.includes('stream subscriber buffer full'))
  t.ok(warning, 'a warning was logged')
  t.match(warning!, new RegExp(`"stream":"${key}"`))
  t.notOk(warning!.includes(filler.slice(0, 100)), 'without the payload')
  slow.resume()
  // Its buffer empties only as its socket drains: until then a new event would be dropped too, so the end
  // marker is offered again on each poll until one gets through.
  await slow.until('the slow reader catches up', (e) => {
    if (e.some((x) => x.type === 'complete' && x.data.run_id === 'end')) return true
    app.streams.publish(key, 'complete', { run_id: 'end', status: 'completed' })
    return false
  }, 30_000)
  const slowGot = slow.events.filter((e) => e.type === 'log').map((e) => e.data.i)
  t.ok(slowGot.length < count, `the slow reader lost events (${count - slowGot.length} of ${count})`)
  t.same(slowGot, [...slowGot].sort((a, b) => a - b), 'what it got is in order')
  t.notOk(slow.raw().includes('\r'))
  slow.close()
  const closed = await fast.until('the slow stream\'s closing log line', () => logs.slice(logsBefore).some((l) => l.includes('"msg":"stream closed"') && !l.includes('"dropped":0')))
  t.ok(closed)
  const line = JSON.parse(logs.slice(logsBefore).find((l) => l.includes('"msg":"stream closed"') && !l.includes('"dropped":0'))!)
  t.match(line, { stream: key, req: { method: 'GET', url: path } })
  t.ok(line.dropped > 0 && line.events + line.dropped >= count, `the closing line counts what was sent (${line.events}) and dropped (${line.dropped})`)
})

t.test('bus events become stream events: resource.status → node_update + status_change, workflow.synced → workflow_sync', async (t) => {
  const s = await openStream(base, path, auth())
  t.teardown(() => s.close())
  await s.until('metadata', (e) => e.length >= 1)
  app.bus.emit('resource.status', {
    owner_id: owner.user.id, workflow_id: workflowId, resource_id: 'r-1', node_id: 'n-api', kind: 'Deployment', name: 'api', namespace: 'shop',
    old_status: 'pending', new_status: 'failed', message: 'ImagePullBackOff: image not found', counters: { replicas: 2, readyReplicas: 0 },
  })
  app.bus.emit('workflow.synced', { owner_id: owner.user.id, workflow_id: workflowId, nodes: [{ node_id: 'n-api', status: { state: 'failed', message: 'x' } }] })
  const events = await s.until('three events', (e) => e.length >= 4)
  t.same(events.slice(1).map((e) => e.type), ['node_update', 'status_change', 'workflow_sync'])
  t.same(events[1].data, { node_id: 'n-api', kind: 'Deployment', status: { replicas: 2, readyReplicas: 0, state: 'failed', message: 'ImagePullBackOff: image not found' } })
  t.same(events[2].data, { resource_id: 'r-1', node_id: 'n-api', kind: 'Deployment', name: 'api', namespace: 'shop', old_status: 'pending', new_status: 'failed', message: 'ImagePullBackOff: image not found' })
  t.ok(Value.Check(NodeUpdateEvent, events[1].data), 'node_update matches its documented schema')
  t.ok(Value.Check(StatusChangeEvent, events[2].data), 'status_change matches its documented schema')
  t.ok(Value.Check(WorkflowSyncEvent, events[3].data), 'workflow_sync matches its documented schema')
})

t.test('a change of the ready count alone updates the node but is no status_change', async (t) => {
  const s = await openStream(base, path, auth())
  t.teardown(() => s.close())
  await s.until('metadata', (e) => e.length >= 1)
  const status = (old_status: string, new_status: string, ready: number) => app.bus.emit('resource.status', {
    owner_id: owner.user.id, workflow_id: workflowId, resource_id: 'r-2', node_id: 'n-api', kind: 'Deployment', name: 'api', namespace: 'shop',
    old_status, new_status, message: `${ready}/2 ready`, counters: { replicas: 2, readyReplicas: ready },
  })
  status('pending', 'pending', 1)
  status('pending', 'running', 2)
  const events = await s.until('three events', (e) => e.length >= 4)
  t.same(events.slice(1).map((e) => e.type), ['node_update', 'node_update', 'status_change'])
  t.match(events[3].data, { old_status: 'pending', new_status: 'running' })
})

t.test('deleting the workflow says so on its stream', async (t) => {
  const doomed = (await app.inject({ method: 'POST', url: '/v1/api/workflows', headers: auth(), payload: { name: 'doomed' } })).json().id as string
  const s = await openStream(base, `/v1/api/workflows/${doomed}/status/stream`, auth())
  t.teardown(() => s.close())
  await s.until('metadata', (e) => e.length >= 1)
  t.equal((await app.inject({ method: 'DELETE', url: `/v1/api/workflows/${doomed}`, headers: auth() })).statusCode, 204)
  const events = await s.until('error', (e) => e.some((x) => x.type === 'error'))
  t.same(events.at(-1)!.data, { error: 'the workflow was deleted' })
  t.equal((await openStream(base, `/v1/api/workflows/${doomed}/status/stream`, auth())).status, 404, 'and it cannot be opened again')
})

t.test('closing the app ends open streams promptly', async (t) => {
  const a = await openStream(base, path, auth())
  const b = await openStream(base, path, auth())
  await a.until('metadata', (e) => e.length >= 1)
  await b.until('metadata', (e) => e.length >= 1)
  b.pause()
  const started = Date.now()
  await app.close()
  const took = Date.now() - started
  t.ok(took < 5000, `closed in ${took} ms, not held by the open streams (one of them not reading)`)
  await a.ended
  b.resume()
  await b.ended
  t.ok(a.isEnded && b.isEnded, 'both clients saw their stream end')
})
