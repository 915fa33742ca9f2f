// The pieces of a delivery without the network: which chat service a URL is (Slack, Discord, Teams) and
// their message shapes (Slack's escaped mrkdwn), the envelope and its signature, the status classification that decides retries, and
// the secret generator.
import t from 'tap'
import { createHmac } from 'node:crypto'
import { slackMessage, escapeMrkdwn } from '../../src/services/notifications/channels/slack.ts'
import { channelFormat, chatMessage } from '../../src/services/notifications/channels/chat-formats.ts'
import { buildEnvelope, USER_AGENT } from '../../src/services/notifications/channels/envelope.ts'
import { generateSecret, signBody, verifySignature } from '../../src/services/notifications/channels/signing.ts'
import { classifyStatus } from '../../src/services/notifications/channels/webhook-post.ts'

const notification = {
  id: '65a000000000000000000001', type: 'run_failed', title: 'Run of <shop> & co failed', message: 'node api: ImagePullBackOff > 3 tries',
  link: '/v1/api/workflows/w1/runs/r1', created_at: '2026-11-27T10:00:00.000Z',
}

t.test('chat webhooks are recognised by https and their host only', async (t) => {
  const isSlack = (u: string) => channelFormat(u) === 'slack'
  t.ok(isSlack('https://hooks.slack.com/services/T000/B000/XXXX'))
  t.ok(isSlack('https://HOOKS.SLACK.COM/services/T000/B000/XXXX'), 'host case does not matter')
  t.notOk(isSlack('http://hooks.slack.com/services/T000/B000/XXXX'), 'not over plain http')
  t.notOk(isSlack('https://hooks.slack.com.evil.example/services/x'), 'not a look-alike host')
  t.notOk(isSlack('https://evil.example/hooks.slack.com'), 'not a path naming it')
  t.notOk(isSlack('https://slack.com/api/chat.postMessage'))
  t.equal(channelFormat('not a url'), 'envelope')
  t.equal(channelFormat('https://discord.com/api/webhooks/1/x'), 'discord')
  t.equal(channelFormat('https://canary.discordapp.com/api/webhooks/1/x'), 'discord')
  t.equal(channelFormat('https://discord.com.evil.example/api/webhooks/1/x'), 'envelope', 'not a look-alike Discord host')
  t.equal(channelFormat('https://contoso.webhook.office.com/webhookb2/x'), 'teams')
  t.equal(channelFormat('https://prod-1.westeurope.logic.azure.com/workflows/x'), 'teams')
  t.equal(channelFormat('https://webhook.office.com.evil.example/x'), 'envelope', 'not a look-alike Teams host')
  t.equal(channelFormat('https://receiver.example/hook'), 'envelope')
})

t.test('Discord and Teams messages: the shapes their webhooks accept, with the link', async (t) => {
  const link = 'https://orch.example/v1/api/workflows/w1/runs/r1'
  t.same(chatMessage('discord', notification, link), { content: `**${notification.title}**\n${notification.message}\n${link}`, allowed_mentions: { parse: [] } })
  const long = chatMessage('discord', { ...notification, message: 'x'.repeat(5000) }, link) as { content: string }
  t.equal(long.content.length, 2000, 'Discord\'s 2,000-character limit kept')
  t.same(chatMessage('teams', notification, link), { text: `${notification.title}: ${notification.message}\n\n${link}` })
})

t.test('the Slack message: text and blocks, user text escaped, an absolute link', async (t) => {
  const m = slackMessage(notification, 'https://orch.example/v1/api/workflows/w1/runs/r1')
  t.equal(m.text, 'Run of &lt;shop&gt; &amp; co failed: node api: ImagePullBackOff &gt; 3 tries')
  t.same(m.blocks[0], { type: 'section', text: { type: 'mrkdwn', text: '*Run of &lt;shop&gt; &amp; co failed*\nnode api: ImagePullBackOff &gt; 3 tries' } })
  t.same(m.blocks[1], { type: 'context', elements: [{ type: 'mrkdwn', text: 'run_failed · <https://orch.example/v1/api/workflows/w1/runs/r1|/v1/api/workflows/w1/runs/r1>' }] })
  t.equal(escapeMrkdwn('a<b>&c'), 'a&lt;b&gt;&amp;c')
})

t.test('the envelope: Slack shape for a Slack URL, the JSON envelope otherwise; signed over the exact body', async (t) => {
  const now = new Date('2026-11-27T10:00:05.000Z')
  const secret = 'whsec_test_secret_0123456789'
  const generic = buildEnvelope({ deliveryId: 'd1', url: 'https://receiver.example/hook', secret, notification, publicUrl: 'https://orch.example/', now })
  t.same(JSON.parse(generic.body), { id: 'd1', type: 'run_failed', notification: { ...notification, url: 'https://orch.example/v1/api/workflows/w1/runs/r1' }, sent_at: '2026-11-27T10:00:05.000Z' })
  t.same(generic.headers, {
    'content-type': 'application/json', 'user-agent': USER_AGENT, 'x-delivery-id': 'd1',
    'x-signature-256': `sha256=${createHmac('sha256', secret).update(generic.body).digest('hex')}`,
  })
  const slack = buildEnvelope({ deliveryId: 'd1', url: 'https://hooks.slack.com/services/T/B/X', secret, notification, publicUrl: 'https://orch.example', now })
  const body = JSON.parse(slack.body)
  t.same(Object.keys(body).sort(), ['blocks', 'text'], 'Slack gets only its own shape')
  t.ok(verifySignature(secret, slack.body, slack.headers['x-signature-256']), 'signed all the same')
  const discord = buildEnvelope({ deliveryId: 'd1', url: 'https://discord.com/api/webhooks/1/x', secret, notification, publicUrl: 'https://orch.example', now })
  t.same(Object.keys(JSON.parse(discord.body)).sort(), ['allowed_mentions', 'content'], 'Discord gets its own shape')
})

t.test('signatures: sha256=<hex>, checked in constant time, wrong secret or body refused', async (t) => {
  const sig = signBody('k'.repeat(20), '{"a":1}')
  t.match(sig, /^sha256=[0-9a-f]{64}$/)
  t.ok(verifySignature('k'.repeat(20), '{"a":1}', sig))
  t.notOk(verifySignature('k'.repeat(21), '{"a":1}', sig))
  t.notOk(verifySignature('k'.repeat(20), '{"a":2}', sig))
  t.notOk(verifySignature('k'.repeat(20), '{"a":1}', undefined))
  t.notOk(verifySignature('k'.repeat(20), '{"a":1}', sig.slice(0, -1)))
})

t.test('generated secrets are 32 random bytes, never repeated', async (t) => {
  const seen = new Set(Array.from({ length: 200 }, generateSecret))
  t.equal(seen.size, 200)
  for (const s of seen) t.match(s, /^whsec_[A-Za-z0-9_-]{43}$/)
})

t.test('which answers are delivered, retried or failed', async (t) => {
  for (const s of [200, 201, 202, 204, 299]) t.equal(classifyStatus(s), 'delivered', String(s))
  for (const s of [429, 500, 502, 503, 504, 599]) t.equal(classifyStatus(s), 'retry', String(s))
  for (const s of [100, 304, 400, 401, 403, 404, 410, 413, 422, 600]) t.equal(classifyStatus(s), 'failed', String(s))
})
