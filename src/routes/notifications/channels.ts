// Notification channels (API.md §12): the caller's webhooks, their test and their deliveries. Owner-scoped
// in the repository: another user's channel id answers 404. The signing secret is write-only.
import { Type } from 'typebox'
import type { App } from '../../app-types.ts'
import { errorResponses } from '../../../schemas/common.ts'
import {
  ChannelList, ChannelListQuery, ChannelParams, CreateChannelBody, DeliveryList, DeliveryListQuery, NotificationChannel,
  NotificationChannelWithSecret, NotificationDelivery, UpdateChannelBody,
} from '../../../schemas/notifications.ts'
import { pageReply } from '../../repositories/pagination.ts'

const tags = ['notifications']

const DELIVERY_DOC = [
  'Each notification the channel takes is POSTed to its URL as JSON `{id, type, notification: {id, type, title, message, link, url, created_at}, sent_at}` (`id` is the delivery id, the same on every retry: de-duplicate on it), with headers',
  '`Content-Type: application/json`, `User-Agent: cluster-workflow-orchestrator-webhooks/1`, `X-Delivery-Id` and `X-Signature-256: sha256=<hex HMAC-SHA256 of the exact body, keyed with the channel secret>`.',
  'A Slack incoming-webhook URL (https://hooks.slack.com/...) gets Slack\'s `{text, blocks}` instead.',
  'A 2xx answer is delivered; 5xx, 429, a timeout (WEBHOOK_TIMEOUT_MS) or a connection error is tried again after WEBHOOK_RETRY_BASE_MS, then twice that (3 tries in all); any other answer fails at once.',
  'Up to 3 redirects are followed (the same POST re-sent), each hop held to the outbound policy: a redirect to a refused address fails the delivery, without retry.',
].join(' ')

export default async function channelRoutes(app: App) {
  const service = app.services.notificationChannels

  app.get('/v1/api/notifications/channels', {
    schema: {
      tags, operationId: 'listNotificationChannels', summary: 'the caller\'s notification channels (webhooks)',
      description: '`search` matches name and url literally.',
      querystring: ChannelListQuery, response: { 200: ChannelList, ...errorResponses(400, 401) },
    },
  }, async (req) => pageReply('channels', await service.list(req.user.id, req.query)))

  app.post('/v1/api/notifications/channels', {
    schema: {
      tags, operationId: 'createNotificationChannel', summary: 'add a webhook that receives the caller\'s notifications',
      description: `Without \`secret\`, the server generates one and returns it in this reply only (\`secret\`); it is never shown again. At most WEBHOOK_CHANNELS_PER_USER channels per user (409 past it); names are unique per user (409). ${DELIVERY_DOC}`,
      body: CreateChannelBody, response: { 201: NotificationChannelWithSecret, ...errorResponses(400, 401, 409) },
    },
  }, async (req, reply) => reply.code(201).send(await service.create(req.user.id, req.body)))

  app.get('/v1/api/notifications/channels/:id', {
    schema: {
      tags, operationId: 'getNotificationChannel', summary: 'one of the caller\'s channels (never its secret)',
      params: ChannelParams, response: { 200: NotificationChannel, ...errorResponses(401, 404) },
    },
  }, async (req) => service.get(req.user.id, req.params.id))

  app.put('/v1/api/notifications/channels/:id', {
    schema: {
      tags, operationId: 'updateNotificationChannel', summary: 'change a channel: only the fields given change',
      description: '`secret` replaces the signing secret; `rotate_secret: true` generates a new one, returned in this reply only. Deliveries already queued go to the URL, and are signed with the secret, current when they are sent.',
      params: ChannelParams, body: UpdateChannelBody, response: { 200: NotificationChannelWithSecret, ...errorResponses(400, 401, 404, 409) },
    },
  }, async (req) => service.update(req.user.id, req.params.id, req.body))

  app.delete('/v1/api/notifications/channels/:id', {
    schema: {
      tags, operationId: 'deleteNotificationChannel', summary: 'remove a channel and its delivery records (nothing pending is sent)',
      params: ChannelParams, response: { 204: Type.Null({ description: 'removed' }), ...errorResponses(401, 404) },
    },
  }, async (req, reply) => {
    await service.delete(req.user.id, req.params.id)
    return reply.code(204).send(null)
  })

  app.post('/v1/api/notifications/channels/:id/test', {
    schema: {
      tags, operationId: 'testNotificationChannel', summary: 'send a test notification (type `test`) now and answer its delivery record',
      description: 'Sent through the same path as real notifications (signature, Slack shape, outbound policy, redirects), enabled or not. Answers after the first attempt (at most WEBHOOK_TIMEOUT_MS): `delivered`, `failed`, or `pending` with `next_attempt_at` when the receiver answered something worth retrying (the retries then follow as for any delivery). A receiver that fails is a 200 with that outcome, not an error.',
      params: ChannelParams, response: { 200: NotificationDelivery, ...errorResponses(401, 404) },
    },
  }, async (req) => service.test(req.user.id, req.params.id))

  app.get('/v1/api/notifications/channels/:id/deliveries', {
    schema: {
      tags, operationId: 'listNotificationChannelDeliveries', summary: 'a channel\'s deliveries, newest first, with every attempt',
      description: `Kept WEBHOOK_DELIVERY_RETENTION_DAYS. \`search\` matches the type and the notification's title. ${DELIVERY_DOC}`,
      params: ChannelParams, querystring: DeliveryListQuery, response: { 200: DeliveryList, ...errorResponses(400, 401, 404) },
    },
  }, async (req) => {
    const { status, ...page } = req.query
    return pageReply('deliveries', await service.deliveries(req.user.id, req.params.id, page, { status }))
  })
}
