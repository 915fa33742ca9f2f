// The caller's notifications (API.md §10): a paginated list, the unread count, marking read, and a live
// stream of new ones. Owner-scoped in the repository: another user's id answers 404.
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { App } from '../../app-types.ts'
import { errorResponses } from '../../../schemas/common.ts'
import { NotificationParams, NotificationListQuery, NotificationList, UnreadCount, ReadAllResult, Notification, notificationStreamDoc } from '../../../schemas/notifications.ts'
import { streamResponse, tooManyStreams } from '../../../schemas/streams.ts'
import { pageReply } from '../../repositories/pagination.ts'
import { serveStream, type Reframe } from '../../events/sse.ts'
import { notificationsKey } from '../../services/notifications/index.ts'

const tags = ['notifications']

/**
 * The caller's notification stream; `reframe` re-encodes its events for another dialect (the KubeOrch UI
 * adapter). At most MAX_NOTIFICATION_STREAMS_PER_USER per user, both prefixes together: a new one ends the
 * oldest with `replaced` (API.md §14).
 */
export function serveNotificationStream(app: App, req: FastifyRequest, reply: FastifyReply, reframe?: Reframe) {
  return serveStream(req, reply, {
    hub: app.streams, key: notificationsKey(req.user.id),
    metadata: async () => ({ unread_count: await app.services.notifications.unreadCount(req.user.id) }),
    reframe,
    admit: () => app.notificationStreams.admit(req.user.id),
  })
}

export default async function notificationRoutes(app: App) {
  const service = app.services.notifications

  app.get('/v1/api/notifications', {
    schema: {
      tags, operationId: 'listNotifications', summary: 'the caller\'s notifications, newest first',
      description: '`unread=true` lists only unread ones; `unread_count` counts every unread one whatever the filter. `search` matches title and message literally. Kept 30 days.',
      querystring: NotificationListQuery, response: { 200: NotificationList, ...errorResponses(400, 401) },
    },
  }, async (req) => {
    const { unread, ...page } = req.query
    const list = await service.list(req.user.id, page, { unread })
    return { ...pageReply('notifications', list), unread_count: list.unread_count }
  })

  app.get('/v1/api/notifications/unread-count', {
    schema: { tags, operationId: 'countUnreadNotifications', summary: 'how many of the caller\'s notifications are unread', response: { 200: UnreadCount, ...errorResponses(401) } },
  }, async (req) => ({ unread_count: await service.unreadCount(req.user.id) }))

  app.post('/v1/api/notifications/read-all', {
    schema: { tags, operationId: 'markAllNotificationsRead', summary: 'mark every notification of the caller read', response: { 200: ReadAllResult, ...errorResponses(401) } },
  }, async (req) => service.markAllRead(req.user.id))

  app.post('/v1/api/notifications/:id/read', {
    schema: {
      tags, operationId: 'markNotificationRead', summary: 'mark one notification read (again: no change)',
      params: NotificationParams, response: { 200: Notification, ...errorResponses(400, 401, 404) },
    },
  }, async (req) => service.markRead(req.user.id, req.params.id))

  app.get('/v1/api/notifications/stream', {
    schema: {
      tags, operationId: 'streamNotifications', summary: 'the caller\'s new notifications and unread count (SSE)',
      description: notificationStreamDoc.description,
      response: { 200: streamResponse('`text/event-stream`: metadata, notification; replaced (last) when a newer stream of the caller took its place'), ...errorResponses(401), ...tooManyStreams },
      'x-events': notificationStreamDoc.events,
    },
  }, (req, reply) => serveNotificationStream(app, req, reply))
}
