// Notification channels on the real app, delivering to a loopback receiver (node:http on 127.0.0.1, allowed
// by OUTBOUND_ALLOW_CIDRS=127.0.0.0/8): CRUD with owner scoping and validation; the write-only secret
// (generated and shown once, never in any reply or log line); signed deliveries of notifications the real
// NotificationService makes from bus events; retries (500 then 200 → delivered after 2; three 500s →
// failed after exactly 3; a timeout retried), a 4xx failing at once, redirects followed and a redirect to a
// refused address failed without retry; the event filter and disabled channels; the test endpoint.
import t from 'tap'
import { Value } from 'typebox/value'
import { startTestApp } from '../helpers/app.ts'
import { registerUser, type TestUser } from '../helpers/auth.ts'
import { startReceiver } from './channels-receiver.ts'
import { verifySignature } from '../../src/services/notifications/channels/signing.ts'
import type { Delivery } from '../../src/repositories/notification-deliveries.ts'
import { ChannelList, DeliveryList, NotificationChannel, NotificationChannelWithSecret, NotificationDelivery } from '../../schemas/notifications.ts'

const TIMEOUT_MS = 600
const { app, logs } = await startTestApp(t, {
  ALLOW_INSECURE_CLUSTERS: true, OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8',
  // Retries come from the worker's own timers; the poll is pushed out of the way so it cannot mask them.
  WEBHOOK_RETRY_BASE_MS: 20, WEBHOOK_TIMEOUT_MS: TIMEOUT_MS, WEBHOOK_POLL_MS: 600_000, WEBHOOK_CHANNELS_PER_USER: 4,
})
const receiver = await startReceiver()
t.teardown(() => receiver.close())
const service = app.services.notificationChannels
const alice = await registerUser(app)
const bob = await registerUser(app)

/** Every reply body seen, to prove no secret is ever in one. */
const replies: string[] = []
async function call(user: TestUser | null, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) {
  const res = await app.inject({ method, url, ...(user && { headers: user.headers }), ...(payload !== undefined && { payload: payload as object }) })
  replies.push(res.body)
  return { status: res.statusCode, body: res.body ? res.json() : null }
}

/** The next recorded attempt of a delivery matching `match` (set up before the act that causes it). */
function attempt(match: (d: Delivery) => boolean): Promise<Delivery> {
  return new Promise((resolve) => {
    const listener = (d: Delivery) => { if (match(d)) { service.attempts.off('attempt', listener); resolve(d) } }
    service.attempts.on('attempt', listener)
  })
}
const finished = (channelId: string) => (d: Delivery) => d.channel_id === channelId && d.status !== 'pending'

let outage = 0
/** A notification made by the real NotificationService from a bus event (a cluster health check's). */
function clusterOutage(user: TestUser) {
  const i = outage++
  app.bus.emit('cluster.status', { owner_id: user.user.id, cluster_id: `c${i}`, name: `cluster-${i}`, from: 'connected', to: 'error', message: `outage ${i}` })
  return `outage ${i}`
}

async function createChannel(user: TestUser, body: Record<string, unknown>) {
  const res = await call(user, 'POST', '/v1/api/notifications/channels', { events: [], ...body })
  if (res.status !== 201) throw new Error(`create: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body as { id: string; secret?: string }
}

const secrets: string[] = []

t.test('create, read, list, update, delete; the generated secret is shown once', async (t) => {
  const created = await call(alice, 'POST', '/v1/api/notifications/channels', { name: 'ops', url: `${receiver.base}/ops`, events: ['run_failed', 'cluster_status'] })
  t.equal(created.status, 201)
  t.ok(Value.Check(NotificationChannelWithSecret, created.body), 'the reply has its documented shape')
  t.match(created.body, { name: 'ops', url: `${receiver.base}/ops`, events: ['run_failed', 'cluster_status'], enabled: true, has_secret: true, format: 'envelope' })
  t.match(created.body.secret, /^whsec_[A-Za-z0-9_-]{43}$/, 'a generated secret, returned in the create reply')
  secrets.push(created.body.secret)
  const id = created.body.id

  const got = await call(alice, 'GET', `/v1/api/notifications/channels/${id}`)
  t.equal(got.status, 200)
  t.ok(Value.Check(NotificationChannel, got.body))
  t.notOk('secret' in got.body, 'never again after create')
  const { secret: _s, ...shown } = created.body
  t.same(got.body, shown)

  const given = 'a-secret-the-user-chose-0123456789'
  secrets.push(given)
  const withSecret = await call(alice, 'POST', '/v1/api/notifications/channels', { name: 'Second', url: `${receiver.base}/second`, events: [], secret: given, enabled: false })
  t.equal(withSecret.status, 201)
  t.notOk('secret' in withSecret.body, 'a secret the user gave is not echoed')
  t.match(withSecret.body, { enabled: false, has_secret: true, events: [] })

  const list = await call(alice, 'GET', '/v1/api/notifications/channels?sort=name&order=asc')
  t.equal(list.status, 200)
  t.ok(Value.Check(ChannelList, list.body))
  t.same(list.body.channels.map((c: { name: string }) => c.name), ['ops', 'Second'])
  t.match(list.body, { total: 2, page: 1, limit: 20 })

  const updated = await call(alice, 'PUT', `/v1/api/notifications/channels/${withSecret.body.id}`, { name: 'second', enabled: true, events: ['build_failed'] })
  t.equal(updated.status, 200)
  t.match(updated.body, { name: 'second', enabled: true, events: ['build_failed'], url: `${receiver.base}/second` })
  t.notOk('secret' in updated.body)
  t.ok(Date.parse(updated.body.updated_at) >= Date.parse(updated.body.created_at))

  const rotated = await call(alice, 'PUT', `/v1/api/notifications/channels/${withSecret.body.id}`, { rotate_secret: true })
  t.equal(rotated.status, 200)
  t.match(rotated.body.secret, /^whsec_/, 'a rotated secret is shown in that reply')
  secrets.push(rotated.body.secret)

  t.equal((await call(alice, 'POST', '/v1/api/notifications/channels', { name: 'OPS', url: `${receiver.base}/x`, events: [] })).status, 409, 'names are unique per user, case-insensitively')
  t.equal((await call(bob, 'POST', '/v1/api/notifications/channels', { name: 'ops', url: `${receiver.base}/x`, events: [] })).status, 201, 'another user may use the same name')

  const deleted = await call(alice, 'DELETE', `/v1/api/notifications/channels/${withSecret.body.id}`)
  t.equal(deleted.status, 204)
  t.equal((await call(alice, 'GET', `/v1/api/notifications/channels/${withSecret.body.id}`)).status, 404)
  t.equal((await call(alice, 'DELETE', `/v1/api/notifications/channels/${withSecret.body.id}`)).status, 404)
  await call(alice, 'DELETE', `/v1/api/notifications/channels/${id}`)
})

t.test('another user\'s channel is 404 everywhere, as a malformed id; no token is 401', async (t) => {
  const bobs = await createChannel(bob, { name: 'bob-only', url: `${receiver.base}/bob` })
  for (const [method, url, payload] of [
    ['GET', `/v1/api/notifications/channels/${bobs.id}`],
    ['PUT', `/v1/api/notifications/channels/${bobs.id}`, { name: 'mine now' }],
    ['DELETE', `/v1/api/notifications/channels/${bobs.id}`],
    ['POST', `/v1/api/notifications/channels/${bobs.id}/test`],
    ['GET', `/v1/api/notifications/channels/${bobs.id}/deliveries`],
    ['GET', '/v1/api/notifications/channels/not-an-id'],
  ] as const) {
    const res = await call(alice, method, url, payload)
    t.equal(res.status, 404, `${method} ${url}`)
    t.same(res.body, { error: 'channel not found' })
  }
  t.equal(receiver.received.filter((r) => r.path === '/bob').length, 0, 'nothing was sent to bob\'s receiver')
  t.match((await call(bob, 'GET', `/v1/api/notifications/channels/${bobs.id}`)).body, { name: 'bob-only' }, 'bob\'s channel is unchanged')
  t.equal((await call(null, 'GET', '/v1/api/notifications/channels')).status, 401)
  t.equal((await call(null, 'POST', '/v1/api/notifications/channels', { name: 'x', url: `${receiver.base}/x`, events: [] })).status, 401)
})

t.test('bad bodies are 400 with {error}, and nothing is stored', async (t) => {
  const before = (await call(alice, 'GET', '/v1/api/notifications/channels')).body.total
  const good = { name: 'n', url: `${receiver.base}/n`, events: [] }
  const cases: Array<[string, unknown, RegExp]> = [
    ['no url', { name: 'n', events: [] }, /url/],
    ['no events', { name: 'n', url: good.url }, /events/],
    ['an unknown event type', { ...good, events: ['everything'] }, /events/],
    ['a repeated event type', { ...good, events: ['run_failed', 'run_failed'] }, /events/],
    ['a blank name', { ...good, name: '   ' }, /name/],
    ['an unknown field', { ...good, owner_id: bob.user.id }, /owner_id|additional/],
    ['a short secret', { ...good, secret: 'short' }, /secret/],
    ['a secret with spaces', { ...good, secret: 'has spaces in it, 12345678' }, /secret/],
    ['an ftp url', { ...good, url: 'ftp://127.0.0.1/x' }, /url must use https or http/],
    ['not a url', { ...good, url: 'hooks' }, /url must be an absolute URL/],
    ['credentials in the url', { ...good, url: 'http://user:pw@127.0.0.1/x' }, /url must not carry credentials/],
    ['a metadata address', { ...good, url: 'http://169.254.169.254/latest' }, /not allowed \(cloud metadata\)/],
    ['an address outside OUTBOUND_ALLOW_CIDRS', { ...good, url: 'http://10.1.2.3/hook' }, /outside OUTBOUND_ALLOW_CIDRS/],
    ['a url too long', { ...good, url: `${receiver.base}/${'a'.repeat(2100)}` }, /url/],
  ]
  for (const [what, body, message] of cases) {
    const res = await call(alice, 'POST', '/v1/api/notifications/channels', body)
    t.equal(res.status, 400, what)
    t.match(res.body, { error: message }, what)
    t.same(Object.keys(res.body), ['error'], `${what}: exactly {error}`)
  }
  const ch = await createChannel(alice, { name: 'to-update', url: `${receiver.base}/u` })
  for (const [what, body] of [['an empty body', {}], ['a bad url', { url: 'http://169.254.169.254/' }], ['secret and rotate_secret', { secret: 'x'.repeat(20), rotate_secret: true }]] as const) {
    const res = await call(alice, 'PUT', `/v1/api/notifications/channels/${ch.id}`, body)
    t.equal(res.status, 400, what)
  }
  t.match((await call(alice, 'GET', `/v1/api/notifications/channels/${ch.id}`)).body, { url: `${receiver.base}/u` }, 'a refused update changed nothing')
  t.equal((await call(alice, 'GET', '/v1/api/notifications/channels')).body.total, before + 1, 'only the good channel was stored')
  await call(alice, 'DELETE', `/v1/api/notifications/channels/${ch.id}`)
})

t.test('a user has at most WEBHOOK_CHANNELS_PER_USER channels', async (t) => {
  const carol = await registerUser(app)
  for (let i = 0; i < 4; i++) await createChannel(carol, { name: `c${i}`, url: `${receiver.base}/c${i}` })
  const fifth = await call(carol, 'POST', '/v1/api/notifications/channels', { name: 'c4', url: `${receiver.base}/c4`, events: [] })
  t.equal(fifth.status, 409)
  t.match(fifth.body.error, /4 notification channels/)
  t.equal((await call(carol, 'GET', '/v1/api/notifications/channels')).body.total, 4)
})

t.test('a notification from the bus is delivered, signed with the channel secret; another type is not', async (t) => {
  const ch = await createChannel(alice, { name: 'signed', url: `${receiver.base}/signed?k=1`, events: ['cluster_status'] })
  const other = await createChannel(alice, { name: 'runs only', url: `${receiver.base}/runs-only`, events: ['run_failed'] })
  const disabled = await createChannel(alice, { name: 'off', url: `${receiver.base}/off`, enabled: false })
  secrets.push(ch.secret!, other.secret!, disabled.secret!)
  const index = receiver.received.length
  const done = attempt(finished(ch.id))
  const message = clusterOutage(alice)
  const got = await receiver.request(index)
  const delivery = await done
  await service.idle()

  t.equal(got.method, 'POST')
  t.equal(got.path, '/signed?k=1')
  t.equal(got.headers['content-type'], 'application/json')
  t.match(got.headers['user-agent'], /^cluster-workflow-orchestrator-webhooks\//)
  t.equal(got.headers['x-delivery-id'], delivery.id)
  t.ok(verifySignature(ch.secret!, got.body, got.headers['x-signature-256'] as string), 'X-Signature-256 is the HMAC-SHA256 of the raw body with the channel secret')
  t.notOk(verifySignature(other.secret!, got.body, got.headers['x-signature-256'] as string), 'and not with another secret')
  t.notOk(verifySignature(ch.secret!, got.body + ' ', got.headers['x-signature-256'] as string), 'and not of another body')
  const body = JSON.parse(got.body)
  t.same(Object.keys(body).sort(), ['id', 'notification', 'sent_at', 'type'])
  t.match(body, { id: delivery.id, type: 'cluster_status', notification: { type: 'cluster_status', title: /is unreachable/, message, link: /^\/v1\/api\/clusters\// } })
  t.equal(body.notification.url, `http://localhost:3000${body.notification.link}`, 'an absolute link from PUBLIC_URL')
  t.ok(Number.isFinite(Date.parse(body.sent_at)))

  t.equal(delivery.status, 'delivered')
  t.equal(delivery.attempts.length, 1)
  t.match(delivery.attempts[0], { status_code: 200, error: null, redirects: 0 })
  t.equal(receiver.received.length, index + 1, 'only the cluster_status channel received it (not the run_failed one, not the disabled one)')

  const list = await call(alice, 'GET', `/v1/api/notifications/channels/${ch.id}/deliveries`)
  t.equal(list.status, 200)
  t.ok(Value.Check(DeliveryList, list.body), 'the deliveries list has its documented shape')
  t.equal(list.body.total, 1)
  t.match(list.body.deliveries[0], { id: delivery.id, status: 'delivered', test: false, type: 'cluster_status', next_attempt_at: null, notification: { message } })
  t.notMatch(JSON.stringify(list.body), /body text the sender must never record/, 'the receiver\'s answer body is not recorded')
  t.same((await call(alice, 'GET', `/v1/api/notifications/channels/${other.id}/deliveries`)).body.deliveries, [])
  t.same((await call(alice, 'GET', `/v1/api/notifications/channels/${disabled.id}/deliveries`)).body.deliveries, [])
  for (const c of [ch, other, disabled]) await call(alice, 'DELETE', `/v1/api/notifications/channels/${c.id}`)
})

t.test('a drift notification (drift.detected on the bus) names the workflow and node and reaches a channel', async (t) => {
  const ch = await createChannel(alice, { name: 'drift', url: `${receiver.base}/drift`, events: ['drift_detected'] })
  const wf = await call(alice, 'POST', '/v1/api/workflows', { name: 'shop' })
  t.equal(wf.status, 201)
  const index = receiver.received.length
  const done = attempt(finished(ch.id))
  app.bus.emit('drift.detected', { owner_id: alice.user.id, workflow_id: wf.body.id, node_id: 'n-api', fields: ['spec.replicas', 'a', 'b', 'c', 'd', 'e'] })
  const got = await receiver.request(index)
  t.equal((await done).status, 'delivered')
  t.match(JSON.parse(got.body).notification, {
    type: 'drift_detected', title: 'Node n-api of workflow shop drifted', message: 'changed in the cluster: spec.replicas, a, b, c, d and 1 more',
    link: `/v1/api/workflows/${wf.body.id}/drift`,
  })
  const listed = await call(alice, 'GET', '/v1/api/notifications?limit=1')
  t.match(listed.body.notifications[0], { type: 'drift_detected', link: `/v1/api/workflows/${wf.body.id}/drift` }, 'the notification itself is listed, with the new type')
  await call(alice, 'DELETE', `/v1/api/notifications/channels/${ch.id}`)
})

t.test('a 500 then a 200: delivered after 2 attempts', async (t) => {
  const ch = await createChannel(alice, { name: 'flaky', url: `${receiver.base}/flaky` })
  receiver.script(500)
  const index = receiver.received.length
  const done = attempt((d) => finished(ch.id)(d))
  clusterOutage(alice)
  const d = await done
  t.equal(d.status, 'delivered')
  t.equal(d.attempts.length, 2)
  t.match(d.attempts, [{ status_code: 500, error: 'the receiver answered 500' }, { status_code: 200, error: null }])
  t.ok(Date.parse(d.attempts[1].at) - Date.parse(d.attempts[0].at) >= 20, 'the retry waited WEBHOOK_RETRY_BASE_MS')
  const [first, second] = [await receiver.request(index), await receiver.request(index + 1)]
  t.equal(first.headers['x-delivery-id'], second.headers['x-delivery-id'], 'the same delivery id on the retry')
  t.equal(JSON.parse(first.body).id, JSON.parse(second.body).id)
  t.ok(verifySignature(ch.secret!, second.body, second.headers['x-signature-256'] as string), 'the retry is signed too')
  await call(alice, 'DELETE', `/v1/api/notifications/channels/${ch.id}`)
})

t.test('three 500s: failed after exactly 3 attempts, no 4th; backoff doubles', async (t) => {
  const ch = await createChannel(alice, { name: 'down', url: `${receiver.base}/down` })
  receiver.script(500, 503, 429)
  const index = receiver.received.length
  const done = attempt(finished(ch.id))
  clusterOutage(alice)
  const d = await done
  await service.idle()
  t.equal(d.status, 'failed')
  t.same(d.attempts.map((a) => a.status_code), [500, 503, 429])
  t.equal(d.next_attempt_at, null)
  t.ok(Date.parse(d.attempts[2].at) - Date.parse(d.attempts[1].at) >= 40, 'the third try waited twice the base')
  // A 4th would be due now if any were scheduled: a poke and an idle worker show none is.
  ;(service as unknown as { worker: { poke(): void } }).worker.poke()
  await service.idle()
  t.equal(receiver.received.length - index, 3, 'exactly 3 requests reached the receiver')
  const listed = (await call(alice, 'GET', `/v1/api/notifications/channels/${ch.id}/deliveries?status=failed`)).body
  t.equal(listed.total, 1)
  t.same(listed.deliveries[0].attempts.length, 3)
  await call(alice, 'DELETE', `/v1/api/notifications/channels/${ch.id}`)
})

t.test('another 4xx fails at once, without a retry', async (t) => {
  const ch = await createChannel(alice, { name: 'gone', url: `${receiver.base}/gone` })
  receiver.script(410)
  const index = receiver.received.length
  const done = attempt(finished(ch.id))
  clusterOutage(alice)
  const d = await done
  await service.idle()
  t.equal(d.status, 'failed')
  t.match(d.attempts, [{ status_code: 410, error: 'the receiver answered 410' }])
  t.equal(receiver.received.length - index, 1)
  await call(alice, 'DELETE', `/v1/api/notifications/channels/${ch.id}`)
})

t.test('a receiver that does not answer in WEBHOOK_TIMEOUT_MS is retried', async (t) => {
  const ch = await createChannel(alice, { name: 'slow', url: `${receiver.base}/slow` })
  receiver.script('hang')
  const done = attempt(finished(ch.id))
  clusterOutage(alice)
  const d = await done
  t.equal(d.status, 'delivered')
  t.match(d.attempts, [{ status_code: null, error: `timed out after ${TIMEOUT_MS} ms` }, { status_code: 200 }])
  t.ok(d.attempts[0].duration_ms >= TIMEOUT_MS - 5 && d.attempts[0].duration_ms < TIMEOUT_MS + 1000, `the first attempt ended at the timeout (${d.attempts[0].duration_ms} ms)`)
  await call(alice, 'DELETE', `/v1/api/notifications/channels/${ch.id}`)
})

t.test('a closed port is a connection error, retried, then failed after 3', async (t) => {
  const closed = await startReceiver()
  const url = `${closed.base}/nobody`
  await closed.close()
  const ch = await createChannel(alice, { name: 'nobody', url })
  const done = attempt(finished(ch.id))
  clusterOutage(alice)
  const d = await done
  t.equal(d.status, 'failed')
  t.same(d.attempts.map((a) => a.error), Array(3).fill('cannot reach the receiver: connection refused'))
  await call(alice, 'DELETE', `/v1/api/notifications/channels/${ch.id}`)
})

t.test('redirects: followed (the same signed POST) up to 3; to a refused address, failed without retry', async (t) => {
  const ch = await createChannel(alice, { name: 'moved', url: `${receiver.base}/old` })
  receiver.script({ status: 307, headers: { location: '/new' } }, { status: 301, headers: { location: `${receiver.base}/newer` } })
  let index = receiver.received.length
  let done = attempt(finished(ch.id))
  const test = await call(alice, 'POST', `/v1/api/notifications/channels/${ch.id}/test`)
  t.equal(test.status, 200)
  t.match(test.body, { status: 'delivered', test: true, type: 'test', attempts: [{ status_code: 200, redirects: 2 }] })
  await done
  const hops = receiver.received.slice(index)
  t.same(hops.map((r) => `${r.method} ${r.path}`), ['POST /old', 'POST /new', 'POST /newer'])
  t.ok(hops.every((r) => r.body === hops[0].body && verifySignature(ch.secret!, r.body, r.headers['x-signature-256'] as string)), 'every hop got the same signed body')

  for (const [what, location, error] of [
    ['cloud metadata', 'http://169.254.169.254/latest/meta-data/', 'redirect 1 refused: the address is not allowed by the outbound policy'],
    ['outside OUTBOUND_ALLOW_CIDRS', 'http://10.9.8.7:8080/internal', 'redirect 1 refused: the address is not allowed by the outbound policy'],
    ['credentials in the URL', `http://user:pw@127.0.0.1:1/`, 'redirect 1 refused: webhook URL must not carry credentials in the URL'],
  ] as const) {
    receiver.script({ status: 302, headers: { location } })
    index = receiver.received.length
    done = attempt(finished(ch.id))
    clusterOutage(alice)
    const d = await done
    await service.idle()
    t.equal(d.status, 'failed', what)
    t.same(d.attempts.map((a) => ({ status_code: a.status_code, error: a.error, redirects: a.redirects })), [{ status_code: 302, error, redirects: 1 }], `${what}: one attempt, not retried`)
    t.equal(receiver.received.length - index, 1, `${what}: nothing but the first hop was sent`)
  }

  receiver.script(...Array(4).fill({ status: 302, headers: { location: '/loop' } }))
  done = attempt(finished(ch.id))
  clusterOutage(alice)
  t.match((await done).attempts, [{ status_code: 302, error: 'more than 3 redirects', redirects: 3 }], 'a 4th redirect is not followed')
  await call(alice, 'DELETE', `/v1/api/notifications/channels/${ch.id}`)
})

t.test('POST .../test answers the record after the first attempt; a failing receiver is a 200 with its outcome', async (t) => {
  const ch = await createChannel(alice, { name: 'tested', url: `${receiver.base}/tested`, enabled: false })
  const index = receiver.received.length
  const ok = await call(alice, 'POST', `/v1/api/notifications/channels/${ch.id}/test`)
  t.equal(ok.status, 200)
  t.ok(Value.Check(NotificationDelivery, ok.body), 'the reply has its documented shape')
  t.match(ok.body, { channel_id: ch.id, status: 'delivered', test: true, type: 'test', notification: { type: 'test', title: 'Test of channel tested' }, attempts: [{ status_code: 200 }] })
  const got = await receiver.request(index)
  t.ok(verifySignature(ch.secret!, got.body, got.headers['x-signature-256'] as string))
  t.equal(JSON.parse(got.body).type, 'test')

  receiver.script(400)
  const bad = await call(alice, 'POST', `/v1/api/notifications/channels/${ch.id}/test`)
  t.equal(bad.status, 200)
  t.match(bad.body, { status: 'failed', attempts: [{ status_code: 400, error: 'the receiver answered 400' }] })

  receiver.script(502)
  const retried = attempt((d) => d.channel_id === ch.id && d.status !== 'pending')
  const pending = await call(alice, 'POST', `/v1/api/notifications/channels/${ch.id}/test`)
  t.match(pending.body, { status: 'pending', attempts: [{ status_code: 502 }] })
  t.ok(pending.body.next_attempt_at, 'a pending record says when it is tried again')
  t.match(await retried, { id: pending.body.id, status: 'delivered' }, 'and the retry follows in the background')
  const all = (await call(alice, 'GET', `/v1/api/notifications/channels/${ch.id}/deliveries?limit=2`)).body
  t.match(all, { total: 3, limit: 2 })
  t.equal(all.deliveries[0].id, pending.body.id, 'newest first')
  await call(alice, 'DELETE', `/v1/api/notifications/channels/${ch.id}`)
})

t.test('deleting a channel removes its deliveries', async (t) => {
  const ch = await createChannel(alice, { name: 'short-lived', url: `${receiver.base}/short` })
  await call(alice, 'POST', `/v1/api/notifications/channels/${ch.id}/test`)
  t.equal((await call(alice, 'DELETE', `/v1/api/notifications/channels/${ch.id}`)).status, 204)
  t.equal(await app.db.collection('notification_deliveries').countDocuments({ channel_id: ch.id }), 0)
})

t.test('a secret that no longer opens fails the delivery at once (not retried at every claim expiry)', async (t) => {
  const ch = await createChannel(alice, { name: 'unopenable', url: `${receiver.base}/unopenable` })
  // Sealed for another record: what a value sealed by a key the server no longer has looks like to it.
  await app.db.collection('notification_channels').updateOne({ _id: ch.id as never }, { $set: { secret_sealed: app.sealer.seal('whatever-secret-value', 'notification_channels:another') } })
  const index = receiver.received.length
  const res = await call(alice, 'POST', `/v1/api/notifications/channels/${ch.id}/test`)
  t.equal(res.status, 200)
  t.match(res.body, { status: 'failed', attempts: [{ status_code: null, error: /secret cannot be opened/ }] })
  t.equal(receiver.received.length, index, 'nothing was sent unsigned')
  await call(alice, 'DELETE', `/v1/api/notifications/channels/${ch.id}`)
})

t.test('delivery records expire WEBHOOK_DELIVERY_RETENTION_DAYS after they are made (TTL index)', async (t) => {
  const ch = await createChannel(alice, { name: 'retained', url: `${receiver.base}/retained` })
  const d = (await call(alice, 'POST', `/v1/api/notifications/channels/${ch.id}/test`)).body
  const doc = await app.db.collection('notification_deliveries').findOne({ _id: d.id as never })
  t.equal(doc!.expires_at.getTime() - doc!.created_at.getTime(), 14 * 86_400_000, 'the default: 14 days')
  const indexes = await app.db.collection('notification_deliveries').indexes()
  t.match(indexes.find((i) => i.name === 'expires_at_ttl'), { key: { expires_at: 1 }, expireAfterSeconds: 0 })
  await call(alice, 'DELETE', `/v1/api/notifications/channels/${ch.id}`)
})

// Last: every reply and log line of the file so far.
t.test('the secret is sealed at rest, and no secret is in any reply or log line', async (t) => {
  const ch = await createChannel(alice, { name: 'at-rest', url: `${receiver.base}/rest` })
  secrets.push(ch.secret!)
  const doc = await app.db.collection('notification_channels').findOne({ _id: ch.id as never })
  t.match(doc?.secret_sealed, /^sealed:v1:/)
  t.notOk(JSON.stringify(doc).includes(ch.secret!), 'the stored document does not hold the secret in clear')
  await service.idle()
  t.ok(secrets.length >= 6)
  const replyText = replies.join('\n')
  const logText = logs.join('\n')
  t.ok(logText.length > 0, 'the app logged')
  for (const s of secrets) {
    const inCreate = replies.filter((r) => r.includes(s)).length
    t.ok(inCreate <= 1, 'a secret appears in at most the one reply that generated it')
    t.notOk(logText.includes(s), 'no secret in a log line')
  }
  t.notOk(replyText.includes('a-secret-the-user-chose'), 'a secret the user chose is in no reply')
  const deliveries = await app.db.collection('notification_deliveries').find({}).toArray()
  const stored = JSON.stringify(deliveries)
  for (const s of secrets) t.notOk(stored.includes(s), 'no secret in a delivery record')
})
