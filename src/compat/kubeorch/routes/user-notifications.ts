// The UI's /user-notifications* (CONTRACT.md §2.13, §4) on the notification service (API.md §10). The top
// bar calls the list and opens the stream on every dashboard page: a 200 without a `notifications` array
// crashes every page, and the stream is retried every 3 s for ever, so it must stay open (`: ping`).
import type { App } from '../../../app-types.ts'
import { NotificationListQuery, NotificationParams, type NotificationType } from '../../../../schemas/notifications.ts'
import type { Notification } from '../../../repositories/notifications.ts'
import type { Reframe } from '../../../events/sse.ts'
import { serveNotificationStream } from '../../../routes/notifications/index.ts'
import { offsetToPage } from '../translate.ts'

/** The UI's notification types (CONTRACT.md §2.13): it picks an icon by them. */
export type UiNotificationType = 'workflow_deployed' | 'workflow_failed' | 'build_completed' | 'build_failed' | 'resource_warning' | 'system'

const TYPES: Record<NotificationType, UiNotificationType> = {
  run_completed: 'workflow_deployed',
  run_failed: 'workflow_failed',
  build_completed: 'build_completed',
  build_failed: 'build_failed',
  // The UI has no import or cluster types; they are news about the system around the user's work.
  import_completed: 'system',
  import_failed: 'system',
  cluster_status: 'system',
  resource_failed: 'resource_warning',
  // The cluster's objects no longer match what was applied: a warning about those resources.
  drift_detected: 'resource_warning',
}

// Our links are API paths; the UI router.push()es `link`, so it must be one of its pages. A subject with no
// page of its own (an import session) gets no link rather than one that leads nowhere.
const PAGES: Array<[RegExp, (m: RegExpMatchArray) => string]> = [
  [/^\/v1\/api\/workflows\/([^/]+)(?:\/.*)?$/, (m) => `/dashboard/workflow/${m[1]}`],
  [/^\/v1\/api\/builds\/([^/]+)$/, (m) => `/dashboard/build/${m[1]}`],
  [/^\/v1\/api\/resources\/([^/]+)$/, (m) => `/dashboard/resources/${m[1]}`],
  [/^\/v1\/api\/clusters\/[^/]+$/, () => '/dashboard/clusters'],
]

export function uiLink(apiPath: string): string | undefined {
  for (const [pattern, page] of PAGES) {
    const m = apiPath.match(pattern)
    if (m) return page(m)
  }
  return undefined
}

/** A notification as the UI reads it: `type` in its set, `createdAt`, `link` a page path (or absent). */
export function toUiNotification(n: Notification) {
  const link = uiLink(n.link)
  return {
    id: n.id, type: TYPES[n.type], title: n.title, message: n.message, read: n.read,
    ...(link !== undefined && { link }), createdAt: n.created_at, created_at: n.created_at,
  }
}

// The list's page size when the UI sends none (it always sends limit=5 or 50).
const DEFAULT_LIMIT = 20

// Only new notifications interest the UI; the count snapshot it would log as an unknown event.
const reframe: Reframe = (type, data) => type === 'notification' ? { type: 'new_notification', data: toUiNotification(data as Notification) } : null

export default async function userNotificationRoutes(app: App) {
  const service = app.services.notifications

  app.get('/user-notifications', {
    schema: { hide: true, querystring: NotificationListQuery },
    preValidation: async (req) => { req.query = offsetToPage(req.query as Record<string, unknown>, DEFAULT_LIMIT) as typeof req.query },
  }, async (req) => {
    const { unread, ...page } = req.query
    const list = await service.list(req.user.id, page, { unread })
    return {
      notifications: list.items.map(toUiNotification), total: list.total, unreadCount: list.unread_count,
      page: list.page, limit: list.limit, offset: (list.page - 1) * list.limit,
    }
  })

  app.get('/user-notifications/unread-count', { schema: { hide: true } }, async (req) => {
    const unreadCount = await service.unreadCount(req.user.id)
    return { unreadCount, unread_count: unreadCount }
  })

  app.patch('/user-notifications/:id/read', { schema: { hide: true, params: NotificationParams } }, async (req) => (
    toUiNotification(await service.markRead(req.user.id, req.params.id))
  ))

  // As POST /v1/api/notifications/read-all: no body is read.
  app.post('/user-notifications/mark-all-read', { schema: { hide: true } }, async (req) => {
    const { updated, unread_count } = await service.markAllRead(req.user.id)
    return { updated, unreadCount: unread_count, unread_count }
  })

  app.get('/user-notifications/stream', { schema: { hide: true } }, (req, reply) => serveNotificationStream(app, req, reply, reframe))
}
