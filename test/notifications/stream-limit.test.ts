// A user's notification streams are bounded, newest wins (API.md §14), over real sockets: the fifth stream
// of a user ends the oldest with a final `event: replaced` frame and its response ends, while the four
// newest stay open and keep receiving; another user's streams are untouched; /v1/api and the KubeOrch
// adapter's /user-notifications/stream count together; a replaced stream gives its MAX_STREAMS_PER_USER slot
// back. MAX_STREAMS_PER_USER equals the notification limit here, so the fifth stream opens only if the
// slot of the one it replaces is given back before its own is taken.
import t, { type Test } from 'tap'
import { Value } from 'typebox/value'
import { startTestApp } from '../helpers/app.ts'
import { registerUser, type TestUser } from '../helpers/auth.ts'
import { listen, openStream, type SseStream } from '../streams/sse-client.ts'
import { waitFor } from '../kube-sim/test-helpers.ts'
import { StreamReplaced } from '../../schemas/notifications.ts'

const LIMIT = 4
const { app, logs } = await startTestApp(t, { MAX_STREAMS_PER_USER: LIMIT })
const base = await listen(app)
const V1 = '/v1/api/notifications/stream'
const UI = '/kubeorch/v1/api/user-notifications/stream'

t.test('the default is 4', async (t) => {
  const { testConfig } = await import('../../src/config.ts')
  t.equal(testConfig({}).MAX_NOTIFICATION_STREAMS_PER_USER, 4)
})

async function outage(user: TestUser, name: string) {
  app.bus.emit('cluster.status', { owner_id: user.user.id, cluster_id: name, name, from: 'connected', to: 'error', message: `${name} refused` })
  await app.services.notifications.idle()
}

/** Opens a stream and waits until it has started (the response head arrived; /v1/api: its metadata too). */
async function open(t: { teardown(fn: () => unknown): void }, user: TestUser, path = V1): Promise<SseStream> {
  const s = await openStream(base, path, user.headers)
  t.teardown(() => s.close())
  if (s.status !== 200) throw new Error(`${path}: ${s.status} ${JSON.stringify(s.body)}`)
  if (path === V1) await s.until('metadata', (e) => e.some((x) => x.type === 'metadata'))
  return s
}

const heard = (s: SseStream, title: string) => s.events.some((e) => (e.type === 'notification' || e.type === 'new_notification') && e.data.title === title)

async function replacedThenEnded(t: Test, s: SseStream, what: string) {
  await s.ended
  const last = s.events.at(-1)!
  t.equal(last.type, 'replaced', `${what}: its last frame is event: replaced`)
  t.equal(last.id, null, 'with no id (a reconnect keeps its Last-Event-ID)')
  t.ok(Value.Check(StreamReplaced, last.data), 'in its documented shape')
  t.same(last.data, { reason: 'a newer notification stream of this user opened', limit: LIMIT })
  t.ok(s.raw().endsWith(`event: replaced\ndata: ${JSON.stringify(last.data)}\n\n`), 'nothing after it: the response ended')
}

t.test('five streams of one user: the first gets `replaced` and ends, the four newest stay open and still receive notifications; the slot is given back', async (t) => {
  const alice = await registerUser(app)
  const streams: SseStream[] = []
  for (let i = 0; i < 5; i++) streams.push(await open(t, alice))
  await replacedThenEnded(t, streams[0], 'the oldest')
  const [, ...kept] = streams
  t.equal(app.notificationStreams.held(alice.user.id), 4)
  await waitFor('the replaced stream\'s slot given back', () => app.userLimits.held('streams', alice.user.id) === 4 || null, 5_000, 5)

  await outage(alice, 'after-replace')
  for (const s of kept) await s.until('the notification', () => heard(s, 'Cluster after-replace is unreachable'))
  t.notOk(kept.some((s) => s.isEnded), 'the four newest are still open')
  t.notOk(kept.some((s) => s.events.some((e) => e.type === 'replaced')), 'and were not told to go')
  t.notOk(heard(streams[0], 'Cluster after-replace is unreachable'), 'the replaced one heard nothing more')
  t.ok(logs.join('').split('\n').some((l) => l.includes('"msg":"stream closed"') && l.includes('"final":"replaced"')), 'its end is logged as replaced')
})

t.test('another user\'s streams are unaffected by one user\'s replacements', async (t) => {
  const alice = await registerUser(app)
  const bob = await registerUser(app)
  const bobs = [await open(t, bob), await open(t, bob)]
  const alices: SseStream[] = []
  for (let i = 0; i < 6; i++) alices.push(await open(t, alice))
  await replacedThenEnded(t, alices[0], 'alice\'s first')
  await replacedThenEnded(t, alices[1], 'alice\'s second')
  t.equal(app.notificationStreams.held(bob.user.id), 2)
  await outage(bob, 'bobs-own')
  for (const s of bobs) await s.until('bob\'s notification', () => heard(s, 'Cluster bobs-own is unreachable'))
  t.notOk(bobs.some((s) => s.isEnded || s.events.some((e) => e.type === 'replaced')), 'bob\'s streams are open and were not replaced')
})

t.test('both prefixes count together: the oldest goes, whichever prefix it or the new one came by; the adapter\'s stream gets `replaced` too', async (t) => {
  const carol = await registerUser(app)
  const v1a = await open(t, carol, V1)
  const uia = await open(t, carol, UI)
  const v1b = await open(t, carol, V1)
  const uib = await open(t, carol, UI)
  t.equal(app.notificationStreams.held(carol.user.id), 4)
  // A fifth by the adapter ends the oldest, a /v1/api one.
  const uic = await open(t, carol, UI)
  await replacedThenEnded(t, v1a, 'the oldest (/v1/api), replaced by an adapter stream')
  // A sixth by /v1/api ends the next oldest, the adapter's first.
  const v1c = await open(t, carol, V1)
  await replacedThenEnded(t, uia, 'the adapter\'s oldest, replaced by a /v1/api stream')
  const open4 = [v1b, uib, uic, v1c]
  t.notOk(open4.some((s) => s.isEnded), 'the four newest, two per prefix, stay open')
  await outage(carol, 'mixed')
  for (const s of open4) await s.until('the notification', () => heard(s, 'Cluster mixed is unreachable'))
  t.ok(uib.events.some((e) => e.type === 'new_notification'), 'the adapter\'s streams still speak its dialect')
  await waitFor('four slots held', () => app.userLimits.held('streams', carol.user.id) === 4 || null, 5_000, 5)
})

t.test('a stream closed by its client leaves the count: the next one replaces nothing', async (t) => {
  const dave = await registerUser(app)
  const streams: SseStream[] = []
  for (let i = 0; i < 4; i++) streams.push(await open(t, dave))
  streams[3].close()
  await streams[3].ended
  await waitFor('the closed stream to leave the count', () => app.notificationStreams.held(dave.user.id) === 3 || null, 5_000, 5)
  const fifth = await open(t, dave)
  t.equal(app.notificationStreams.held(dave.user.id), 4)
  await outage(dave, 'after-leave')
  for (const s of [...streams.slice(0, 3), fifth]) await s.until('the notification', () => heard(s, 'Cluster after-leave is unreachable'))
  t.notOk(streams.slice(0, 3).some((s) => s.isEnded || s.events.some((e) => e.type === 'replaced')), 'nobody was replaced')
})
