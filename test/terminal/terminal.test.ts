// The terminal WebSocket against the simulator: a shell round trip with its exit code, the allowlist, who
// may open one (deployers, not viewers, not strangers), the idle timeout, resize, bad frames, and the token
// (accepted in the query here only) never reaching a log line.
import t from 'tap'
import WebSocket from 'ws'
import { startTestApp } from '../helpers/app.ts'
import { startTestCluster } from '../helpers/kube.ts'
import { podWorld } from '../helpers/pod-world.ts'
import { raw, waitFor } from '../kube-sim/test-helpers.ts'
import { MANAGED_BY, MANAGED_BY_LABEL } from '../../src/manifests/metadata.ts'
import { parseClientFrame } from '../../src/routes/resources/terminal.ts'
import { exitCodeOf } from '../../src/kube/exec-terminal.ts'
import { Value } from 'typebox/value'
import { TerminalServerMessage } from '../../schemas/pod-streams.ts'

const IDLE_MS = 3000
const sim = await startTestCluster(t)
const { app, logs } = await startTestApp(t, { CLUSTER_TIMEOUT_MS: 5000, TERMINAL_IDLE_TIMEOUT_MS: IDLE_MS, TERMINAL_PING_MS: 200 })
const address = await app.listen({ port: 0, host: '127.0.0.1' })
const wsBase = address.replace(/^http/, 'ws')
const { alice, bob, carol, create, track } = await podWorld(app, sim, 'term')
await create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'tty' } })
await create('/apis/apps/v1/namespaces/tty/deployments', {
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'box', labels: { [MANAGED_BY_LABEL]: MANAGED_BY } },
  spec: { replicas: 1, selector: { matchLabels: { app: 'box' } }, template: { metadata: { labels: { app: 'box' } }, spec: { containers: [{ name: 'main', image: 'busybox:1.36' }, { name: 'side', image: 'busybox:1.36' }] } } },
})
await waitFor('box ready', async () => (await raw(sim, 'GET', '/apis/apps/v1/namespaces/tty/deployments/box')).json?.status?.readyReplicas === 1)

const boxId = await track(alice, 'box', 'tty')
const carolsBoxId = await track(carol, 'box', 'tty')

const undocumented: unknown[] = []
let framesSeen = 0
interface Frame { type: string; data: any } // eslint-disable-line @typescript-eslint/no-explicit-any

/** A terminal client: every frame it got, a waiter for the next matching one, and the socket's close. */
function connect(resourceId: string, query: Record<string, string>, options: WebSocket.ClientOptions = {}) {
  const frames: Frame[] = []
  const ws = new WebSocket(`${wsBase}/v1/api/resources/${resourceId}/exec/terminal?${new URLSearchParams(query)}`, options)
  const closed = new Promise<{ code: number }>((resolve) => ws.on('close', (code) => resolve({ code })))
  const opened = new Promise<void>((resolve, reject) => { ws.on('open', () => resolve()); ws.on('unexpected-response', (req, res) => { req.destroy(); reject(new Error(`HTTP ${res.statusCode}`)) }); ws.on('error', reject) })
  ws.on('message', (data) => {
    const frame = JSON.parse(String(data))
    // Every server frame matches the documented shape (x-websocket-messages); one that does not fails the test.
    framesSeen++
    if (!Value.Check(TerminalServerMessage, frame)) { undocumented.push(frame); frames.push({ type: 'undocumented', data: frame }) } else frames.push(frame)
  })
  const next = (what: string, pred: (f: Frame) => boolean) => waitFor(what, () => frames.find(pred))
  const output = () => frames.filter((f) => f.type === 'output').map((f) => f.data).join('')
  const send = (frame: unknown) => ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame))
  return { ws, frames, closed, opened, next, output, send }
}

t.test('echo hi round trip, then exit 3: the close message carries the exit code before the socket closes', async (t) => {
  const c = connect(boxId, { token: alice.token, shell: 'sh' })
  await c.opened
  const meta = await c.next('metadata', (f) => f.type === 'metadata')
  t.match(meta.data, { pod: /^box-/, container: 'main', namespace: 'tty', cluster: 'term', shell: 'sh' })
  t.equal(c.frames[0], meta, 'metadata is the first message')
  await c.next('prompt', () => c.output().includes('# '))
  c.send({ type: 'resize', rows: 40, cols: 120 })
  c.send({ type: 'input', data: 'echo hi\r' })
  await waitFor('hi echoed back', () => /\r\nhi\r\n/.test(c.output()))
  c.send({ type: 'input', data: 'exit 3\r' })
  const close = await c.next('close message', (f) => f.type === 'close')
  t.same(close.data, { reason: 'exited', exit_code: 3 })
  t.equal(c.frames.at(-1)?.type, 'close', 'close is the last message')
  t.notOk(c.frames.some((f) => f.type === 'undocumented'), 'every frame is of a documented shape')
  t.equal((await c.closed).code, 1000)
  t.notOk(c.frames.some((f) => f.type === 'error'), 'a resize is accepted without an error')
})

t.test('a chosen container and a /bin/ path shell; exit 0 closes with exit_code 0', async (t) => {
  const c = connect(boxId, { token: alice.token, shell: '/bin/bash', container: 'side' })
  t.match((await c.next('metadata', (f) => f.type === 'metadata')).data, { container: 'side', shell: '/bin/bash' })
  t.equal(c.frames[0].type, 'metadata', 'metadata is the first message')
  c.send({ type: 'input', data: 'echo $HOSTNAME; exit\r' })
  t.same((await c.next('close', (f) => f.type === 'close')).data, { reason: 'exited', exit_code: 0 })
  t.match(c.output(), /box-/)
})

t.test('a shell outside the allowlist is refused with an error message, then close', async (t) => {
  for (const shell of ['python', '/usr/bin/sh', 'sh -c id', '/bin/sh;id']) {
    const c = connect(boxId, { token: alice.token, shell })
    const err = await c.next('error', (f) => f.type === 'error')
    t.match(err.data, /is not allowed; use one of sh, \/bin\/sh, bash/, shell)
    t.match((await c.next('close', (f) => f.type === 'close')).data, { reason: 'refused', exit_code: null })
    t.equal((await c.closed).code, 1008)
    t.notOk(c.frames.some((f) => f.type === 'metadata' || f.type === 'output'), 'nothing ran')
  }
})

t.test('a viewer of the cluster may not open a terminal; a stranger gets not found', async (t) => {
  const viewer = connect(carolsBoxId, { token: carol.token })
  t.match((await viewer.next('error', (f) => f.type === 'error')).data, /shared with you as viewer/)
  t.match((await viewer.next('close', (f) => f.type === 'close')).data, { reason: 'refused', exit_code: null })
  await viewer.closed
  const stranger = connect(boxId, { token: bob.token })
  t.equal((await stranger.next('error', (f) => f.type === 'error')).data, 'resource not found')
  await stranger.closed
  t.notOk([...viewer.frames, ...stranger.frames].some((f) => f.type === 'metadata'))
})

t.test('without a valid token the upgrade is refused (401); a plain GET is told to upgrade', async (t) => {
  await t.rejects(connect(boxId, {}).opened, /HTTP 401/)
  await t.rejects(connect(boxId, { token: 'not-a-token' }).opened, /HTTP 401/)
  const plain = await app.inject({ url: `/v1/api/resources/${boxId}/exec/terminal`, headers: alice.headers })
  t.equal(plain.statusCode, 426)
  t.match(plain.json(), { error: /WebSocket/ })
  t.equal((await app.inject({ url: `/v1/api/resources/${boxId}/exec/terminal`, headers: bob.headers })).statusCode, 404)
  t.equal((await app.inject({ url: `/v1/api/resources/${boxId}/exec/terminal?token=${alice.token}` })).statusCode, 426, 'the query token works on this route')
  t.equal((await app.inject({ url: `/v1/api/resources/${boxId}/pods?token=${alice.token}` })).statusCode, 401, 'and on no other')
})

t.test('bad client frames get an error message and the session goes on', async (t) => {
  const c = connect(boxId, { token: alice.token })
  await c.next('metadata', (f) => f.type === 'metadata')
  for (const bad of ['not json', '{"type":"launch"}', '{"type":"input","data":5}', '{"type":"resize","rows":0,"cols":80}', 'null', '[]']) c.send(bad)
  c.ws.send(Buffer.from([1, 2, 3]), { binary: true })
  await waitFor('seven errors', () => c.frames.filter((f) => f.type === 'error').length === 7)
  c.send({ type: 'input', data: 'echo still here; exit 0\r' })
  t.same((await c.next('close', (f) => f.type === 'close')).data, { reason: 'exited', exit_code: 0 })
  t.match(c.output(), /still here/)
})

t.test('a session without input is closed after the idle timeout, with a close message', async (t) => {
  const started = Date.now()
  const c = connect(boxId, { token: alice.token })
  await c.next('metadata', (f) => f.type === 'metadata')
  const close = await waitFor('idle close', () => c.frames.find((f) => f.type === 'close'), IDLE_MS * 4)
  t.same(close.data, { reason: 'idle timeout', exit_code: null })
  t.ok(Date.now() - started >= IDLE_MS - 100, 'not before the timeout')
  t.equal((await c.closed).code, 1000)
})

t.test('pings keep an answering client connected', async (t) => {
  const c = connect(boxId, { token: alice.token })
  let pings = 0
  c.ws.on('ping', () => pings++)
  await c.next('metadata', (f) => f.type === 'metadata')
  await waitFor('three pings', () => pings >= 3)
  c.send({ type: 'input', data: 'exit 0\r' })
  t.same((await c.next('close', (f) => f.type === 'close')).data, { reason: 'exited', exit_code: 0 })
})

t.test('a client that stops answering pings is dropped', async (t) => {
  const c = connect(boxId, { token: alice.token }, { autoPong: false })
  await c.next('metadata', (f) => f.type === 'metadata')
  await c.closed
  await waitFor('the reason logged', () => logs.some((l) => l.includes('"reason":"the client stopped answering pings"')))
  t.notOk(c.frames.some((f) => f.type === 'close' && f.data.reason === 'idle timeout'), 'dropped for the pings, not the idle timeout')
})

t.test('the token never appears in a log line', async (t) => {
  const joined = logs.join('')
  for (const u of [alice, bob, carol]) t.notOk(joined.includes(u.token), 'token absent')
  t.match(joined, /"url":"[^"]*exec\/terminal\?[^"]*token=\[REDACTED\][^"]*"[^\n]*"terminal session ended"/, 'a session\'s log line shows its URL with the token redacted')
  t.match(joined, /"url":"[^"]*exec\/terminal\?token=\[REDACTED\]"[^\n]*"statusCode":401/, 'so does the access line of a refused upgrade')
})

t.test('frame parsing and exit codes', async (t) => {
  t.same(parseClientFrame('{"type":"input","data":"ls\\r"}'), { type: 'input', data: 'ls\r' })
  t.same(parseClientFrame('{"type":"resize","rows":24,"cols":80}'), { type: 'resize', rows: 24, cols: 80 })
  t.match(parseClientFrame('{"type":"resize","rows":24.5,"cols":80}'), { problem: /integers/ })
  t.match(parseClientFrame('{"type":"resize","rows":24,"cols":1001}'), { problem: /integers/ })
  t.equal(exitCodeOf({ status: 'Success' }), 0)
  t.equal(exitCodeOf({ status: 'Failure', reason: 'NonZeroExitCode', details: { causes: [{ reason: 'ExitCode', message: '42' }] } }), 42)
  t.equal(exitCodeOf({ status: 'Failure', message: 'boom' }), null)
  t.equal(exitCodeOf(null), null)
})

t.test('every server frame of every session above had a documented shape', async (t) => {
  t.ok(framesSeen > 30, `${framesSeen} frames`)
  t.same(undocumented, [])
})

// Last: it closes the app.
t.test('shutdown ends an open session with a close message', async (t) => {
  const c = connect(boxId, { token: alice.token })
  await c.next('metadata', (f) => f.type === 'metadata')
  await app.close()
  t.same((await c.next('close', (f) => f.type === 'close')).data, { reason: 'the service is shutting down', exit_code: null })
  t.equal((await c.closed).code, 1001)
})
