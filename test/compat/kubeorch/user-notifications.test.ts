// The UI's /user-notifications* on the adapter (CONTRACT.md §2.13, §4, §8 row 2), against the app and the
// simulator: the exact query strings the top bar and the notifications page send, every field they read
// (a 200 without `notifications[]` crashes every page), and the stream read over real HTTP with the UI's
// own parsing rules: a notification produced by a real failed run arrives as `new_notification` in the
// UI's shape, and `: ping` keeps the stream open.
import t, { type Test } from 'tap'
import { runFixture, node } from '../../runs/fixture.ts'
import { registerUser, type TestUser } from '../../helpers/auth.ts'
import { listen } from '../../streams/sse-client.ts'
import { waitFor } from '../../kube-sim/test-helpers.ts'
import { openUiStream, type UiEvent } from './ui-stream.ts'
import type { BusEvents } from '../../../src/events/bus.ts'
import { NOTIFICATION_TYPES } from '../../../schemas/notifications.ts'
import { toUiNotification, uiLink } from '../../../src/compat/kubeorch/routes/user-notifications.ts'
import { nextBusEvent } from '../../helpers/bus.ts'

const UI_TYPES = ['workflow_deployed', 'workflow_failed', 'build_completed', 'build_failed', 'resource_warning', 'system']
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/
const PREFIX = '/kubeorch/v1/api'

const HEARTBEAT_MS = 100
const f = await runFixture(t, { RUN_READY_TIMEOUT_MS: 30_000, SSE_HEARTBEAT_MS: HEARTBEAT_MS }, { timing: { podStartMs: 200, podReadyMs: 200, crashBackoffMs: 500 } })
t.setTimeout(90_000)
const { app, owner } = f
const base = await listen(app)
const other = await registerUser(app)

async function ui(user: TestUser, method: 'GET' | 'PATCH' | 'POST', url: string) {
  const res = await app.inject({ method, url: `${PREFIX}${url}`, headers: user.headers })
  return { status: res.statusCode, body: res.body ? res.json() : undefined }
}

const next = <E extends keyof BusEvents>(event: E, what: string, pred: (e: BusEvents[E]) => boolean, ms?: number) => nextBusEvent(app, event, what, pred, ms)

/** The UI's reader (CONTRACT.md §4) on the notification stream; its payloads are JSON. */
const openUiNotifications = (user: TestUser) => openUiStream(`${base}${PREFIX}/user-notifications/stream`, user.token)
const parsed = (events: UiEvent[]) => events.map((e) => ({ type: e.type, data: JSON.parse(e.data) }))

function assertUiNotification(t: Test, n: Record<string, unknown>) {
  t.type(n.id, 'string')
  t.ok(UI_TYPES.includes(n.type as string), `type ${String(n.type)} is in the UI's set`)
  t.type(n.title, 'string')
  t.type(n.message, 'string')
  t.type(n.read, 'boolean')
  t.match(n.createdAt, ISO)
  if (n.link !== undefined) t.match(n.link, /^\/dashboard\//, 'link is a page of the UI')
}

t.test('a new user: the top bar\'s list is a 200 with an empty notifications array, total and unreadCount', async (t) => {
  const res = await ui(other, 'GET', '/user-notifications?limit=5&offset=0')
  t.equal(res.status, 200)
  t.same(res.body.notifications, [], 'an array, never missing')
  t.equal(res.body.total, 0)
  t.equal(res.body.unreadCount, 0)
  t.same((await ui(other, 'GET', '/user-notifications/unread-count')).body, { unreadCount: 0, unread_count: 0 })
})

t.test('the stream stays open on : ping heartbeats and carries a real failed run as new_notification', async (t) => {
  const stream = await openUiNotifications(owner)
  t.teardown(() => stream.close())
  t.equal(stream.status, 200)
  t.match(stream.headers.get('content-type'), /^text\/event-stream/)
  await waitFor('two heartbeats', () => (stream.raw().split(': ping\n\n').length > 2 ? true : null), 5_000, 5)
  t.notOk(stream.ended, 'still open after its heartbeats')
  t.notOk(stream.raw().includes('\r'), 'LF only')
  t.same(stream.events, [], 'nothing the UI would take for an event (our unread-count snapshot is left out)')

  const wf = await f.workflow({ nodes: [node('n-bad', 'deployment', { name: 'bad', namespace: 'loop', image: 'example/app-crashloop:1', port: 8080, replicas: 1 })], edges: [] }, 'loop')
  const failed = next('notification.created', 'run_failed', (e) => e.owner_id === owner.user.id && e.type === 'run_failed')
  const run = await app.inject({ method: 'POST', url: `/v1/api/workflows/${wf}/run`, headers: owner.headers, payload: {} })
  t.ok(run.statusCode === 200 || run.statusCode === 202, `run started (${run.statusCode})`)
  await failed

  const events = parsed(await stream.until('the failed run', (e) => parsed(e).some((x) => x.data.type === 'workflow_failed')))
  const n = events.find((x) => x.data.type === 'workflow_failed')!
  t.equal(n.type, 'new_notification', 'the only event name the UI handles')
  assertUiNotification(t, n.data)
  t.match(n.data, { title: 'Run of loop failed', read: false, link: `/dashboard/workflow/${wf}` })
  t.match(n.data.message, /Deployment bad/, 'with the run\'s error')
  t.ok(events.every((x) => x.type === 'new_notification'), 'every event is new_notification')

  const listed = (await ui(owner, 'GET', '/user-notifications?limit=50&offset=0')).body.notifications
  t.same(listed.find((x: { id: string }) => x.id === n.data.id), n.data, 'the event is the notification as the list shows it')
})

t.test('the lists the UI sends: limit/offset paging, every field it reads, unreadCount', async (t) => {
  await app.services.notifications.idle()
  const all = await ui(owner, 'GET', '/user-notifications?limit=50&offset=0')
  t.equal(all.status, 200)
  const { notifications, total, unreadCount } = all.body
  t.ok(total >= 2, 'the run and its failed Deployment at least')
  t.equal(notifications.length, Math.min(total, 50))
  for (const n of notifications) assertUiNotification(t, n)
  const canonical = (await app.inject({ url: '/v1/api/notifications?limit=100', headers: owner.headers })).json()
  t.equal(total, canonical.total)
  t.equal(unreadCount, canonical.unread_count)
  t.same(notifications.map((n: { id: string }) => n.id), canonical.notifications.map((n: { id: string }) => n.id), 'same notifications, newest first')
  const warning = notifications.find((n: { type: string }) => n.type === 'resource_warning')
  t.match(warning, { title: 'Deployment bad in loop failed', link: /^\/dashboard\/resources\/[0-9a-f]{24}$/ }, 'a failed resource is a warning pointing at its page')

  const page1 = (await ui(owner, 'GET', '/user-notifications?limit=1&offset=0')).body
  const page2 = (await ui(owner, 'GET', '/user-notifications?limit=1&offset=1')).body
  t.equal(page1.notifications.length, 1)
  t.equal(page2.notifications[0].id, notifications[1].id, 'offset=1 is the second one')
  t.equal(page1.total, total)
})

t.test('marking one read, then all: PATCH /:id/read and POST /mark-all-read', async (t) => {
  const before = (await ui(owner, 'GET', '/user-notifications?limit=5&offset=0')).body
  const target = before.notifications.find((n: { read: boolean }) => !n.read)
  const marked = await ui(owner, 'PATCH', `/user-notifications/${target.id}/read`)
  t.equal(marked.status, 200)
  t.match(marked.body, { id: target.id, read: true })
  t.equal((await ui(owner, 'GET', '/user-notifications/unread-count')).body.unreadCount, before.unreadCount - 1)

  const all = await ui(owner, 'POST', '/user-notifications/mark-all-read')
  t.equal(all.status, 200)
  t.equal(all.body.unreadCount, 0)
  const after = (await ui(owner, 'GET', '/user-notifications?limit=5&offset=0')).body
  t.equal(after.unreadCount, 0)
  t.ok(after.notifications.every((n: { read: boolean }) => n.read))
})

t.test('refusals: another user\'s notification is 404, bad paging is 400, both with error and message', async (t) => {
  const mine = (await ui(owner, 'GET', '/user-notifications?limit=1&offset=0')).body.notifications[0]
  for (const [url, status] of [
    [`/user-notifications/${mine.id}/read`, 404], // not theirs
    ['/user-notifications/not-an-id/read', 404],
    [`/user-notifications/${'a'.repeat(65)}/read`, 400],
  ] as const) {
    const res = await ui(other, 'PATCH', url)
    t.equal(res.status, status, url)
    t.type(res.body.error, 'string')
    t.equal(res.body.message, res.body.error)
  }
  t.equal((await ui(owner, 'GET', '/user-notifications?limit=1&offset=0')).body.notifications[0].id, mine.id, 'still there')
  for (const query of ['limit=0&offset=0', 'limit=5&offset=-5', 'limit=500&offset=0', 'limit=5&offset=0&color=red']) {
    const res = await ui(owner, 'GET', `/user-notifications?${query}`)
    t.equal(res.status, 400, query)
    t.equal(res.body.message, res.body.error)
  }
  const anonymous = await app.inject({ url: `${PREFIX}/user-notifications/stream` })
  t.equal(anonymous.statusCode, 401, 'the stream needs the token (the UI retries every 3 s)')
})

t.test('every notification type maps into the UI\'s set; API links become UI pages or are left out', async (t) => {
  for (const type of NOTIFICATION_TYPES) {
    const n = toUiNotification({ id: 'x', type, title: 't', message: 'm', link: '/v1/api/clusters/sim', read: false, created_at: new Date(0).toISOString() })
    t.ok(UI_TYPES.includes(n.type), `${type} → ${n.type}`)
  }
  t.equal(uiLink('/v1/api/workflows/w1/runs/r1'), '/dashboard/workflow/w1')
  t.equal(uiLink('/v1/api/builds/b1'), '/dashboard/build/b1')
  t.equal(uiLink('/v1/api/resources/r1'), '/dashboard/resources/r1')
  t.equal(uiLink('/v1/api/clusters/sim'), '/dashboard/clusters')
  t.equal(uiLink('/v1/api/import/i1'), undefined, 'an import session has no page: no link')
  const n = toUiNotification({ id: 'x', type: 'import_failed', title: 't', message: 'm', link: '/v1/api/import/i1', read: false, created_at: new Date(0).toISOString() })
  t.notOk('link' in n)
})
