// The UI's monitoring pages (CONTRACT.md §2.13): metrics from the overview service (API.md §10) and the
// tracked resources; alerts and notification channels do not exist on this backend yet (a later issue),
// so their reads answer the empty state the pages expect and their writes a plain 501, never pretend storage.
import { Type } from 'typebox'
import type { App } from '../../../app-types.ts'
import { StringEnum } from '../../../../schemas/common.ts'
import { ResourceListQuery } from '../../../../schemas/resource.ts'
import { MAX_PAGE_SIZE } from '../../../../schemas/pagination.ts'
import { AppError, NotFound } from '../../../errors.ts'
import type { Overview } from '../../../services/metrics/index.ts'
import type { TrackedResource } from '../../../repositories/resources.ts'
import { toCanonical } from '../translate.ts'

class NotImplemented extends AppError { constructor(message: string) { super(501, message) } }
const notYet = (what: string) => new NotImplemented(`${what} arrive with notification channels and alerting, which this backend does not have yet`)

const percent = (used: number, capacity: number) => capacity > 0 ? Math.round((used / capacity) * 1000) / 10 : 0
// The UI formats CPU as millicores.
const millicores = (cores: number) => Math.round(cores * 1000)

/**
 * One cluster's (or the totals') figures as the metrics page reads them. "Used" is what scheduled pods
 * request against what the nodes can allocate, as `kubectl describe node` reports it: the overview reads no
 * metrics.k8s.io. Storage is not measured by this backend (no volume statistics), so it reads 0 of 0.
 */
function figures(cpu: Overview['cpu'] | null, memory: Overview['memory'] | null) {
  const cpuUsed = millicores(cpu?.requests_cores ?? 0)
  const cpuCapacity = millicores(cpu?.allocatable_cores ?? 0)
  const memUsed = memory?.requests_bytes ?? 0
  const memCapacity = memory?.allocatable_bytes ?? 0
  return { cpuUsed, cpuCapacity, cpuPercent: percent(cpuUsed, cpuCapacity), memUsed, memCapacity, memPercent: percent(memUsed, memCapacity), storUsed: 0, storCapacity: 0, storPercent: 0 }
}

export function toUiOverview(o: Overview) {
  const clusters = o.items.map((c) => ({
    clusterName: c.name, status: c.status, reachable: c.reachable, message: c.message,
    ...figures(c.cpu, c.memory), nodeCount: c.nodes?.total ?? 0, podCount: c.pods?.total ?? 0,
  }))
  const t = figures(o.cpu, o.memory)
  return {
    clusters,
    totals: {
      cpuUsed: t.cpuUsed, cpuCapacity: t.cpuCapacity, cpuPercent: t.cpuPercent,
      memoryUsed: t.memUsed, memoryCapacity: t.memCapacity, memoryPercent: t.memPercent,
      storageUsed: 0, storageCapacity: 0, storagePercent: 0,
      nodeCount: o.nodes.total, podCount: o.pods.total,
    },
    collectedAt: o.collected_at,
  }
}

function toUiResourceMetric(r: TrackedResource) {
  // Restarts are counted on pods (their container restart counts); other kinds have none of their own.
  const restarts = typeof r.counters.restarts === 'number' ? r.counters.restarts : 0
  return { id: r.id, name: r.name, namespace: r.namespace ?? '', type: r.kind, clusterName: r.cluster, status: r.status, restarts }
}

const Id = Type.String({ minLength: 1, maxLength: 64 })
const IdParams = Type.Object({ id: Id })
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

export default async function monitoringRoutes(app: App) {
  app.get('/metrics/overview', { schema: { hide: true } }, async (req) => toUiOverview(await app.services.metrics.overview(req.user.id)))

  app.get('/metrics/resources', {
    schema: { hide: true, querystring: ResourceListQuery },
    // The table shows every resource at once: the largest page, most recently changed first.
    preValidation: async (req) => {
      const query = toCanonical(req.query, { type: 'kind' }) as Record<string, unknown>
      req.query = { limit: String(MAX_PAGE_SIZE), sort: 'updated_at', ...query } as unknown as typeof req.query
    },
  }, async (req) => {
    const { cluster, namespace, kind, workflow_id, status, ...page } = req.query
    const list = await app.services.resources.list(req.user.id, page, { cluster, namespace, kind, workflow_id, status })
    return { resources: list.items.map(toUiResourceMetric), total: list.total }
  })

  // Alerts and notification channels: empty until they exist.
  app.get('/alerts/overview', { schema: { hide: true } }, async () => ({
    activeAlerts: 0, totalRules: 0, enabledRules: 0, severityBreakdown: { critical: 0, warning: 0, info: 0 },
  }))
  app.get('/alerts/rules', { schema: { hide: true, querystring: RulesQuery } }, async () => ({ rules: [] }))
  app.get('/alerts/rules/:id', { schema: { hide: true, params: IdParams } }, async () => { throw new NotFound('alert rule') })
  app.get('/alerts/templates', { schema: { hide: true } }, async () => ({ templates: [] }))
  app.get('/alerts/events', { schema: { hide: true, querystring: EventsQuery } }, async (req) => ({
    events: [], total: 0, page: req.query.page ?? 1, limit: req.query.limit ?? 20,
  }))
  app.get('/notifications/channels', { schema: { hide: true } }, async () => ({ channels: [] }))
  app.get('/notifications/channels/:id', { schema: { hide: true, params: IdParams } }, async () => { throw new NotFound('notification channel') })

  const refuse = (what: string) => async () => { throw notYet(what) }
  app.post('/alerts/rules', { schema: { hide: true } }, refuse('Alert rules'))
  app.put('/alerts/rules/:id', { schema: { hide: true, params: IdParams } }, refuse('Alert rules'))
  app.delete('/alerts/rules/:id', { schema: { hide: true, params: IdParams } }, refuse('Alert rules'))
  app.patch('/alerts/rules/:id/toggle', { schema: { hide: true, params: IdParams } }, refuse('Alert rules'))
  app.post('/alerts/templates/:id/enable', { schema: { hide: true, params: IdParams } }, refuse('Alert templates'))
  app.patch('/alerts/events/:id/acknowledge', { schema: { hide: true, params: IdParams } }, refuse('Alert events'))
  app.patch('/alerts/events/:id/resolve', { schema: { hide: true, params: IdParams } }, refuse('Alert events'))
  app.post('/alerts/test-fire', { schema: { hide: true } }, refuse('Alerts'))
  app.post('/notifications/channels', { schema: { hide: true } }, refuse('Notification channels'))
  app.put('/notifications/channels/:id', { schema: { hide: true, params: IdParams } }, refuse('Notification channels'))
  app.delete('/notifications/channels/:id', { schema: { hide: true, params: IdParams } }, refuse('Notification channels'))
  app.post('/notifications/channels/:id/test', { schema: { hide: true, params: IdParams } }, refuse('Notification channels'))
}
