// The UI's alert pages on the adapter (CONTRACT.md §2.13; its lib/services/alerts.ts and
// components/monitoring/*), backed by the caller's failure notifications: a real crash-looping run on the
// simulator (run_failed, resource_failed), and cluster, build and import outcomes announced on the bus as
// their services announce them, all recorded by the real NotificationService. The events list and the
// overview count them by the documented severities; acknowledge and resolve mark the notification read;
// another user's event, or a notification that is no alert, is a 404; rules stay unsupported (501).
import t, { type Test } from 'tap'
import { runFixture, node } from '../../runs/fixture.ts'
import { registerUser, type TestUser } from '../../helpers/auth.ts'
import type { BusEvents } from '../../../src/events/bus.ts'
import { nextBusEvent } from '../../helpers/bus.ts'

const PREFIX = '/kubeorch/v1/api'
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/

const f = await runFixture(t, { RUN_READY_TIMEOUT_MS: 30_000 }, { timing: { podStartMs: 100, podReadyMs: 100, crashBackoffMs: 300 } })
t.setTimeout(60_000)
const { app, owner } = f
const stranger = await registerUser(app)

async function ui(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: object, user: TestUser = owner) {
  const res = await app.inject({ method, url: `${PREFIX}${url}`, headers: user.headers, ...(payload && { payload }) })
  return { status: res.statusCode, body: res.body ? res.json() : undefined }
}
const next = <E extends keyof BusEvents>(event: E, what: string, pred: (e: BusEvents[E]) => boolean, ms?: number) => nextBusEvent(app, event, what, pred, ms)
const notified = (user: TestUser, type: string) => next('notification.created', type, (e) => e.owner_id === user.user.id && e.type === type)

// The owner's notifications: a real failed run (run_failed + resource_failed), then the bus announcements.
const wf = await f.workflow({ nodes: [node('n-bad', 'deployment', { name: 'bad', namespace: 'loop', image: 'example/app-crashloop:1', port: 8080, replicas: 1 })], edges: [] }, 'loop')
const failures = Promise.all([notified(owner, 'run_failed'), notified(owner, 'resource_failed')])
const run = await app.inject({ method: 'POST', url: `/v1/api/workflows/${wf}/run`, headers: owner.headers, payload: {} })
if (run.statusCode !== 200 && run.statusCode !== 202) throw new Error(`run: ${run.statusCode} ${run.body}`)
await failures
const me = owner.user.id
app.bus.emit('cluster.status', { owner_id: me, cluster_id: 'c1', name: 'edge', from: 'connected', to: 'error', message: 'connect ECONNREFUSED' })
app.bus.emit('cluster.status', { owner_id: me, cluster_id: 'c2', name: 'core', from: 'error', to: 'connected', message: 'reachable' })
app.bus.emit('build.changed', { owner_id: me, build_id: 'b1', status: 'failed' })
app.bus.emit('build.changed', { owner_id: me, build_id: 'b2', status: 'completed' })
app.bus.emit('import.finished', { owner_id: me, import_id: 'i1', status: 'failed', error: 'compose file: services missing' })
app.bus.emit('import.finished', { owner_id: me, import_id: 'i2', status: 'completed', error: null })
await app.services.notifications.idle()

// What the notification service recorded, as /v1/api lists it: the ground truth the adapter translates.
type N = { id: string; type: string; title: string; message: string; link: string; read: boolean; created_at: string }
const canonical = async (): Promise<N[]> => (await app.inject({ url: '/v1/api/notifications?limit=100', headers: owner.headers })).json().notifications
const recorded = await canonical()
const ALERT_TYPES = ['run_failed', 'resource_failed', 'cluster_status', 'build_failed', 'import_failed', 'drift_detected']
const alerts = recorded.filter((n) => ALERT_TYPES.includes(n.type) && !/reachable again$/.test(n.title))
const EXPECTED: Record<string, [string, string]> = {
  resource_failed: ['critical', 'resource'], cluster_status: ['critical', 'cluster'],
  run_failed: ['warning', 'workflow'], build_failed: ['warning', 'workflow'], import_failed: ['warning', 'workflow'],
}

function assertEvent(t: Test, e: Record<string, unknown>) {
  for (const k of ['id', 'ruleId', 'userId', 'ruleName', 'message']) t.type(e[k], 'string', k)
  t.ok(['firing', 'resolved', 'acknowledged'].includes(e.status as string), `status ${String(e.status)}`)
  t.ok(['critical', 'warning', 'info'].includes(e.severity as string), `severity ${String(e.severity)}`)
  t.ok(['cluster', 'workflow', 'resource'].includes(e.ruleType as string), `ruleType ${String(e.ruleType)}`)
  t.match(e.firedAt, ISO)
}

t.test('a user with no failures: the overview is zero and the events list an empty array', async (t) => {
  t.same((await ui('GET', '/alerts/overview', undefined, stranger)).body, { activeAlerts: 0, totalRules: 0, enabledRules: 0, severityBreakdown: { critical: 0, warning: 0, info: 0 } })
  t.same((await ui('GET', '/alerts/events?limit=10', undefined, stranger)).body, { events: [], total: 0, page: 1, limit: 10 })
})

t.test('GET /alerts/events: the failures among the caller\'s notifications, in the UI\'s AlertEvent shape, newest first', async (t) => {
  t.same(alerts.map((n) => n.type).sort(), ['build_failed', 'cluster_status', 'import_failed', 'resource_failed', 'run_failed'], 'five failures; successes and the cluster\'s recovery are not alerts')
  t.equal(recorded.length, 8, 'beside four notifications that are not alerts')
  const res = await ui('GET', '/alerts/events?limit=10')
  t.equal(res.status, 200)
  t.match(res.body, { total: 5, page: 1, limit: 10 })
  t.same(res.body.events.map((e: { id: string }) => e.id), alerts.map((n) => n.id), 'the same notifications, in the same (newest first) order')
  for (const e of res.body.events) {
    assertEvent(t, e)
    const n = alerts.find((x) => x.id === e.id)!
    t.match(e, { ruleId: n.type, userId: me, status: 'firing', severity: EXPECTED[n.type][0], ruleType: EXPECTED[n.type][1], ruleName: n.title, message: n.message, firedAt: n.created_at }, n.type)
  }
  const byType = (type: string) => res.body.events.find((e: { ruleId: string }) => e.ruleId === type)
  t.match(byType('run_failed'), { workflowId: wf, ruleName: 'Run of loop failed', details: { notificationType: 'run_failed', link: `/dashboard/workflow/${wf}` } })
  t.match(byType('run_failed').message, /Deployment bad/, 'the run\'s own error')
  t.match(byType('resource_failed'), { ruleName: 'Deployment bad in loop failed', message: /CrashLoopBackOff/, details: { link: /^\/dashboard\/resources\/[0-9a-f]{24}$/ } })
  t.match(byType('cluster_status'), { clusterName: 'edge', ruleName: 'Cluster edge is unreachable', message: 'connect ECONNREFUSED', details: { link: '/dashboard/clusters' } })
  t.notOk('link' in byType('import_failed').details, 'an import has no page of the UI')

  t.same((await ui('GET', '/alerts/events', undefined, stranger)).body.events, [], 'owner-scoped')
})

t.test('the history page\'s filters and paging', async (t) => {
  const ids = async (query: string) => (await ui('GET', `/alerts/events?${query}`)).body.events.map((e: { ruleId: string }) => e.ruleId).sort()
  t.same(await ids('severity=critical'), ['cluster_status', 'resource_failed'])
  t.same(await ids('severity=warning'), ['build_failed', 'import_failed', 'run_failed'])
  t.same(await ids('severity=info'), [], 'nothing is info')
  t.same(await ids('type=cluster'), ['cluster_status'])
  t.same(await ids('type=resource'), ['resource_failed'])
  t.same(await ids('type=workflow&severity=warning'), ['build_failed', 'import_failed', 'run_failed'])
  t.same(await ids('type=workflow&severity=critical'), [], 'no critical workflow alert')
  t.same(await ids('status=firing'), await ids(''), 'all unread: all firing')
  t.same(await ids('status=resolved'), [])
  t.same(await ids('status=acknowledged'), [], 'no third state is kept')
  t.same(await ids('severity=&status=&type=&page=1&limit=20'), await ids(''), 'the "all" filters, sent empty')
  const p1 = (await ui('GET', '/alerts/events?page=1&limit=2')).body
  const p3 = (await ui('GET', '/alerts/events?page=3&limit=2')).body
  t.match(p1, { total: 5, page: 1, limit: 2 })
  t.equal(p1.events.length, 2)
  t.same(p3.events.map((e: { id: string }) => e.id), [alerts[4].id], 'the last page holds the oldest')
  for (const query of ['severity=urgent', 'status=open', 'type=pod', 'limit=0', 'limit=1000', 'page=0', 'color=red']) {
    const bad = await ui('GET', `/alerts/events?${query}`)
    t.equal(bad.status, 400, query)
    t.equal(bad.body.message, bad.body.error, 'the adapter\'s error shape')
  }
})

t.test('GET /alerts/overview: the unread failures by severity; no rules', async (t) => {
  t.same((await ui('GET', '/alerts/overview')).body, { activeAlerts: 5, totalRules: 0, enabledRules: 0, severityBreakdown: { critical: 2, warning: 3, info: 0 } })
})

t.test('acknowledge and resolve mark the notification read: resolved, no longer active; another user\'s is a 404', async (t) => {
  const runFailed = alerts.find((n) => n.type === 'run_failed')!
  const clusterDown = alerts.find((n) => n.type === 'cluster_status')!

  const theirs = await ui('PATCH', `/alerts/events/${runFailed.id}/acknowledge`, undefined, stranger)
  t.equal(theirs.status, 404, 'another user\'s event')
  t.match(theirs.body, { error: 'alert event not found', message: 'alert event not found' })
  t.equal((await ui('PATCH', `/alerts/events/${runFailed.id}/resolve`, undefined, stranger)).status, 404)
  const notAlert = recorded.find((n) => n.type === 'build_completed')!
  t.equal((await ui('PATCH', `/alerts/events/${notAlert.id}/acknowledge`)).status, 404, 'a notification that is no alert')
  t.equal((await ui('PATCH', '/alerts/events/not-an-id/resolve')).status, 404, 'a malformed id')
  t.ok((await canonical()).every((n) => !n.read), 'none of those marked anything read')

  const ack = await ui('PATCH', `/alerts/events/${runFailed.id}/acknowledge`)
  t.equal(ack.status, 200)
  t.match(ack.body, { id: runFailed.id, status: 'resolved', severity: 'warning' })
  t.equal((await canonical()).find((n) => n.id === runFailed.id)!.read, true, 'the notification is read')
  t.equal((await ui('PATCH', `/alerts/events/${clusterDown.id}/resolve`)).status, 200)
  t.equal((await canonical()).find((n) => n.id === clusterDown.id)!.read, true)

  t.same((await ui('GET', '/alerts/overview')).body.severityBreakdown, { critical: 1, warning: 2, info: 0 })
  t.equal((await ui('GET', '/alerts/overview')).body.activeAlerts, 3)
  const resolved = (await ui('GET', '/alerts/events?status=resolved')).body
  t.same(resolved.events.map((e: { id: string }) => e.id).sort(), [runFailed.id, clusterDown.id].sort())
  t.ok(resolved.events.every((e: { status: string }) => e.status === 'resolved'))
  t.equal((await ui('GET', '/alerts/events?status=firing')).body.total, 3)
  t.equal((await app.inject({ url: '/v1/api/notifications/unread-count', headers: owner.headers })).json().unread_count, (await canonical()).filter((n) => !n.read).length, 'the same unread count as the top bar reads')

  t.same((await ui('GET', '/alerts/overview', undefined, stranger)).body.activeAlerts, 0, 'the stranger still has none')
})

t.test('rules, templates and the test fire: empty on read, a clear 501 on write, nothing stored', async (t) => {
  t.same((await ui('GET', '/alerts/rules')).body, { rules: [] })
  t.same((await ui('GET', '/alerts/rules?type=&severity=&enabled=')).body, { rules: [] })
  t.same((await ui('GET', '/alerts/templates')).body, { templates: [] })
  const missing = await ui('GET', '/alerts/rules/abc')
  t.equal(missing.status, 404)
  t.equal(missing.body.message, missing.body.error)
  t.equal((await ui('GET', '/alerts/rules?severity=urgent')).status, 400)
  const rule = { name: 'cpu', type: 'cluster', severity: 'warning', conditions: [{ metric: 'cpu_percentage', operator: 'gt', value: 80, duration: 300 }] }
  for (const [method, url, body] of [
    ['POST', '/alerts/rules', rule], ['PUT', '/alerts/rules/r1', rule], ['DELETE', '/alerts/rules/r1'], ['PATCH', '/alerts/rules/r1/toggle', { enabled: true }],
    ['POST', '/alerts/templates/t1/enable', {}], ['POST', '/alerts/test-fire', {}],
  ] as const) {
    const res = await ui(method, url, body)
    t.equal(res.status, 501, `${method} ${url}`)
    t.match(res.body, { error: /^alert rules are not supported/, message: res.body.error })
  }
  t.same((await ui('GET', '/alerts/rules')).body, { rules: [] }, 'nothing was stored')
  t.equal((await ui('GET', '/alerts/events')).body.total, 5, 'the test fire made no event')
})

t.test('signed in only', async (t) => {
  for (const url of ['/alerts/overview', '/alerts/events']) t.equal((await app.inject({ url: `${PREFIX}${url}` })).statusCode, 401, url)
  t.equal((await app.inject({ method: 'PATCH', url: `${PREFIX}/alerts/events/${alerts[0].id}/acknowledge` })).statusCode, 401)
})
