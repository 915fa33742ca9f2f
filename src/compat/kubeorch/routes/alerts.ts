// The UI's alert pages (CONTRACT.md §2.13; its lib/services/alerts.ts) on what this backend has: it keeps no
// metric alert rules, but it does tell each user what broke, as notifications (API.md §10). So the alert
// events are the caller's failure notifications, read through the notification service (same owner scoping,
// same limits), and nothing else is invented:
//
//   notification                       severity   ruleType   why
//   resource_failed                    critical   resource   a deployed object is failing now
//   cluster_status (not a recovery)    critical   cluster    nothing on that cluster is managed meanwhile
//   run_failed, drift_detected         warning    workflow   a deploy did not take / the cluster no longer
//                                                             matches it; what ran before keeps running
//   build_failed, import_failed        warning    workflow   work meant for a workflow did not happen
//
// A cluster_status announcing that a cluster answers again is the end of an alert, not one: left out.
// Nothing is `info`. `status` is `firing` while the notification is unread and `resolved` once read;
// acknowledge and resolve both mark it read (a notification has no third state, so an acknowledged event
// reads back as resolved, and the `acknowledged` filter lists none). `ruleId` names the notification type
// that fired it, there being no rules; `ruleName` is the notification's title. Rules, templates and the
// test fire answer an empty list on read and a 501 on write: they are not supported, and nothing pretends
// to store them.
import { Type } from 'typebox'
import type { App } from '../../../app-types.ts'
import { StringEnum } from '../../../../schemas/common.ts'
import { MAX_PAGE_SIZE } from '../../../../schemas/pagination.ts'
import { NOTIFICATION_TYPES, type NotificationType } from '../../../../schemas/notifications.ts'
import { AppError, NotFound } from '../../../errors.ts'
import type { Notification, NotificationFilter } from '../../../repositories/notifications.ts'
import { CLUSTER_BACK_TITLE } from '../../../services/notifications/index.ts'
import { uiLink } from './user-notifications.ts'

export type AlertSeverity = 'critical' | 'warning' | 'info'
export type AlertRuleType = 'cluster' | 'workflow' | 'resource'

// Keyed by name, not NotificationType: a type listed here that the notification service does not produce
// (yet) simply selects nothing.
const ALERTS: Record<string, { severity: AlertSeverity; ruleType: AlertRuleType }> = {
  resource_failed: { severity: 'critical', ruleType: 'resource' },
  cluster_status: { severity: 'critical', ruleType: 'cluster' },
  run_failed: { severity: 'warning', ruleType: 'workflow' },
  drift_detected: { severity: 'warning', ruleType: 'workflow' },
  build_failed: { severity: 'warning', ruleType: 'workflow' },
  import_failed: { severity: 'warning', ruleType: 'workflow' },
}

/** The notification types that are alert events. */
export const ALERT_TYPES: readonly NotificationType[] = NOTIFICATION_TYPES.filter((type) => type in ALERTS)
const ALERTS_ONLY: NotificationFilter = { types: ALERT_TYPES, exceptTitle: CLUSTER_BACK_TITLE }

const typesWhere = (pick: (a: { severity: AlertSeverity; ruleType: AlertRuleType }) => boolean) => ALERT_TYPES.filter((type) => pick(ALERTS[type]))

class NotSupported extends AppError { constructor(message: string) { super(501, message) } }
const RULES_UNSUPPORTED = 'alert rules are not supported by this backend: the alert pages list the failures it notifies you of (failed runs, builds, imports and resources, unreachable clusters, drift)'

const ids = (link: string) => ({
  workflowId: link.match(/^\/v1\/api\/workflows\/([^/]+)/)?.[1],
  clusterName: ((m) => m && decodeURIComponent(m[1]))(link.match(/^\/v1\/api\/clusters\/([^/]+)$/)),
  resourceId: link.match(/^\/v1\/api\/resources\/([^/]+)$/)?.[1],
})

/** A failure notification as the UI's AlertEvent. */
export function toAlertEvent(ownerId: string, n: Notification) {
  const { severity, ruleType } = ALERTS[n.type]
  const { workflowId, clusterName, resourceId } = ids(n.link)
  const page = uiLink(n.link)
  return {
    id: n.id, ruleId: n.type, userId: ownerId, status: n.read ? 'resolved' as const : 'firing' as const, severity,
    ruleName: n.title, ruleType, message: n.message,
    details: { notificationType: n.type, ...(page !== undefined && { link: page }), ...(resourceId !== undefined && { resourceId }) },
    ...(workflowId !== undefined && { workflowId }), ...(clusterName && { clusterName }),
    firedAt: n.created_at,
  }
}

const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) })
// The UI sends its filters empty when "all" is chosen.
const Filter = <const T extends readonly string[]>(values: T) => Type.Optional(StringEnum([...values, ''] as const))
const RulesQuery = Type.Object({
  type: Filter(['cluster', 'workflow', 'resource']),
  severity: Filter(['critical', 'warning', 'info']),
  enabled: Filter(['true', 'false']),
}, { additionalProperties: false })
const EventsQuery = Type.Object({
  type: Filter(['cluster', 'workflow', 'resource']),
  severity: Filter(['critical', 'warning', 'info']),
  status: Filter(['firing', 'resolved', 'acknowledged']),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: 20 })),
}, { additionalProperties: false })

export default async function alertRoutes(app: App) {
  const notifications = app.services.notifications

  app.get('/alerts/overview', { schema: { hide: true } }, async (req) => {
    const unread = (types: readonly NotificationType[]) => types.length ? notifications.count(req.user.id, { ...ALERTS_ONLY, types, read: false }) : 0
    const [critical, warning] = await Promise.all([unread(typesWhere((a) => a.severity === 'critical')), unread(typesWhere((a) => a.severity === 'warning'))])
    return { activeAlerts: critical + warning, totalRules: 0, enabledRules: 0, severityBreakdown: { critical, warning, info: 0 } }
  })

  app.get('/alerts/events', { schema: { hide: true, querystring: EventsQuery } }, async (req) => {
    const { type, severity, status, page = 1, limit = 20 } = req.query
    const types = typesWhere((a) => (!type || a.ruleType === type) && (!severity || a.severity === severity))
    if (!types.length || status === 'acknowledged') return { events: [], total: 0, page, limit }
    const read = status === 'firing' ? false : status === 'resolved' ? true : undefined
    const list = await notifications.list(req.user.id, { page, limit }, { ...ALERTS_ONLY, types, ...(read !== undefined && { read }) })
    return { events: list.items.map((n) => toAlertEvent(req.user.id, n)), total: list.total, page: list.page, limit: list.limit }
  })

  // Both mark the notification read (see the header); another user's, or a notification that is not an
  // alert, is a 404 like a missing one.
  const markRead = async (ownerId: string, id: string) => {
    try {
      return toAlertEvent(ownerId, await notifications.markRead(ownerId, id, ALERTS_ONLY))
    } catch (err) {
      if (err instanceof NotFound) throw new NotFound('alert event')
      throw err
    }
  }
  app.patch('/alerts/events/:id/acknowledge', { schema: { hide: true, params: IdParams } }, async (req) => markRead(req.user.id, req.params.id))
  app.patch('/alerts/events/:id/resolve', { schema: { hide: true, params: IdParams } }, async (req) => markRead(req.user.id, req.params.id))

  app.get('/alerts/rules', { schema: { hide: true, querystring: RulesQuery } }, async () => ({ rules: [] }))
  app.get('/alerts/rules/:id', { schema: { hide: true, params: IdParams } }, async () => { throw new NotFound('alert rule') })
  app.get('/alerts/templates', { schema: { hide: true } }, async () => ({ templates: [] }))
  const refuse = async () => { throw new NotSupported(RULES_UNSUPPORTED) }
  app.post('/alerts/rules', { schema: { hide: true } }, refuse)
  app.put('/alerts/rules/:id', { schema: { hide: true, params: IdParams } }, refuse)
  app.delete('/alerts/rules/:id', { schema: { hide: true, params: IdParams } }, refuse)
  app.patch('/alerts/rules/:id/toggle', { schema: { hide: true, params: IdParams } }, refuse)
  app.post('/alerts/templates/:id/enable', { schema: { hide: true, params: IdParams } }, refuse)
  app.post('/alerts/test-fire', { schema: { hide: true } }, refuse)
}
