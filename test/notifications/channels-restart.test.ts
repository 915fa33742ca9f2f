// Webhook deliveries live in the database, not in a process: a delivery in flight when its app stops is
// given back and sent by the next app on the same database; a record a dead replica claimed is taken again
// once its claim expires, and not before; a pending retry left by a stopped app is sent by the next one;
// two replicas' workers on one database send each delivery once.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { startTestApp } from '../helpers/app.ts'
import { startTestDatabase } from '../helpers/database.ts'
import { registerUser, type TestUser } from '../helpers/auth.ts'
import { startReceiver } from './channels-receiver.ts'
import { verifySignature } from '../../src/services/notifications/channels/signing.ts'
import { NotificationDeliveryRepository } from '../../src/repositories/notification-deliveries.ts'
import { NotificationChannelRepository } from '../../src/repositories/notification-channels.ts'
import { NotificationChannelService } from '../../src/services/notifications/channels/index.ts'
import { EventBus } from '../../src/events/bus.ts'

const database = await startTestDatabase()
t.teardown(() => database.close())
const receiver = await startReceiver()
t.teardown(() => receiver.close())
const shared = {
  JWT_SECRET: randomBytes(32).toString('hex'), ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  ALLOW_INSECURE_CLUSTERS: true, OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8', WEBHOOK_RETRY_BASE_MS: 20,
}

let user: TestUser
let channel: { id: string; secret: string }
let inFlightId = ''

t.test('first life: the app stops while a delivery is in flight; the record is given back, pending', async (t) => {
  // A long timeout: the attempt is still waiting for the receiver when the app closes.
  const { app } = await startTestApp(t, { ...shared, WEBHOOK_TIMEOUT_MS: 30_000, WEBHOOK_POLL_MS: 600_000 }, { database })
  user = await registerUser(app)
  const res = await app.inject({ method: 'POST', url: '/v1/api/notifications/channels', headers: user.headers, payload: { name: 'survivor', url: `${receiver.base}/hook`, events: [] } })
  t.equal(res.statusCode, 201)
  channel = res.json()
  receiver.script('hang')
  app.bus.emit('cluster.status', { owner_id: user.user.id, cluster_id: 'c1', name: 'prod', from: 'connected', to: 'error', message: 'unreachable' })
  const first = await receiver.request(0)
  inFlightId = first.headers['x-delivery-id'] as string
  const started = Date.now()
  await app.close()
  t.ok(Date.now() - started < 10_000, 'closing did not wait for the receiver')
  const doc = await database.db.collection('notification_deliveries').findOne({ _id: inFlightId as never })
  t.match(doc, { status: 'pending', attempts: [], claim_token: null, claim_until: null }, 'given back unclaimed, no attempt counted')
})

t.test('second life: the next app on the same database sends it, and takes a dead replica\'s claim only once expired', async (t) => {
  const { app } = await startTestApp(t, { ...shared, WEBHOOK_TIMEOUT_MS: 2000, WEBHOOK_POLL_MS: 50 }, { database })
  const service = app.services.notificationChannels
  const resent = await receiver.request(1)
  t.equal(resent.headers['x-delivery-id'], inFlightId, 'the record given back is sent as soon as the new app serves')
  t.ok(verifySignature(channel.secret, resent.body, resent.headers['x-signature-256'] as string), 'signed with the secret the first app sealed')

  const repo = new NotificationDeliveryRepository(app.db, 86_400_000)
  const notification = { id: 'n1', type: 'run_failed', title: 'Run of shop failed', message: 'boom', link: '/v1/api/workflows/w/runs/r', created_at: new Date().toISOString() }
  // What a replica that died mid-attempt leaves: a record claimed until a moment from now.
  const claimedUntil = Date.now() + 1000
  const dead = await repo.enqueueClaimed({ owner_id: user.user.id, channel_id: channel.id, type: 'run_failed', test: false, notification }, claimedUntil - Date.now())
  // And a retry a stopped replica had scheduled (one failed attempt on record, due now).
  const retry = await repo.enqueueClaimed({ owner_id: user.user.id, channel_id: channel.id, type: 'run_failed', test: false, notification: { ...notification, id: 'n2' } }, 60_000)
  await repo.record(retry, { attempt: { at: new Date(), status_code: 503, error: 'the receiver answered 503', duration_ms: 3, redirects: 0 }, status: 'pending', next_at: new Date() })

  const second = await receiver.request(2)
  t.equal(second.headers['x-delivery-id'], retry.doc._id, 'the pending retry is picked up by the poll')
  const third = await receiver.request(3)
  t.equal(third.headers['x-delivery-id'], dead.doc._id, 'the dead replica\'s record is sent too')
  t.ok(Date.now() >= claimedUntil, 'but not before its claim expired')
  await service.idle()

  const list = await app.inject({ method: 'GET', url: `/v1/api/notifications/channels/${channel.id}/deliveries?limit=10&order=asc`, headers: user.headers })
  const byId = new Map(list.json().deliveries.map((d: { id: string }) => [d.id, d]))
  t.match(byId.get(inFlightId), { status: 'delivered', attempts: [{ status_code: 200 }] })
  t.match(byId.get(retry.doc._id), { status: 'delivered', attempts: [{ status_code: 503 }, { status_code: 200 }] }, 'the retry counts the earlier attempt')
  t.match(byId.get(dead.doc._id), { status: 'delivered', attempts: [{ status_code: 200 }] })
  t.equal(receiver.received.length, 4, 'each was sent once by this app')
})

t.test('two replicas\' workers on one database send each delivery exactly once', async (t) => {
  const { app } = await startTestApp(t, { ...shared, WEBHOOK_TIMEOUT_MS: 2000, WEBHOOK_POLL_MS: 20 }, { database })
  // A second replica's channel service: its own worker and bus, the same database, sealer and policy.
  const other = new NotificationChannelService({
    channels: new NotificationChannelRepository(app.db), deliveries: new NotificationDeliveryRepository(app.db, 86_400_000),
    notification: async () => null, bus: new EventBus(), sealer: app.sealer, policy: app.outboundPolicy, log: { error: () => undefined },
    config: { timeoutMs: 2000, retryBaseMs: 20, maxChannels: 20, pollMs: 20, publicUrl: 'http://localhost:3000' },
  })
  t.teardown(() => other.close())
  const workedBy = { first: 0, second: 0 }
  app.services.notificationChannels.attempts.on('attempt', () => { workedBy.first++ })
  other.attempts.on('attempt', () => { workedBy.second++ })
  other.start()
  const repo = new NotificationDeliveryRepository(app.db, 86_400_000)
  const index = receiver.received.length
  const n = 40
  const docs = await repo.enqueue(Array.from({ length: n }, (_, i) => ({
    owner_id: user.user.id, channel_id: channel.id, type: 'run_completed', test: false,
    notification: { id: `n${i}`, type: 'run_completed', title: `Run ${i} completed`, message: 'ok', link: '/v1/api/workflows/w/runs/r', created_at: new Date().toISOString() },
  })))
  await receiver.request(index + n - 1)
  await Promise.all([app.services.notificationChannels.idle(), other.idle()])
  const ids = receiver.received.slice(index).map((r) => r.headers['x-delivery-id'])
  t.equal(ids.length, n, `${n} requests, no more (first replica ${workedBy.first}, second ${workedBy.second})`)
  t.same(new Set(ids), new Set(docs.map((d) => d._id)), 'each delivery once')
  t.equal(workedBy.first + workedBy.second, n, 'each recorded by one replica')
  t.equal(await app.db.collection('notification_deliveries').countDocuments({ _id: { $in: docs.map((d) => d._id) as never[] }, status: 'delivered' }), n)
})
