// Notifications (API.md §10): the record, the list query and reply, and the stream's events.
import { Type } from 'typebox'
import { StringEnum, Timestamp } from './common.ts'
import { PaginationQuery } from './pagination.ts'

export const NOTIFICATION_TYPES = [
  'run_completed', 'run_failed', 'build_completed', 'build_failed', 'import_completed', 'import_failed', 'cluster_status', 'resource_failed',
] as const
export type NotificationType = typeof NOTIFICATION_TYPES[number]

export const Notification = Type.Object({
  id: Type.String(),
  type: StringEnum(NOTIFICATION_TYPES),
  title: Type.String(),
  message: Type.String(),
  link: Type.String({ description: 'API path of the subject, e.g. /v1/api/workflows/{id}/runs/{runId}' }),
  read: Type.Boolean(),
  created_at: Timestamp,
}, { additionalProperties: false, description: 'kept 30 days' })

// Ids are ours (24 hex digits): anything else is refused before a query (400).
export const NotificationParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: 'notification id (any other string is a 404, as an id that is not yours: ids cannot be probed)' }) })

export const NotificationListQuery = PaginationQuery(['created_at'], {
  unread: Type.Optional(Type.Boolean({ description: 'only unread ones when true' })),
})

const UnreadCountProp = Type.Integer({ minimum: 0, description: 'the caller\'s unread notifications, whatever the filter' })

export const NotificationList = Type.Object({
  notifications: Type.Array(Notification),
  total: Type.Integer({ minimum: 0 }),
  page: Type.Integer({ minimum: 1 }),
  limit: Type.Integer({ minimum: 1 }),
  unread_count: UnreadCountProp,
}, { additionalProperties: false })

export const UnreadCount = Type.Object({ unread_count: UnreadCountProp }, { additionalProperties: false })

export const ReadAllResult = Type.Object({
  updated: Type.Integer({ minimum: 0, description: 'how many were unread' }),
  unread_count: UnreadCountProp,
}, { additionalProperties: false })

export const notificationStreamDoc = {
  description: [
    'Server-Sent Events: `id: <n>\\nevent: <type>\\ndata: <one line of JSON>\\n\\n`; the first frame also carries `retry: 3000` and is the `metadata` snapshot; a `: ping` comment comes every SSE_HEARTBEAT_MS. Send `Authorization: Bearer <token>`; a client reconnecting with `Last-Event-ID` gets the events it missed that are still in the replay window, after a fresh `metadata`.',
    'Events: `metadata` (`{unread_count}`: first, and again whenever notifications are marked read), `notification` (a new notification, as the list returns it).',
  ].join('\n\n'),
  events: {
    metadata: { description: 'the caller\'s unread count', schema: UnreadCount },
    notification: { description: 'a new notification', schema: Notification },
  },
}
