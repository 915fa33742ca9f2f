// Per-user limits on long-lived connections (issue: one user held 2,000 SSE streams and 60 terminals):
// MAX_STREAMS_PER_USER over every SSE route, MAX_LOG_FOLLOWS_PER_USER over followed pod logs,
// MAX_TERMINALS_PER_USER over terminal sessions. One more is refused (429 {error} naming the setting; the
// terminal's error and close messages), another user is not affected, and a slot comes back however the
// connection ends: the client leaving, the server ending the stream, a refusal after the slot was taken.
import t from 'tap'
import WebSocket from 'ws'
import { startTestApp } from '../helpers/app.ts'
import type { TestUser } from '../helpers/auth.ts'
import { startTestCluster } from '../helpers/kube.ts'
import { podWorld } from '../helpers/pod-world.ts'
import { raw, waitFor } from '../kube-sim/test-helpers.ts'
import { openStream, type SseStream } from '../streams/sse-client.ts'
import { TooManyConnections, UserLimits } from '../../src/services/user-limits.ts'

const STREAMS = 3
const FOLLOWS = 2
const TERMINALS = 2

const sim = await startTestCluster(t, { timing: { logIntervalMs: 50 } })
const { app } = await startTestApp(t, {
  CLUSTER_TIMEOUT_MS: 5000, MAX_STREAMS_PER_USER: STREAMS, MAX_LOG_FOLLOWS_PER_USER: FOLLOWS, MAX_TERMINALS_PER_USER: TERMINALS, TERMINAL_PING_MS: 200,
})
const base = await app.listen({ port: 0, host: '127.0.0.1' })
const { alice, bob, carol, call, create, track } = await podWorld(app, sim, 'limits')
await create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'lim' } })
await create('/apis/apps/v1/namespaces/lim/deployments', {
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' },
  spec: {
    replicas: 1, selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' }, annotations: { 'kube-sim.io/logs': 'one\ntwo' } }, spec: { containers: [{ name: 'web', image: 'busybox:1.36' }] } },
  },
})
await waitFor('web ready', async () => (await raw(sim, 'GET', '/apis/apps/v1/namespaces/lim/deployments/web')).json?.status?.readyReplicas === 1)
const alicesWeb = await track(alice, 'web', 'lim')
const carolsWeb = await track(carol, 'web', 'lim')

const workflowOf = async (u: TestUser) => ((await call(u, 'POST', '/v1/api/workflows', { name: `wf-${Math.random()}` })).body as { id: string }).id
const auth = (u: TestUser) => ({ authorization: `Bearer ${u.token}` })
const held = (kind: 'streams' | 'terminals' | 'log_follows', u: TestUser) => app.userLimits.held(kind, u.user.id)

t.test('the limits are configuration with sane defaults', async (t) => {
  const { testConfig } = await import('../../src/config.ts')
  const defaults = testConfig()
  t.equal(defaults.MAX_STREAMS_PER_USER, 50)
  t.equal(defaults.MAX_TERMINALS_PER_USER, 5)
  t.equal(defaults.MAX_LOG_FOLLOWS_PER_USER, 20)
})

t.test('SSE streams: one more than MAX_STREAMS_PER_USER is 429 on any stream route; other users unaffected; leaving gives the slot back', async (t) => {
  const wf = await workflowOf(bob)
  const open: SseStream[] = []
  t.teardown(() => { for (const s of open) s.close() })
  for (let i = 0; i < STREAMS; i++) {
    const s = await openStream(base, `/v1/api/workflows/${wf}/status/stream`, auth(bob))
    t.equal(s.status, 200)
    open.push(s)
    await s.until('metadata', (e) => e.some((x) => x.type === 'metadata'))
  }
  t.equal(held('streams', bob), STREAMS)

  // A stream route of another kind counts against the same limit, and answers before any stream starts.
  const importId = ((await call(bob, 'POST', '/v1/api/import/analyze', { source: 'compose', content: 'services:\n  web:\n    image: nginx\n' })).body as { id: string }).id
  for (const path of [`/v1/api/workflows/${wf}/status/stream`, `/v1/api/import/${importId}/stream`]) {
    const refused = await openStream(base, path, auth(bob))
    t.equal(refused.status, 429, `${path} refused`)
    t.match(refused.headers['content-type'], /application\/json/)
    t.same(refused.body, { error: `too many open event streams: at most ${STREAMS} per user (MAX_STREAMS_PER_USER); close one first` })
  }
  t.equal(held('streams', bob), STREAMS, 'a refused stream holds no slot')

  // Not found is not counted either (the snapshot is read first).
  const missing = await openStream(base, '/v1/api/workflows/000000000000000000000000/status/stream', auth(bob))
  t.equal(missing.status, 404)

  // Another user is not affected.
  const other = await openStream(base, `/v1/api/workflows/${await workflowOf(alice)}/status/stream`, auth(alice))
  t.equal(other.status, 200)
  other.close()
  await waitFor('alice\'s slot back', () => held('streams', alice) === 0)

  // The client leaving gives the slot back.
  open.shift()!.close()
  await waitFor('bob\'s slot back', () => held('streams', bob) === STREAMS - 1)
  const again = await openStream(base, `/v1/api/workflows/${wf}/status/stream`, auth(bob))
  t.equal(again.status, 200)
  open.push(again)
})

t.test('a stream the server ends (logs with follow=false) gives its slot back', async (t) => {
  const before = held('streams', carol)
  for (let i = 0; i < STREAMS + 2; i++) {
    const s = await openStream(base, `/v1/api/resources/${carolsWeb}/logs/stream?follow=false`, auth(carol))
    t.equal(s.status, 200, `stream ${i + 1} of more than the limit, one after the other`)
    await s.ended
    await waitFor('slot back', () => held('streams', carol) === before)
  }
})

t.test('followed logs: one more than MAX_LOG_FOLLOWS_PER_USER is 429; its stream slot is given back; follow=false still works', async (t) => {
  const open: SseStream[] = []
  t.teardown(() => { for (const s of open) s.close() })
  for (let i = 0; i < FOLLOWS; i++) {
    const s = await openStream(base, `/v1/api/resources/${carolsWeb}/logs/stream?follow=true&tail=1`, auth(carol))
    t.equal(s.status, 200)
    open.push(s)
    await s.until('metadata', (e) => e.some((x) => x.type === 'metadata'))
  }
  t.equal(held('log_follows', carol), FOLLOWS)
  const refused = await openStream(base, `/v1/api/resources/${carolsWeb}/logs/stream?follow=true`, auth(carol))
  t.equal(refused.status, 429)
  t.same(refused.body, { error: `too many followed log streams: at most ${FOLLOWS} per user (MAX_LOG_FOLLOWS_PER_USER); close one first` })
  t.equal(held('streams', carol), FOLLOWS, 'the refused stream gave its stream slot back')
  t.equal(held('log_follows', carol), FOLLOWS)

  const tail = await openStream(base, `/v1/api/resources/${carolsWeb}/logs/stream?follow=false`, auth(carol))
  t.equal(tail.status, 200, 'a tail without follow is not a followed log')
  await tail.ended

  open.shift()!.close()
  await waitFor('follow slot back', () => held('log_follows', carol) === FOLLOWS - 1)
  const again = await openStream(base, `/v1/api/resources/${carolsWeb}/logs/stream?follow=true&tail=1`, auth(carol))
  t.equal(again.status, 200)
  open.push(again)
  for (const s of open) s.close()
  await waitFor('all slots back', () => held('log_follows', carol) === 0 && held('streams', carol) === 0)
})

interface Frame { type: string; data: any } // eslint-disable-line @typescript-eslint/no-explicit-any
function terminal(u: TestUser) {
  const frames: Frame[] = []
  const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/v1/api/resources/${alicesWeb}/exec/terminal?shell=sh`, { headers: auth(u) })
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)))
  ws.on('message', (data) => frames.push(JSON.parse(String(data))))
  ws.on('error', () => undefined)
  const next = (type: string) => waitFor(type, () => frames.find((f) => f.type === type))
  return { ws, frames, closed, next }
}

t.test('terminals: one more than MAX_TERMINALS_PER_USER gets an error naming the limit and a close; closing one frees a slot', async (t) => {
  const sessions = [terminal(alice), terminal(alice)]
  t.teardown(() => { for (const s of sessions) s.ws.terminate() })
  for (const s of sessions) await s.next('metadata')
  t.equal(held('terminals', alice), TERMINALS)

  const extra = terminal(alice)
  t.same((await extra.next('error')).data, `too many open terminals: at most ${TERMINALS} per user (MAX_TERMINALS_PER_USER); close one first`)
  t.same((await extra.next('close')).data, { reason: 'refused', exit_code: null })
  t.equal(await extra.closed, 1008)
  t.equal(held('terminals', alice), TERMINALS, 'the refused session holds no slot')

  // The client closing its socket gives the slot back.
  sessions.shift()!.ws.close()
  await waitFor('terminal slot back', () => held('terminals', alice) === TERMINALS - 1)
  // The shell exiting (the server ending the session) gives it back too.
  const another = terminal(alice)
  sessions.push(another)
  await another.next('metadata')
  another.ws.send(JSON.stringify({ type: 'input', data: 'exit 0\r' }))
  t.same((await another.next('close')).data, { reason: 'exited', exit_code: 0 })
  await waitFor('slot back after exit', () => held('terminals', alice) === TERMINALS - 1)
  for (const s of sessions) s.ws.close()
  await waitFor('all terminal slots back', () => held('terminals', alice) === 0)
})

t.test('UserLimits: release is idempotent and per user and kind', async (t) => {
  const limits = new UserLimits({ streams: 1, terminals: 1, log_follows: 1 })
  const release = limits.acquire('streams', 'u1')
  t.throws(() => limits.acquire('streams', 'u1'), TooManyConnections)
  t.doesNotThrow(() => limits.acquire('streams', 'u2'), 'another user')
  t.doesNotThrow(() => limits.acquire('terminals', 'u1'), 'another kind')
  release()
  release()
  t.equal(limits.held('streams', 'u1'), 0, 'released once, however often called')
  const again = limits.acquire('streams', 'u1')
  t.throws(() => limits.acquire('streams', 'u1'), TooManyConnections, 'a double release did not free a second slot')
  again()
})
