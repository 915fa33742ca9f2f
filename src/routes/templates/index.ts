import type { App } from '../../app-types.ts'
import { errorResponses } from '../../../schemas/common.ts'
import { TemplateList } from '../../../schemas/templates.ts'
import { builtInTemplates } from '../../services/node-catalogue.ts'

export default async function templateRoutes(app: App) {
  app.get('/v1/api/templates', {
    schema: {
      tags: ['templates'], operationId: 'listTemplates',
      summary: 'the component palette: built-in node types (and the node types of enabled plugins)',
      response: { 200: TemplateList, ...errorResponses(401) },
    },
  }, async () => ({ templates: [...builtInTemplates(), ...await app.services.plugins.templates()] }))
}
