// The UI's monitoring pages (CONTRACT.md §2.13): metrics from the overview service (API.md §10) and the
// tracked resources; the alert pages from the caller's failure notifications (alerts.ts) and the
// notification channels page from the channel service of API.md §12 (channels.ts).
import type { App } from '../../../app-types.ts'
import { ResourceListQuery } from '../../../../schemas/resource.ts'
import { MAX_PAGE_SIZE } from '../../../../schemas/pagination.ts'
import type { Overview } from '../../../services/metrics/index.ts'
import type { TrackedResource } from '../../../repositories/resources.ts'
import { toCanonical } from '../translate.ts'
import alertRoutes from './alerts.ts'
import channelRoutes from './channels.ts'

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

  await app.register(alertRoutes)
  await app.register(channelRoutes)
}
