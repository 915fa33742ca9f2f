import type { App } from '../../app-types.ts'
import { errorResponses } from '../../../schemas/common.ts'
import { SearchQuery, SearchResults } from '../../../schemas/search.ts'

export default async function searchRoutes(app: App) {
  app.get('/v1/api/search', {
    schema: {
      tags: ['search'], operationId: 'search', summary: 'search across the caller\'s workflows, clusters, resources, plugins and templates',
      querystring: SearchQuery, response: { 200: SearchResults, ...errorResponses(400, 401) },
    },
  }, async (req) => app.services.search.search(req.user.id, req.query.q, req.query.limit))
}
