// GET /v1/api/notifications/stream over real HTTP: `metadata {unread_count}` first (with retry), then each
// new notification of this user only, in its documented shape; marking read sends a fresh count; a client
// reconnecting with Last-Event-ID gets what it missed; the stream counts against MAX_STREAMS_PER_USER.
import t from 'tap'
import { Value } from 'typebox/value'
import { startTestApp } from '../helpers/app.ts'
import { registerUser, type TestUser } from '../helpers/auth.ts'
import { listen, openStream, type SseStream } from '../streams/sse-client.ts'
import { waitFor } from '../kube-sim/test-helpers.ts'
import { Notification, UnreadCount } from '../../schemas/notifications.ts'

const { app } = await startTestApp(t, { MAX_STREAMS_PER_USER: 3 })
const base = await listen(app)
const alice = await registerUser(app)
const bob = await registerUser(app)

async function outage(user: TestUser, name: string) {
  app.bus.emit('cluster.status', { owner_id: user.user.id, cluster_id: name, name, from: 'connected', to: 'error', message: `${name} refused` })
  await app.services.notifications.idle()
}

async function open(t: { teardown(fn: () => unknown): void }, user: TestUser, headers: Record<string, string> = {}): Promise<SseStream> {
  const s = await openStream(base, '/v1/api/notifications/stream', { ...user.headers, ...headers })
  t.teardown(() => s.close())
  return s
}

await outage(alice, 'before')

t.test('metadata with the unread count first, then a notification event for each new one of this user only', async (t) => {
  const s = await open(t, alice)
  t.equal(s.status, 200)
  t.match(s.headers['content-type'], /^text\/event-stream/)
  const [meta] = await s.until('metadata', (e) => e.length >= 1)
  t.match(meta, { type: 'metadata', retry: 3000, data: { unread_count: 1 } })
  t.ok(Value.Check(UnreadCount, meta.data))

  await outage(bob, 'bobs')
  await outage(alice, 'prod')
  const events = await s.until('the notification', (e) => e.some((x) => x.type === 'notification'))
  const n = events.find((x) => x.type === 'notification')!
  t.ok(Value.Check(Notification, n.data), 'in its documented shape')
  t.match(n.data, { type: 'cluster_status', title: 'Cluster prod is unreachable', message: 'prod refused', link: '/v1/api/clusters/prod', read: false })
  const listed = (await app.inject({ url: '/v1/api/notifications?limit=1', headers: alice.headers })).json().notifications[0]
  t.same(n.data, listed, 'the event is the notification as the list returns it')
  t.notOk(s.events.some((x) => x.type === 'notification' && x.data.title.includes('bobs')), 'another user\'s notification is not on this stream')

  await app.inject({ method: 'POST', url: '/v1/api/notifications/read-all', headers: alice.headers })
  const counted = await s.until('a fresh count', (e) => e.some((x, i) => i > 0 && x.type === 'metadata'))
  t.same(counted.filter((x) => x.type === 'metadata').at(-1)!.data, { unread_count: 0 })
})

t.test('a client reconnecting with Last-Event-ID gets the notifications it missed, after a fresh metadata', async (t) => {
  const first = await open(t, alice)
  const [meta] = await first.until('metadata', (e) => e.length >= 1)
  first.close()
  await first.ended
  await outage(alice, 'missed-1')
  await outage(alice, 'missed-2')
  const again = await open(t, alice, { 'last-event-id': String(meta.id) })
  const events = await again.until('both missed ones', (e) => e.filter((x) => x.type === 'notification').length >= 2)
  t.equal(events[0].type, 'metadata')
  t.same(events[0].data, { unread_count: 2 })
  t.same(events.filter((x) => x.type === 'notification').map((x) => x.data.title), ['Cluster missed-1 is unreachable', 'Cluster missed-2 is unreachable'])
})

t.test('the stream counts against MAX_STREAMS_PER_USER: one more is 429 with {error}', async (t) => {
  const held = [await open(t, bob), await open(t, bob), await open(t, bob)]
  for (const s of held) await s.until('metadata', (e) => e.length >= 1)
  const refused = await open(t, bob)
  t.equal(refused.status, 429)
  t.same(Object.keys(refused.body), ['error'])
  held[0].close()
  await held[0].ended
  await waitFor('the slot given back', () => app.userLimits.held('streams', bob.user.id) === 2 || null, 5_000, 5)
  const reopened = await open(t, bob)
  t.equal(reopened.status, 200, 'a slot freed by a closed stream can be used again')
})
