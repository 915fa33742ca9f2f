// The notification routes on the real app: notifications made from bus events (cluster status changes, as
// a health check announces them) are listed newest first and paginated, filtered by `unread=true`, counted,
// marked read one by one or all at once; another user's id is 404, as is a malformed one (ids cannot be probed), no token 401; the
// replies have their documented shapes and errors are exactly `{error}`. The TTL index keeps them 30 days.
import t from 'tap'
import { Value } from 'typebox/value'
import { startTestApp } from '../helpers/app.ts'
import { registerUser, type TestUser } from '../helpers/auth.ts'
import { NotificationList, UnreadCount, ReadAllResult, Notification } from '../../schemas/notifications.ts'

const { app } = await startTestApp(t)
const alice = await registerUser(app)
const bob = await registerUser(app)

async function call(user: TestUser | null, method: 'GET' | 'POST', url: string) {
  const res = await app.inject({ method, url, ...(user && { headers: user.headers }) })
  return { status: res.statusCode, body: res.json() }
}

/** n cluster outages for `user`, announced on the app's bus as the health check does; waits until stored. */
async function outages(user: TestUser, n: number, from = 0) {
  for (let i = from; i < from + n; i++) {
    app.bus.emit('cluster.status', { owner_id: user.user.id, cluster_id: `c${i}`, name: `cluster-${i}`, from: 'connected', to: 'error', message: `outage ${i}` })
  }
  await app.services.notifications.idle()
}

await outages(alice, 25)
await outages(bob, 1, 100)

t.test('the list: newest first, paginated, with the unread count; each item in its documented shape', async (t) => {
  const first = await call(alice, 'GET', '/v1/api/notifications?limit=10')
  t.equal(first.status, 200)
  t.ok(Value.Check(NotificationList, first.body), 'the reply has its documented shape')
  t.match(first.body, { total: 25, page: 1, limit: 10, unread_count: 25 })
  t.equal(first.body.notifications.length, 10)
  t.same(first.body.notifications[0], { ...first.body.notifications[0], type: 'cluster_status', title: 'Cluster cluster-24 is unreachable', message: 'outage 24', link: '/v1/api/clusters/cluster-24', read: false })
  const third = await call(alice, 'GET', '/v1/api/notifications?limit=10&page=3')
  t.same(third.body.notifications.map((n: { message: string }) => n.message), ['outage 4', 'outage 3', 'outage 2', 'outage 1', 'outage 0'])
  const asc = await call(alice, 'GET', '/v1/api/notifications?limit=2&order=asc')
  t.same(asc.body.notifications.map((n: { message: string }) => n.message), ['outage 0', 'outage 1'])
  const ids = new Set<string>()
  for (let page = 1; page <= 3; page++) for (const n of (await call(alice, 'GET', `/v1/api/notifications?limit=10&page=${page}`)).body.notifications) ids.add(n.id)
  t.equal(ids.size, 25, 'the pages together hold every notification once')
  const search = await call(alice, 'GET', '/v1/api/notifications?search=outage%2012')
  t.same(search.body.notifications.map((n: { message: string }) => n.message), ['outage 12'])
})

t.test('read, the unread filter, the unread count and read-all', async (t) => {
  const list = (await call(alice, 'GET', '/v1/api/notifications?limit=3')).body.notifications
  const read = await call(alice, 'POST', `/v1/api/notifications/${list[1].id}/read`)
  t.equal(read.status, 200)
  t.ok(Value.Check(Notification, read.body))
  t.same(read.body, { ...list[1], read: true })
  t.same((await call(alice, 'POST', `/v1/api/notifications/${list[1].id}/read`)).body, { ...list[1], read: true }, 'marking it again changes nothing')

  const count = await call(alice, 'GET', '/v1/api/notifications/unread-count')
  t.equal(count.status, 200)
  t.ok(Value.Check(UnreadCount, count.body))
  t.same(count.body, { unread_count: 24 })
  const unread = await call(alice, 'GET', '/v1/api/notifications?unread=true&limit=100')
  t.match(unread.body, { total: 24, unread_count: 24 })
  t.notOk(unread.body.notifications.some((n: { id: string }) => n.id === list[1].id), 'the read one is not in the unread list')
  t.ok(unread.body.notifications.every((n: { read: boolean }) => !n.read))
  t.equal((await call(alice, 'GET', '/v1/api/notifications?unread=false')).body.total, 25, 'unread=false lists them all')

  const all = await call(alice, 'POST', '/v1/api/notifications/read-all')
  t.equal(all.status, 200)
  t.ok(Value.Check(ReadAllResult, all.body))
  t.same(all.body, { updated: 24, unread_count: 0 })
  t.same((await call(alice, 'GET', '/v1/api/notifications/unread-count')).body, { unread_count: 0 })
  t.match((await call(alice, 'GET', '/v1/api/notifications?unread=true')).body, { notifications: [], total: 0, unread_count: 0 })
  t.same((await call(bob, 'GET', '/v1/api/notifications/unread-count')).body, { unread_count: 1 }, 'another user\'s are untouched')

  await outages(alice, 1, 25)
  t.same((await call(alice, 'GET', '/v1/api/notifications/unread-count')).body, { unread_count: 1 }, 'a new one is unread')
})

t.test('another user\'s notification is 404 and stays unread; a malformed id 404 too; no token 401', async (t) => {
  const bobs = (await call(bob, 'GET', '/v1/api/notifications')).body.notifications
  t.equal(bobs.length, 1)
  t.same(await call(alice, 'POST', `/v1/api/notifications/${bobs[0].id}/read`), { status: 404, body: { error: 'notification not found' } })
  t.equal((await call(bob, 'GET', '/v1/api/notifications')).body.notifications[0].read, false)
  t.notOk((await call(alice, 'GET', '/v1/api/notifications?limit=100')).body.notifications.some((n: { id: string }) => n.id === bobs[0].id), 'nor is it in the other\'s list')
  t.same(await call(alice, 'POST', '/v1/api/notifications/0123456789abcdef01234567/read'), { status: 404, body: { error: 'notification not found' } })
  // As on every other group: a malformed id is a plain 404, like one that is not yours.
  for (const id of ['not-an-id', '0123456789ABCDEF01234567', '%24where', '0123456789abcdef012345678']) {
    const res = await call(alice, 'POST', `/v1/api/notifications/${id}/read`)
    t.same(res, { status: 404, body: { error: 'notification not found' } }, id)
  }
  t.equal((await call(alice, 'POST', `/v1/api/notifications/${'a'.repeat(65)}/read`)).status, 400, 'an id longer than any id is refused as input')
  for (const [method, url] of [['GET', '/v1/api/notifications'], ['GET', '/v1/api/notifications/unread-count'], ['POST', '/v1/api/notifications/read-all'], ['POST', `/v1/api/notifications/${bobs[0].id}/read`], ['GET', '/v1/api/notifications/stream']] as const) {
    const res = await call(null, method, url)
    t.equal(res.status, 401, `${method} ${url}`)
    t.same(Object.keys(res.body), ['error'])
  }
})

t.test('bad list queries are 400 with {error}', async (t) => {
  for (const q of ['limit=0', 'limit=101', 'page=0', 'sort=title', 'unread=maybe', 'order=up']) {
    const res = await call(alice, 'GET', `/v1/api/notifications?${q}`)
    t.equal(res.status, 400, q)
    t.same(Object.keys(res.body), ['error'], q)
    t.notMatch(JSON.stringify(res.body), /at .*\.ts:\d+/, 'no stack trace')
  }
})

t.test('notifications are kept 30 days: a TTL index on created_at', async (t) => {
  const indexes = await app.db.collection('notifications').indexes()
  const ttl = indexes.find((i) => i.expireAfterSeconds !== undefined)
  t.same(ttl && { key: ttl.key, expireAfterSeconds: ttl.expireAfterSeconds }, { key: { created_at: 1 }, expireAfterSeconds: 30 * 24 * 3600 })
})
