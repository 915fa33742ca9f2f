// The resource page's live channels on the adapter, read exactly as the KubeOrch UI reads them (CONTRACT.md
// §4, §5; OBSERVED rows 16–17): the resource status stream (metadata, status_update), the pod log stream
// (`log` as raw "<time> <line>" text) and the terminal WebSocket (metadata.data a JSON string, close.data a
// string, the UI's resize frame), over real connections to an app running a real workflow on the simulator.
// Then the way a person gets there: a Deployment's pods → a Pod's page → its logs and its terminal.
import t from 'tap'
import WebSocket from 'ws'
import { runFixture, node, edge, TRIGGER } from '../../runs/fixture.ts'
import { registerUser, type TestUser } from '../../helpers/auth.ts'
import { waitFor } from '../../kube-sim/test-helpers.ts'
import { openUiStream } from './ui-stream.ts'
import { podLogReframe, resourceStreamReframe, terminalEncoder } from '../../../src/compat/kubeorch/pod-streams.ts'
import { reframedFrame } from '../../../src/events/sse.ts'

const f = await runFixture(t, { RUN_READY_TIMEOUT_MS: 8000, CLUSTER_TIMEOUT_MS: 5000, TERMINAL_PING_MS: 500 }, { timing: { logIntervalMs: 50 } })
const { app, owner: alice, call } = f
const bob = await registerUser(app)
const base = `${await app.listen({ port: 0, host: '127.0.0.1' })}/kubeorch/v1/api`
const wsBase = base.replace(/^http/, 'ws')

const STATUSES = ['running', 'pending', 'failed', 'completed', 'unknown', 'deleted', 'warning']
type Json = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

const wfRes = await call(alice, 'POST', '/v1/api/workflows', { name: 'live-ui', cluster_id: 'sim' })
const wfId = wfRes.body.id as string
await f.save(wfId, {
  nodes: [
    node('n-web', 'deployment', { name: 'web', namespace: 'uilive', image: 'busybox:1.36', port: 8080, replicas: 1 }),
    node('n-svc', 'service', { name: 'web-svc', namespace: 'uilive', serviceType: 'ClusterIP', port: 80, targetPort: 8080 }),
  ],
  edges: [edge('n-web', 'n-svc')],
})
const ran = await call(alice, 'POST', `/v1/api/workflows/${wfId}/run`, { trigger_data: TRIGGER })
if (ran.body?.status !== 'completed') throw new Error(`run: ${ran.status} ${JSON.stringify(ran.body)}`)
const tracked = (await call(alice, 'GET', `/v1/api/resources?workflow_id=${wfId}&kind=Deployment`)).body.resources as Json[]
const webId = tracked[0].id as string

/** The UI's reader (CONTRACT.md §4) on an adapter path; payloads stay text, parsed by each test as the UI would. */
const uiStream = (u: TestUser, path: string) => openUiStream(`${base}${path}`, u.token)

/** The UI's log line parsing (useLogStream): the first whitespace splits timestamp and message. */
const parseLog = (data: string) => { const m = data.match(/^(\S+)\s+(.*)$/); return { timestamp: m?.[1] || '', message: m?.[2] || data } }

t.test('resource status stream: metadata, then status_update from the watcher, nothing the page ignores', async (t) => {
  const s = await uiStream(alice, `/resources/${webId}/stream`)
  t.teardown(() => s.close())
  t.equal(s.status, 200)
  await s.until('metadata', (e) => e.length >= 1)
  t.equal(s.events[0].type, 'metadata')
  const meta = JSON.parse(s.events[0].data)
  t.same(Object.keys(meta).sort(), ['id', 'name', 'namespace', 'spec', 'status', 'type'])
  t.match(meta, { id: webId, name: 'web', namespace: 'uilive', type: 'Deployment' })
  t.ok(STATUSES.includes(meta.status))

  await f.kubectl('scale', 'deployment', 'web', '-n', 'uilive', '--replicas=2')
  const events = await s.until('status_update with 2 ready replicas', (e) => e.some((x) => x.type === 'status_update' && JSON.parse(x.data).status.readyReplicas === 2), 20_000)
  const updates = events.filter((e) => e.type === 'status_update').map((e) => JSON.parse(e.data))
  for (const u of updates) {
    const status = u.status || u
    t.ok(STATUSES.includes(status.state), `state "${status.state}" has a label on the page`)
    t.same(Object.keys(status).filter((k) => !['state', 'message', 'replicas', 'readyReplicas', 'clusterIP', 'externalIP', 'nodePort', 'phase', 'loadBalancerIP', 'loadBalancerHostname'].includes(k)), [], 'only keys the page reads')
  }
  t.ok(updates.some((u) => u.status.state === 'pending' && u.status.replicas === 2), 'the scale-up shows as pending first, with its counts')
  t.ok(updates.some((u) => u.status.state === 'running' && u.status.readyReplicas === 2), 'then running with both replicas ready')
  // The page shows `state` and `message` of the latest update: after a change of status that is the
  // resource's own (from status_change), whatever the node's other objects say.
  t.match(updates.at(-1).status, { state: 'running', message: /2\/2 replicas ready/ })

  app.bus.emit('cluster.status', { owner_id: alice.user.id, cluster_id: tracked[0].cluster_id, name: 'sim', from: 'connected', to: 'error', message: 'connection refused' })
  const withError = await s.until('error', (e) => e.some((x) => x.type === 'error'))
  const parsed = JSON.parse(withError.find((e) => e.type === 'error')!.data)
  t.type(parsed, 'string', 'the page shows a string payload as the error text')
  t.match(parsed, /cluster "sim" is unreachable/)
  t.same([...new Set(s.events.map((e) => e.type))].filter((x) => !['metadata', 'status_update', 'error', 'complete'].includes(x)), [], 'no event the page would warn about')
  t.notMatch(s.raw(), /\r/, 'LF only')
})

t.test('pod logs: ?follow=true&tail=100 gives metadata, then raw "<time> <line>" text, one line per event', async (t) => {
  const s = await uiStream(alice, `/resources/${webId}/logs/stream?follow=true&tail=100`)
  t.teardown(() => s.close())
  t.equal(s.status, 200)
  const events = await s.until('metadata and three lines', (e) => e.filter((x) => x.type === 'log').length >= 3)
  t.equal(events[0].type, 'metadata')
  const meta = JSON.parse(events[0].data)
  t.match(meta, { pod: /^web-/, container: 'web', namespace: 'uilive', cluster: 'sim' })
  for (const e of events.filter((x) => x.type === 'log')) {
    t.throws(() => JSON.parse(e.data), 'a log line is not JSON')
    const { timestamp, message } = parseLog(e.data)
    t.ok(Date.parse(timestamp) > 0 && /Z$/.test(timestamp), `an RFC 3339 time first: ${timestamp}`)
    t.ok(message.length > 0 && !message.startsWith('{'), 'then the line itself')
  }
  t.ok(events.some((e) => e.type === 'log' && /heartbeat \d+$/.test(parseLog(e.data).message)), 'new lines keep coming (follow)')
})

t.test('pod logs: follow=false ends with complete; every tail the page offers is accepted; bad queries are 400', async (t) => {
  for (const tail of [50, 100, 500, 1000, 5000]) {
    const s = await uiStream(alice, `/resources/${webId}/logs/stream?follow=false&tail=${tail}`)
    t.equal(s.status, 200, `tail=${tail}`)
    await s.done
    t.equal(s.events.at(-1)?.type, 'complete', `tail=${tail} ends with complete`)
  }
  const two = await uiStream(alice, `/resources/${webId}/logs/stream?follow=false&tail=2`)
  await two.done
  t.same(two.events.map((e) => e.type), ['metadata', 'log', 'log', 'complete'])
  for (const query of ['follow=true&tail=5001', 'follow=sometimes&tail=100', 'tail=-1', 'follow=true&tail=100&lines=3']) {
    const bad = await uiStream(alice, `/resources/${webId}/logs/stream?${query}`)
    t.equal(bad.status, 400, query)
    t.equal(bad.body?.message, bad.body?.error, `${query}: error and message`)
  }
  const foreign = await uiStream(bob, `/resources/${webId}/logs/stream?follow=true&tail=100`)
  t.equal(foreign.status, 404)
  t.same(foreign.body, { error: 'resource not found', message: 'resource not found' })
})

t.test('pod logs: a log that cannot be read is an error event in raw text, then complete', async (t) => {
  const s = await uiStream(alice, `/resources/${webId}/logs/stream?follow=true&tail=100&container=nope`)
  await s.done
  t.same(s.events.map((e) => e.type), ['metadata', 'error', 'complete'])
  t.match(s.events[1].data, /^container "nope" is not in pod "web-[^"]+"; its containers: web$/, 'the text itself, not JSON')
})

interface Frame { type: string; data: string; [k: string]: unknown }

/** A terminal as the UI opens it (useTerminal): the URL it builds, JSON text frames both ways. */
function terminal(resourceId: string, query: { container?: string; token?: string }) {
  let url = `${wsBase}/resources/${resourceId}/exec/terminal?shell=${encodeURIComponent('/bin/sh')}`
  if (query.container) url += `&container=${encodeURIComponent(query.container)}`
  if (query.token) url += `&token=${encodeURIComponent(query.token)}`
  const ws = new WebSocket(url)
  const frames: Frame[] = []
  ws.on('message', (data, isBinary) => { if (!isBinary) frames.push(JSON.parse(String(data)) as Frame) })
  const opened = new Promise<void>((resolve, reject) => {
    ws.on('open', () => resolve())
    ws.on('unexpected-response', (req, res) => { req.destroy(); reject(new Error(`HTTP ${res.statusCode}`)) })
    ws.on('error', reject)
  })
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)))
  const next = (what: string, pred: (f: Frame) => boolean) => waitFor(what, () => frames.find(pred))
  const output = () => frames.filter((x) => x.type === 'output').map((x) => x.data).join('')
  return { ws, frames, opened, closed, next, output, send: (frame: string) => ws.send(frame) }
}

t.test('terminal: the metadata string parsed twice, the UI\'s resize frame, echo hi, and a close reason string', async (t) => {
  const c = terminal(webId, { container: 'web', token: alice.token })
  await c.opened
  const meta = await c.next('metadata', (x) => x.type === 'metadata')
  t.equal(c.frames[0], meta, 'metadata first')
  t.type(meta.data, 'string', 'data is a JSON string, as the UI expects')
  const header = JSON.parse(meta.data)
  t.match(header, { pod: /^web-/, container: 'web', namespace: 'uilive', cluster: 'sim' })
  await c.next('prompt', () => c.output().includes('# '))
  c.send('{"type":"resize","data":"","rows":31,"cols":114}')
  c.send(JSON.stringify({ type: 'input', data: 'echo hi' }))
  c.send(JSON.stringify({ type: 'input', data: '\r' }))
  await waitFor('hi echoed back', () => /\r\nhi\r\n/.test(c.output()))
  c.send(JSON.stringify({ type: 'input', data: 'exit 3\r' }))
  const close = await c.next('close', (x) => x.type === 'close')
  t.equal(close.data, 'exited (exit code 3)', 'the reason the UI prints')
  t.notOk(c.frames.some((x) => x.type === 'error'), 'the resize frame with its empty data is accepted')
  for (const x of c.frames) t.type(x.data, 'string', `${x.type}: data is a string`)
  t.equal(await c.closed, 1000)
})

t.test('terminal refusals: no token is a refused upgrade; another user\'s resource is an error, then close', async (t) => {
  await t.rejects(terminal(webId, { container: 'web' }).opened, /HTTP 401/)
  const stranger = terminal(webId, { container: 'web', token: bob.token })
  t.equal((await stranger.next('error', (x) => x.type === 'error')).data, 'resource not found')
  t.equal((await stranger.next('close', (x) => x.type === 'close')).data, 'refused')
  await stranger.closed
  const plain = await app.inject({ url: `/kubeorch/v1/api/resources/${webId}/exec/terminal?shell=%2Fbin%2Fsh`, headers: alice.headers })
  t.equal(plain.statusCode, 426)
  t.equal(plain.json().message, plain.json().error)
})

t.test('a Pod opened from its Deployment\'s pods: its page says Pod with its containers; logs and terminal by its id', async (t) => {
  const ui = async (path: string) => { const res = await app.inject({ url: `/kubeorch/v1/api${path}`, headers: alice.headers }); return { status: res.statusCode, body: res.json() as Json } }
  const pods = await waitFor('the pods recorded, each with its id', async () => {
    const res = await ui(`/resources/${webId}/pods`)
    return res.body.pods?.length === 2 && res.body.pods.every((p: Json) => typeof p.id === 'string') && res.body.pods as Json[]
  }, 20_000)
  const pod = pods[0]
  t.ok(STATUSES.includes(pod.status))
  const detail = await ui(`/resources/${pod.id}`)
  t.equal(detail.status, 200)
  const r = detail.body.resource
  t.match(r, { id: pod.id, name: pod.name, type: 'Pod', namespace: 'uilive', clusterName: 'sim', parentId: webId, workflowId: wfId })
  t.ok(STATUSES.includes(r.status))
  t.equal(r.spec.containers[0].name, 'web', 'spec.containers[].name: what the terminal tab sends as container')
  t.equal(r.spec.nodeName, pod.spec.nodeName)
  t.ok((await ui('/resources?type=Pod&hideSystem=true&limit=25&offset=0')).body.resources.some((x: Json) => x.id === pod.id), 'type=Pod lists pods')

  const status = await uiStream(alice, `/resources/${pod.id}/stream`)
  await status.until('metadata', (e) => e.length >= 1)
  status.close()
  t.match(JSON.parse(status.events[0].data), { id: pod.id, type: 'Pod', name: pod.name, spec: { containers: [{ name: 'web' }] } }, 'its status stream opens on the Pod')

  const logs = await uiStream(alice, `/resources/${pod.id}/logs/stream?follow=false&tail=5`)
  await logs.done
  t.match(JSON.parse(logs.events[0].data), { pod: pod.name, container: 'web', namespace: 'uilive', cluster: 'sim' }, 'the logs of that pod')
  t.ok(logs.events.some((e) => e.type === 'log' && Date.parse(parseLog(e.data).timestamp) > 0))
  t.equal(logs.events.at(-1)?.type, 'complete')

  const c = terminal(pod.id, { container: r.spec.containers[0].name, token: alice.token })
  const meta = await c.next('metadata', (x) => x.type === 'metadata')
  t.match(JSON.parse(meta.data), { pod: pod.name, container: 'web', namespace: 'uilive', cluster: 'sim' }, 'a shell in that pod')
  c.send(JSON.stringify({ type: 'input', data: 'echo $HOSTNAME\r' }))
  await waitFor('its hostname', () => c.output().includes(`\r\n${pod.name}\r\n`))
  c.send(JSON.stringify({ type: 'input', data: 'exit\r' }))
  t.equal((await c.next('close', (x) => x.type === 'close')).data, 'exited (exit code 0)')
  await c.closed
})

t.test('the encoders alone: what a frame looks like in the UI\'s dialect for each case', async (t) => {
  t.equal(reframedFrame(podLogReframe, 7, 'log', { line: 'hello world', timestamp: '2026-01-01T00:00:00.000Z' }), 'id: 7\nevent: log\ndata: 2026-01-01T00:00:00.000Z hello world\n\n')
  t.equal(reframedFrame(podLogReframe, 8, 'log', { line: 'no time here', timestamp: null }), 'id: 8\nevent: log\ndata: - no time here\n\n', 'a line without a time: "-", never its first word as the time')
  t.equal(reframedFrame(podLogReframe, 9, 'log', { line: '', timestamp: '2026-01-01T00:00:00.000Z' }), 'id: 9\nevent: log\ndata: 2026-01-01T00:00:00.000Z \n\n', 'an empty line still has a data payload')
  t.equal(reframedFrame(podLogReframe, 10, 'error', { error: 'container "x" is not\nin pod' }), 'id: 10\nevent: error\ndata: container "x" is not in pod\n\n', 'raw text, on one line')
  t.equal(reframedFrame(podLogReframe, 11, 'complete', {}), 'id: 11\nevent: complete\ndata: {}\n\n')
  t.same(resourceStreamReframe('node_update', { node_id: 'n', kind: 'Service', status: { state: 'running', message: 'cluster IP 10.0.0.1', clusterIP: '10.0.0.1', externalIP: null, type: 'ClusterIP', ports: 1, action: 'created' } }),
    { type: 'status_update', data: { status: { state: 'running', message: 'cluster IP 10.0.0.1', clusterIP: '10.0.0.1' } } }, 'only the keys the page reads, no nulls')
  t.same(resourceStreamReframe('node_update', { node_id: 'n', kind: 'X', status: { state: 'exploded', message: '' } }), { type: 'status_update', data: { status: { state: 'unknown', message: '' } } }, 'a state outside the page\'s set reads as unknown')
  t.same(resourceStreamReframe('node_update', { node_id: 'n', kind: 'Deployment', status: { state: 'drifted', live_state: 'running', message: 'm', replicas: 2, drift: { detected_at: 'x', fields: ['spec.replicas'] } } }),
    { type: 'status_update', data: { status: { state: 'running', message: 'm', replicas: 2 } } }, 'a drifted node shows its objects\' own state on the resource page (kubectl scale made it drift)')
  t.same(resourceStreamReframe('status_change', { resource_id: 'r', new_status: 'failed', old_status: 'running', message: 'crash loop' }), { type: 'status_update', data: { status: { state: 'failed', message: 'crash loop' } } })
  t.same(resourceStreamReframe('error', { error: 'gone' }), { type: 'error', data: 'gone' })
  t.equal(resourceStreamReframe('workflow_sync', { nodes: [] }), null, 'nothing the page does not handle')
  t.same(JSON.parse(terminalEncoder('metadata', { pod: 'p', container: 'c', namespace: 'n', cluster: 'k', shell: '/bin/sh' })), { type: 'metadata', data: '{"pod":"p","container":"c","namespace":"n","cluster":"k","shell":"/bin/sh"}' })
  t.same(JSON.parse(terminalEncoder('close', { reason: 'idle timeout', exit_code: null })), { type: 'close', data: 'idle timeout' })
  t.same(JSON.parse(terminalEncoder('output', 'a\u001b[0mb')), { type: 'output', data: 'a\u001b[0mb' }, 'output unchanged, ANSI codes and all')
})
