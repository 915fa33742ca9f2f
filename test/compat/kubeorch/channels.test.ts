// The UI's notification channels page on the adapter (CONTRACT.md §2.13; its lib/services/notifications.ts
// and app/dashboard/integrations/notifications/page.tsx), against the real channel service delivering to a
// loopback receiver (allowed by OUTBOUND_ALLOW_CIDRS=127.0.0.0/8): the UI's exact bodies per type, the
// wrappers it reads, the type read back from the URL, the types that are not webhooks refused with a clear
// 400, owner scoping (another user's channel is a 404), the per-user limit, the Test button (2xx only when
// delivered), a real failure notification delivered to a channel made here, and no secret in any reply.
import t from 'tap'
import { startTestApp } from '../../helpers/app.ts'
import { registerUser, type TestUser } from '../../helpers/auth.ts'
import { startReceiver } from '../../notifications/channels-receiver.ts'
import { ALERT_TYPES } from '../../../src/compat/kubeorch/routes/alerts.ts'

const PREFIX = '/kubeorch/v1/api'
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/
const MAX = 4
const { app } = await startTestApp(t, {
  ALLOW_INSECURE_CLUSTERS: true, OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8',
  WEBHOOK_RETRY_BASE_MS: 20, WEBHOOK_TIMEOUT_MS: 2000, WEBHOOK_POLL_MS: 600_000, WEBHOOK_CHANNELS_PER_USER: MAX,
})
const receiver = await startReceiver()
t.teardown(() => receiver.close())
const alice = await registerUser(app)
const bob = await registerUser(app)

/** Every reply body seen, to prove no secret is ever in one. */
const replies: string[] = []
async function ui(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object, user: TestUser = alice) {
  const res = await app.inject({ method, url: `${PREFIX}${url}`, headers: user.headers, ...(payload && { payload }) })
  replies.push(res.body)
  return { status: res.statusCode, body: res.body ? res.json() : undefined }
}
const canonical = async (url: string, user: TestUser = alice) => (await app.inject({ url: `/v1/api${url}`, headers: user.headers })).json()

const SLACK = 'https://hooks.slack.com/services/T000/B000/XXXXXXXX'
const DISCORD = 'https://discord.com/api/webhooks/123/abc'
const TEAMS = 'https://contoso.webhook.office.com/webhookb2/abc'

let hookId = ''
let slackId = ''
let teamsId = ''

t.test('a user with no channels: {channels: []}, the shape the page reads', async (t) => {
  t.same((await ui('GET', '/notifications/channels')).body, { channels: [] })
})

t.test('create: the UI\'s body per webhook type → 201 {channel} with type, config, enabled; stored as a webhook for the alert types', async (t) => {
  const hook = await ui('POST', '/notifications/channels', { name: 'ops hook', type: 'webhook', config: { url: `${receiver.base}/hook` } })
  t.equal(hook.status, 201)
  const c = hook.body.channel
  t.match(c, { name: 'ops hook', type: 'webhook', config: { url: `${receiver.base}/hook` }, enabled: true, userId: alice.user.id })
  t.match(c.createdAt, ISO)
  t.match(c.updatedAt, ISO)
  t.notOk('secret' in c, 'the generated secret is not passed on')
  hookId = c.id
  const stored = await canonical(`/notifications/channels/${hookId}`)
  t.match(stored, { id: hookId, name: 'ops hook', url: `${receiver.base}/hook`, enabled: true, has_secret: true, format: 'envelope' })
  t.same([...stored.events].sort(), [...ALERT_TYPES].sort(), 'it receives what the alert pages list')
  t.ok(ALERT_TYPES.includes('run_failed') && !ALERT_TYPES.includes('run_completed' as never))

  const slack = await ui('POST', '/notifications/channels', { name: 'slack', type: 'slack', config: { webhook_url: SLACK } })
  t.equal(slack.status, 201)
  t.match(slack.body.channel, { type: 'slack', config: { webhook_url: SLACK } })
  t.notOk('url' in slack.body.channel.config)
  slackId = slack.body.channel.id
  t.equal((await canonical(`/notifications/channels/${slackId}`)).format, 'slack', 'Slack\'s message shape')
  const discord = await ui('POST', '/notifications/channels', { name: 'discord', type: 'discord', config: { webhook_url: DISCORD }, enabled: false })
  t.match(discord.body.channel, { type: 'discord', config: { webhook_url: DISCORD }, enabled: false })
  const teams = await ui('POST', '/notifications/channels', { name: 'teams', type: 'teams', config: { webhook_url: TEAMS } })
  t.match(teams.body.channel, { type: 'teams', config: { webhook_url: TEAMS } })
  teamsId = teams.body.channel.id

  const list = await ui('GET', '/notifications/channels')
  t.equal(list.status, 200)
  t.same(list.body.channels.map((x: { type: string }) => x.type).sort(), ['discord', 'slack', 'teams', 'webhook'])
  const one = await ui('GET', `/notifications/channels/${slackId}`)
  t.equal(one.status, 200)
  t.match(one.body, { id: slackId, name: 'slack', type: 'slack', config: { webhook_url: SLACK } }, 'GET :id is the bare channel')

  const over = await ui('POST', '/notifications/channels', { name: 'fifth', type: 'webhook', config: { url: `${receiver.base}/5` } })
  t.equal(over.status, 409, 'the per-user limit of the channel service')
  t.match(over.body, { error: /4 notification channels/, message: over.body.error })
  const dup = await ui('DELETE', `/notifications/channels/${discord.body.channel.id}`)
  t.equal(dup.status, 204)
  t.equal((await ui('POST', '/notifications/channels', { name: 'slack', type: 'webhook', config: { url: `${receiver.base}/dup` } })).status, 409, 'a duplicate name')
})

t.test('what is not a webhook here is a clear 400, and nothing is stored', async (t) => {
  const before = (await canonical('/notifications/channels')).total
  for (const [what, body, error] of [
    ['telegram', { name: 'tg', type: 'telegram', config: { bot_token: '123:ABC', chat_id: '-100' } }, /^Telegram bots are not supported/],
    ['pagerduty', { name: 'pd', type: 'pagerduty', config: { routing_key: 'R0'.padEnd(32, 'X') } }, /^PagerDuty routing keys are not supported/],
    ['custom headers', { name: 'h', type: 'webhook', config: { url: `${receiver.base}/h`, headers: { 'X-Token': 'abc' } } }, /custom headers are not supported/],
    ['a slack channel with another URL', { name: 's', type: 'slack', config: { webhook_url: `${receiver.base}/s` } }, /must be a slack webhook URL/],
    ['a discord channel with a Slack URL', { name: 'd', type: 'discord', config: { webhook_url: SLACK } }, /must be a discord webhook URL/],
    ['no URL', { name: 'n', type: 'webhook', config: {} }, /"url"/],
    ['the webhook URL under the wrong key', { name: 'n', type: 'webhook', config: { webhook_url: `${receiver.base}/n` } }, /"url"/],
    ['a refused address', { name: 'm', type: 'webhook', config: { url: 'http://169.254.169.254/latest' } }, /not allowed/],
    ['an unknown type', { name: 'x', type: 'email', config: { url: `${receiver.base}/x` } }, /type/],
    ['an unknown config field', { name: 'x', type: 'webhook', config: { url: `${receiver.base}/x`, token: 'x' } }, /config/],
    ['an empty name', { name: ' ', type: 'webhook', config: { url: `${receiver.base}/x` } }, /name/],
    ['a URL too long', { name: 'x', type: 'webhook', config: { url: `${receiver.base}/${'a'.repeat(3000)}` } }, /url/],
  ] as const) {
    const res = await ui('POST', '/notifications/channels', body)
    t.equal(res.status, 400, what)
    t.match(res.body, { error: error, message: res.body.error }, what)
  }
  t.equal((await canonical('/notifications/channels')).total, before, 'nothing was stored')
})

t.test('update: the edit form\'s whole body → {channel}; the events it receives stay', async (t) => {
  const res = await ui('PUT', `/notifications/channels/${hookId}`, { name: 'ops hook 2', type: 'webhook', config: { url: `${receiver.base}/hook2` } })
  t.equal(res.status, 200)
  t.match(res.body.channel, { id: hookId, name: 'ops hook 2', type: 'webhook', config: { url: `${receiver.base}/hook2` }, enabled: true })
  const stored = await canonical(`/notifications/channels/${hookId}`)
  t.match(stored, { name: 'ops hook 2', url: `${receiver.base}/hook2` })
  t.same([...stored.events].sort(), [...ALERT_TYPES].sort())
  const bad = await ui('PUT', `/notifications/channels/${hookId}`, { name: 'ops hook 2', type: 'telegram', config: { bot_token: 'x', chat_id: '1' } })
  t.equal(bad.status, 400)
  t.equal((await canonical(`/notifications/channels/${hookId}`)).url, `${receiver.base}/hook2`, 'a refused update changed nothing')
})

t.test('another user\'s channel is a 404 on every route, and stays as it was', async (t) => {
  t.same((await ui('GET', '/notifications/channels', undefined, bob)).body, { channels: [] })
  for (const [method, url, body] of [
    ['GET', `/notifications/channels/${hookId}`], ['PUT', `/notifications/channels/${hookId}`, { name: 'mine', type: 'webhook', config: { url: `${receiver.base}/bob` } }],
    ['DELETE', `/notifications/channels/${hookId}`], ['POST', `/notifications/channels/${hookId}/test`],
  ] as const) {
    const res = await ui(method, url, body, bob)
    t.equal(res.status, 404, `${method} ${url}`)
    t.match(res.body, { error: 'channel not found', message: 'channel not found' })
  }
  t.equal((await ui('GET', '/notifications/channels/not-an-id')).status, 404, 'a malformed id')
  t.match(await canonical(`/notifications/channels/${hookId}`), { name: 'ops hook 2', url: `${receiver.base}/hook2` })
  t.equal(receiver.received.length, 0, 'bob\'s test sent nothing')
})

t.test('the Test button: 200 once the receiver took the signed test; a receiver that refuses it is a 502 saying so', async (t) => {
  receiver.script(200)
  const ok = await ui('POST', `/notifications/channels/${hookId}/test`)
  t.equal(ok.status, 200)
  t.match(ok.body, { status: 'delivered' })
  const got = await receiver.request(0)
  t.equal(got.path, '/hook2')
  t.equal(JSON.parse(got.body).notification.type, 'test')
  t.match(got.headers['x-signature-256'], /^sha256=[0-9a-f]{64}$/, 'signed as the channel service signs')

  receiver.script(404)
  const refused = await ui('POST', `/notifications/channels/${hookId}/test`)
  t.equal(refused.status, 502)
  t.match(refused.body, { error: /^the test notification was not delivered: .*404/, message: refused.body.error })
  await receiver.request(1)
  const deliveries = await canonical(`/notifications/channels/${hookId}/deliveries`)
  t.same(deliveries.deliveries.map((d: { status: string }) => d.status), ['failed', 'delivered'], 'both recorded by the channel service')
})

t.test('delete → 204, then the channel is gone (the Slack and Teams ones, outside loopback, before the delivery test)', async (t) => {
  const res = await ui('DELETE', `/notifications/channels/${slackId}`)
  t.equal(res.status, 204)
  t.equal((await ui('GET', `/notifications/channels/${slackId}`)).status, 404)
  t.equal((await ui('DELETE', `/notifications/channels/${slackId}`)).status, 404)
  t.equal((await ui('DELETE', `/notifications/channels/${teamsId}`)).status, 204)
  t.same((await ui('GET', '/notifications/channels')).body.channels.map((c: { id: string }) => c.id), [hookId])
})

t.test('a failure notification reaches a channel made here; a success does not', async (t) => {
  const next = receiver.received.length
  app.bus.emit('build.changed', { owner_id: alice.user.id, build_id: 'b-ok', status: 'completed' })
  app.bus.emit('cluster.status', { owner_id: alice.user.id, cluster_id: 'c1', name: 'edge', from: 'connected', to: 'error', message: 'connect ECONNREFUSED' })
  await app.services.notifications.idle()
  await app.services.notificationChannels.idle()
  const got = await receiver.request(next)
  const body = JSON.parse(got.body)
  t.match(body.notification, { type: 'cluster_status', title: 'Cluster edge is unreachable' })
  t.equal(receiver.received.length, next + 1, 'only the failure was sent')
  const types = (await canonical(`/notifications/channels/${hookId}/deliveries`)).deliveries.map((d: { type: string }) => d.type)
  t.same(types, ['cluster_status', 'test', 'test'], 'no delivery for the success')
})

t.test('signed in only; no reply ever carried a secret', async (t) => {
  t.equal((await app.inject({ url: `${PREFIX}/notifications/channels` })).statusCode, 401)
  t.equal((await app.inject({ method: 'POST', url: `${PREFIX}/notifications/channels`, payload: { name: 'x', type: 'webhook', config: { url: `${receiver.base}/x` } } })).statusCode, 401)
  for (const body of replies) t.notOk(/"secret"/.test(body), 'no secret field')
})
