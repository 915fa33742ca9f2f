// Notifications (API.md §10): the record, the list query and reply, and the stream's events.
import { Type } from 'typebox'
import { StringEnum, Timestamp, Id } from './common.ts'
import { PaginationQuery, PageOf } from './pagination.ts'

export const NOTIFICATION_TYPES = [
  'run_completed', 'run_failed', 'build_completed', 'build_failed', 'import_completed', 'import_failed', 'cluster_status', 'resource_failed',
  'drift_detected',
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

/** The final frame of a notification stream a newer one replaced (API.md §14). */
export const StreamReplaced = Type.Object({
  reason: Type.String({ description: 'why the stream ended, e.g. "a newer notification stream of this user opened"' }),
  limit: Type.Integer({ description: 'MAX_NOTIFICATION_STREAMS_PER_USER: notification streams a user may hold open on one replica' }),
}, { additionalProperties: false })

export const notificationStreamDoc = {
  description: [
    'Server-Sent Events: `id: <n>\\nevent: <type>\\ndata: <one line of JSON>\\n\\n`; the first frame also carries `retry: 3000` and is the `metadata` snapshot; a `: ping` comment comes every SSE_HEARTBEAT_MS. Send `Authorization: Bearer <token>`; a client reconnecting with `Last-Event-ID` gets the events it missed that are still in the replay window, after a fresh `metadata`.',
    'Events: `metadata` (`{unread_count}`: first, and again whenever notifications are marked read), `notification` (a new notification, as the list returns it), `replaced` (the last frame: see below).',
    'A user holds at most MAX_NOTIFICATION_STREAMS_PER_USER (4) notification streams on one replica, this route and the KubeOrch UI adapter\'s together; a new one is never refused for that count: the user\'s oldest gets a final `replaced` frame (`event: replaced`, no `id`, `data: {reason, limit}`) and its response ends, giving its MAX_STREAMS_PER_USER slot back. A client that receives `replaced` should not reconnect: a newer stream of its user took its place.',
  ].join('\n\n'),
  events: {
    metadata: { description: 'the caller\'s unread count', schema: UnreadCount },
    notification: { description: 'a new notification', schema: Notification },
    replaced: { description: 'the last frame of a stream ended because a newer notification stream of the caller opened beyond MAX_NOTIFICATION_STREAMS_PER_USER; it carries no `id`', schema: StreamReplaced },
  },
}

// Notification channels (API.md §12): per-user webhooks fed by the notifications above.

export const MAX_CHANNEL_URL_LENGTH = 2048

const ChannelName = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', description: 'unique among the caller\'s channels, case-insensitively' })
const ChannelUrl = Type.String({
  minLength: 1, maxLength: MAX_CHANNEL_URL_LENGTH,
  description: 'where deliveries are POSTed: https (http only with ALLOW_INSECURE_CLUSTERS), no user:password in it, not an address the outbound policy refuses (checked here and again at every connection and redirect). A Slack, Discord or Microsoft Teams incoming-webhook URL gets that service\'s message shape instead of the JSON envelope (see `format`).',
})
const ChannelEvents = Type.Array(StringEnum(NOTIFICATION_TYPES), {
  maxItems: NOTIFICATION_TYPES.length, uniqueItems: true,
  description: 'the notification types this channel receives; an empty list means every type, including types added later',
})
const ChannelSecret = Type.String({
  minLength: 16, maxLength: 256, pattern: '^[\\x21-\\x7e]{16,256}$',
  description: 'write-only: the HMAC-SHA256 key of the `X-Signature-256` header (16 to 256 printable ASCII characters, no spaces); sealed at rest, never returned',
})

export const CreateChannelBody = Type.Object({
  name: ChannelName,
  url: ChannelUrl,
  events: ChannelEvents,
  secret: Type.Optional(ChannelSecret),
  enabled: Type.Optional(Type.Boolean({ default: true, description: 'a disabled channel is kept but receives nothing (true when absent)' })),
}, { additionalProperties: false, description: 'without `secret`, the server generates one and returns it once, in this reply' })

export const UpdateChannelBody = Type.Object({
  name: Type.Optional(ChannelName),
  url: Type.Optional(ChannelUrl),
  events: Type.Optional(ChannelEvents),
  secret: Type.Optional(ChannelSecret),
  rotate_secret: Type.Optional(Type.Boolean({ description: 'true: the server generates a new secret and returns it once, in this reply (not with `secret`)' })),
  enabled: Type.Optional(Type.Boolean()),
}, { additionalProperties: false, minProperties: 1, description: 'only the fields given change; the stored secret is replaced only by `secret` or `rotate_secret`' })

const channelProperties = {
  id: Id,
  name: Type.String(),
  url: Type.String(),
  events: Type.Array(StringEnum(NOTIFICATION_TYPES), { description: 'empty: every type' }),
  enabled: Type.Boolean(),
  has_secret: Type.Boolean({ description: 'a signing secret is stored (always true: one is generated when none is given)' }),
  format: StringEnum(['envelope', 'slack', 'discord', 'teams'], { description: 'the body deliveries take, from the URL\'s host: `envelope` (the signed JSON envelope), or a chat service\'s own message shape: `slack` (hooks.slack.com: `{text, blocks}`), `discord` (discord.com webhooks: `{content}`), `teams` (Office 365 connectors and Power Automate workflows: `{text}`). Every body is signed all the same.' }),
  created_at: Timestamp,
  updated_at: Timestamp,
}

export const NotificationChannel = Type.Object(channelProperties, { additionalProperties: false, description: 'the secret is never returned' })

export const NotificationChannelWithSecret = Type.Object({
  ...channelProperties,
  secret: Type.Optional(Type.String({ description: 'only when the server generated the secret (create without `secret`, or `rotate_secret`): shown this once, never again' })),
}, { additionalProperties: false })

export const ChannelParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: 'channel id (a malformed id or another user\'s is 404, so ids cannot be probed)' }) })

export const ChannelListQuery = PaginationQuery(['created_at', 'name', 'updated_at'])
export const ChannelList = PageOf('channels', NotificationChannel)

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const
export type DeliveryStatus = typeof DELIVERY_STATUSES[number]

export const DeliveryAttempt = Type.Object({
  at: Timestamp,
  status_code: Type.Union([Type.Integer(), Type.Null()], { description: 'the receiver\'s HTTP status (of the last hop); null when none came (timeout, connection error, refused address)' }),
  error: Type.Union([Type.String(), Type.Null()], { description: 'why the attempt did not deliver, in a few words (never the response body)' }),
  duration_ms: Type.Integer({ minimum: 0 }),
  redirects: Type.Integer({ minimum: 0, description: 'redirects followed (at most 3)' }),
}, { additionalProperties: false })

const DeliveredNotification = Type.Object({
  id: Type.String(),
  type: Type.String({ description: 'a notification type, or `test` for POST .../test' }),
  title: Type.String(),
  message: Type.String(),
  link: Type.String(),
  created_at: Timestamp,
}, { additionalProperties: false })

export const NotificationDelivery = Type.Object({
  id: Id,
  channel_id: Id,
  type: Type.String({ description: 'the notification\'s type, or `test`' }),
  test: Type.Boolean({ description: 'made by POST .../test' }),
  status: StringEnum(DELIVERY_STATUSES, { description: 'pending (not sent yet, or waiting to retry), delivered (a 2xx answer), failed (3 tries, or an answer not worth retrying)' }),
  attempts: Type.Array(DeliveryAttempt, { description: 'oldest first' }),
  next_attempt_at: Type.Union([Timestamp, Type.Null()], { description: 'when a pending delivery is (re)tried; null once finished' }),
  notification: DeliveredNotification,
  created_at: Timestamp,
  finished_at: Type.Union([Timestamp, Type.Null()]),
}, { additionalProperties: false, description: 'kept WEBHOOK_DELIVERY_RETENTION_DAYS' })

export const DeliveryListQuery = PaginationQuery(['created_at'], {
  status: Type.Optional(StringEnum(DELIVERY_STATUSES, { description: 'only deliveries in this status' })),
})
export const DeliveryList = PageOf('deliveries', NotificationDelivery)
