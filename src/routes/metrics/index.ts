// Overview metrics (API.md §10): totals across the caller's clusters, for dashboards.
import type { App } from '../../app-types.ts'
import { errorResponses } from '../../../schemas/common.ts'
import { MetricsOverview } from '../../../schemas/metrics.ts'

const tags = ['metrics']

export default async function metricsRoutes(app: App) {
  app.get('/v1/api/metrics/overview', {
    schema: {
      tags, operationId: 'getMetricsOverview',
      summary: 'totals across the caller\'s clusters: clusters by status, nodes, pods by phase, CPU and memory capacity and requests, tracked resources by status',
      description: 'Each cluster is read with one node list and one pod list, bounded by CLUSTER_TIMEOUT_MS; one that does not answer is listed with reachable: false and its stored health, and the call still answers 200. The answer is kept per user for METRICS_CACHE_MS.',
      response: { 200: MetricsOverview, ...errorResponses(401) },
    },
  }, async (req) => app.services.metrics.overview(req.user.id))
}
