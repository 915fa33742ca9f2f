import type { App } from '../../app-types.ts'
import { errorResponses } from '../../../schemas/common.ts'
import { DashboardStats, RecentWorkflowsQuery } from '../../../schemas/dashboard.ts'
import { Type } from 'typebox'

const tags = ['dashboard']

export default async function dashboardRoutes(app: App) {
  app.get('/v1/api/dashboard/stats', {
    schema: {
      tags, operationId: 'getDashboardStats', summary: 'the caller\'s pre-computed statistics, each with its change over 7 days',
      response: { 200: DashboardStats, ...errorResponses(401) },
    },
  }, async (req) => app.services.stats.get(req.user.id))

  app.get('/v1/api/dashboard/recent-workflows', {
    schema: {
      tags, operationId: 'listRecentWorkflows', summary: 'the caller\'s most recently updated workflows',
      querystring: RecentWorkflowsQuery, response: { 200: Type.Object({ workflows: Type.Array(Type.Ref('Workflow')) }, { additionalProperties: false }), ...errorResponses(400, 401) },
    },
  }, async (req) => ({ workflows: await app.services.workflows.recent(req.user.id, req.query.limit) }))
}
