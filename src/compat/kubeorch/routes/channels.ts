// The UI's notification channels page (CONTRACT.md §2.13; its app/dashboard/integrations/notifications and
// lib/services/notifications.ts) on the channel service of API.md §12 (src/services/notifications/channels/):
// translation only, the service's owner scoping (another user's channel is a 404), limits, URL policy and
// write-only secret.
//
// The UI's channel is `{name, type, config, enabled}`; ours is a webhook `{name, url, events, secret}`:
// - webhook (`config.url`), slack, discord, teams (`config.webhook_url`) are webhook URLs: the channel's URL.
//   A slack, discord or teams channel must have that service's webhook URL, because the type the UI reads
//   back is the one its URL says (we store no type), and so does the message shape its deliveries take
//   (Slack's, Discord's, Teams'; a generic webhook gets the JSON envelope).
// - telegram (bot token + chat id) and pagerduty (routing key) are not webhooks: a 400 says so.
// - webhook's custom `headers` have no counterpart (deliveries are signed instead): a 400 when any is given.
// - A channel made here receives the notifications the alert pages list (the failures, routes/alerts.ts):
//   the page calls them "alert notifications".
// - The secret the service generates is not passed on: the UI has no place for it (a receiver that checks
//   X-Signature-256 gets one with PUT /v1/api/notifications/channels/:id {rotate_secret: true}).
// - The URL is read back in `config` (the edit form fills its field from it): it is the caller's own, and
//   the page shows only its scheme and host.
import { Type, type Static } from 'typebox'
import type { App } from '../../../app-types.ts'
import { StringEnum } from '../../../../schemas/common.ts'
import { MAX_PAGE_SIZE } from '../../../../schemas/pagination.ts'
import { MAX_CHANNEL_URL_LENGTH } from '../../../../schemas/notifications.ts'
import { BadRequest, UpstreamError } from '../../../errors.ts'
import type { Channel } from '../../../services/notifications/channels/index.ts'
import { channelFormat } from '../../../services/notifications/channels/chat-formats.ts'
import { ALERT_TYPES } from './alerts.ts'

export const UI_CHANNEL_TYPES = ['slack', 'discord', 'telegram', 'pagerduty', 'teams', 'webhook'] as const
type UiChannelType = typeof UI_CHANNEL_TYPES[number]
type HookType = 'slack' | 'discord' | 'teams' | 'webhook'

/** What each service's webhook URL looks like, for the error message (the hosts: chat-formats.ts). */
const EXAMPLES: Record<Exclude<HookType, 'webhook'>, string> = {
  slack: 'https://hooks.slack.com/services/...',
  discord: 'https://discord.com/api/webhooks/...',
  teams: 'https://<tenant>.webhook.office.com/webhookb2/...',
}

/** The UI type a channel's URL stands for (ours keeps no type): the message shape its deliveries take. */
export function channelType(url: string): HookType {
  const format = channelFormat(url)
  return format === 'envelope' ? 'webhook' : format
}

/** A channel as the UI reads it (the secret never: the service returns none here). */
export function toUiChannel(ownerId: string, c: Channel) {
  const type = channelType(c.url)
  return {
    id: c.id, userId: ownerId, name: c.name, type, config: type === 'webhook' ? { url: c.url } : { webhook_url: c.url }, enabled: c.enabled,
    events: c.events, createdAt: c.created_at, updatedAt: c.updated_at, created_at: c.created_at, updated_at: c.updated_at,
  }
}

const Url = Type.String({ minLength: 1, maxLength: MAX_CHANNEL_URL_LENGTH })
// What the UI's forms send (lib/types/notification.ts): one set of fields per type, only those filled in.
const Config = Type.Object({
  url: Type.Optional(Url),
  webhook_url: Type.Optional(Url),
  headers: Type.Optional(Type.Record(Type.String({ maxLength: 256 }), Type.String({ maxLength: 4096 }), { maxProperties: 50 })),
  bot_token: Type.Optional(Type.String({ maxLength: 512 })),
  chat_id: Type.Optional(Type.String({ maxLength: 128 })),
  routing_key: Type.Optional(Type.String({ maxLength: 512 })),
}, { additionalProperties: false })
const ChannelBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' }),
  type: StringEnum(UI_CHANNEL_TYPES),
  config: Config,
  enabled: Type.Optional(Type.Boolean()),
}, { additionalProperties: false })
type ChannelBodyT = Static<typeof ChannelBody>
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) })

/** The channel URL the UI's body means, or a 400 saying what cannot be one. */
export function hookUrl(type: UiChannelType, config: ChannelBodyT['config']): string {
  if (type === 'telegram' || type === 'pagerduty') {
    throw new BadRequest(`${type === 'telegram' ? 'Telegram bots' : 'PagerDuty routing keys'} are not supported: this backend delivers notifications to webhook URLs (Generic Webhook, Slack, Discord, Teams)`)
  }
  if (config.headers && Object.keys(config.headers).length) {
    throw new BadRequest('custom headers are not supported: deliveries carry X-Signature-256 (an HMAC of the body) for the receiver to check instead')
  }
  const key = type === 'webhook' ? 'url' : 'webhook_url'
  const url = config[key]
  if (url === undefined) throw new BadRequest(`body/config must have the field "${key}"`)
  if (type !== 'webhook' && channelType(url) !== type) {
    throw new BadRequest(`body/config/webhook_url must be a ${type} webhook URL (${EXAMPLES[type]}); for another receiver choose Generic Webhook`)
  }
  return url
}

export default async function channelRoutes(app: App) {
  const service = app.services.notificationChannels

  // The page lists every channel at once; the per-user limit may exceed one page.
  app.get('/notifications/channels', { schema: { hide: true } }, async (req) => {
    const channels: Channel[] = []
    for (let page = 1; ; page++) {
      const list = await service.list(req.user.id, { page, limit: MAX_PAGE_SIZE })
      channels.push(...list.items)
      if (list.items.length < MAX_PAGE_SIZE || channels.length >= list.total) break
    }
    return { channels: channels.map((c) => toUiChannel(req.user.id, c)) }
  })

  app.get('/notifications/channels/:id', { schema: { hide: true, params: IdParams } }, async (req) => toUiChannel(req.user.id, await service.get(req.user.id, req.params.id)))

  app.post('/notifications/channels', { schema: { hide: true, body: ChannelBody } }, async (req, reply) => {
    const { name, type, config, enabled } = req.body
    const { secret: _shownOnceNotHere, ...channel } = await service.create(req.user.id, { name, url: hookUrl(type, config), events: [...ALERT_TYPES], ...(enabled !== undefined && { enabled }) })
    return reply.code(201).send({ channel: toUiChannel(req.user.id, channel) })
  })

  // The edit form sends the whole channel again; the events it receives stay as they are.
  app.put('/notifications/channels/:id', { schema: { hide: true, params: IdParams, body: ChannelBody } }, async (req) => {
    const { name, type, config, enabled } = req.body
    const { secret: _none, ...channel } = await service.update(req.user.id, req.params.id, { name, url: hookUrl(type, config), ...(enabled !== undefined && { enabled }) })
    return { channel: toUiChannel(req.user.id, channel) }
  })

  app.delete('/notifications/channels/:id', { schema: { hide: true, params: IdParams } }, async (req, reply) => {
    await service.delete(req.user.id, req.params.id)
    return reply.code(204).send()
  })

  // The UI shows "Test notification sent" on any 2xx and "Test failed" otherwise: a receiver that did not
  // take the test is a 502 naming what happened (the delivery's record: GET /v1/api/.../deliveries).
  app.post('/notifications/channels/:id/test', { schema: { hide: true, params: IdParams } }, async (req) => {
    const delivery = await service.test(req.user.id, req.params.id)
    if (delivery.status === 'delivered') return { message: 'test notification delivered', status: delivery.status, deliveryId: delivery.id }
    const last = delivery.attempts.at(-1)
    const why = last?.error ?? (last?.status_code != null ? `the receiver answered HTTP ${last.status_code}` : 'no answer')
    throw new UpstreamError(`the test notification was not delivered: ${why}${delivery.status === 'pending' ? ' (it will be tried again)' : ''}`)
  })
}
