// The dashboard page and the top bar's global search in the UI's dialect (CONTRACT.md §2.3 "Dashboard",
// §2.13): the same services as src/routes/dashboard/ and src/routes/search/.
import type { App } from '../../../app-types.ts'
import { RecentWorkflowsQuery } from '../../../../schemas/dashboard.ts'
import { SearchQuery } from '../../../../schemas/search.ts'
import { NotFound } from '../../../errors.ts'
import { METRIC_NAMES, type DashboardStats } from '../../../repositories/stats.ts'
import { withCamelAliases } from '../translate.ts'

/**
 * The stat cards show `value` as it comes (the UI types it as a string), so the success rate carries its
 * percent sign; `change` and `trend` are already the UI's.
 */
function uiStats(stats: DashboardStats) {
  const out: Record<string, unknown> = { ...stats, computedAt: stats.computed_at }
  for (const name of METRIC_NAMES) {
    const m = stats[name]
    out[name] = { ...m, value: name === 'success_rate' ? `${m.value}%` : String(m.value) }
  }
  return out
}

export default async function dashboardRoutes(app: App) {
  const { stats, workflows, search, clusters } = app.services

  app.get('/dashboard/stats', { schema: { hide: true } }, async (request) => uiStats(await stats.get(request.user.id)))

  // Already what the UI reads (`workflows[]` with status in draft|published|archived, `current_version`…).
  app.get('/dashboard/recent-workflows', {
    schema: { hide: true, querystring: RecentWorkflowsQuery },
  }, async (request) => ({ workflows: await workflows.recent(request.user.id, request.query.limit) }))

  app.get('/search', {
    schema: { hide: true, querystring: SearchQuery },
  }, async (request) => {
    const userId = request.user.id
    const found = await search.search(userId, request.query.q, request.query.limit)
    // The palette shows a cluster's display name and status, which the search hit does not carry: each
    // hit (a handful, `limit` at most) is read as GET /clusters/:name reads it, so access is checked again.
    const hits = await Promise.all(found.clusters.map(async (hit) => {
      try {
        const c = await clusters.get(userId, hit.id)
        return { ...hit, display_name: c.display_name, displayName: c.display_name, status: c.status }
      } catch (err) {
        if (err instanceof NotFound) return null // removed or unshared since the search
        throw err
      }
    }))
    return {
      ...found,
      workflows: found.workflows.map((w) => withCamelAliases({ ...w })),
      clusters: hits.filter((c) => c !== null),
      resources: found.resources.map((r) => ({ ...r, type: r.kind, clusterName: r.cluster })),
      templates: found.templates.map((t) => withCamelAliases({ ...t })),
    }
  })
}
