// Node diagnostics and graph fixes (spec "Node diagnostics"; API.md §9).
import type { App } from '../../app-types.ts'
import { errorResponses } from '../../../schemas/common.ts'
import { FixBody, FixResult, FixTemplate, FixTemplateParams, NodeDiagnostics, NodeParams } from '../../../schemas/diagnostics.ts'

const tags = ['workflows']

export default async function diagnosticsRoutes(app: App) {
  const service = app.services.diagnostics

  app.get('/v1/api/workflows/:id/nodes/:nodeId/diagnostics', {
    schema: {
      tags, operationId: 'getNodeDiagnostics', summary: 'checks of one node: its data, edges and rendered objects, and, once deployed, its objects in the cluster',
      description: 'Static checks always. Live checks read (never write) the cluster and namespace of the workflow\'s last run with viewer access: the objects exist and are ready, a service has ready endpoints, its selector matches pods and its target ports match their containers, recent warning events, a custom resource\'s API is served. A cluster that cannot be read gives one `cluster` warning; the reply is still 200. Every failed check has a suggestion and, when a fix applies, its `fix_type`.',
      params: NodeParams, response: { 200: NodeDiagnostics, ...errorResponses(400, 401, 404, 422, 503) },
    },
  }, async (req) => service.diagnose(req.user.id, req.params.id, req.params.nodeId))

  app.get('/v1/api/workflows/:id/nodes/:nodeId/fix-template/:fixType', {
    schema: {
      tags, operationId: 'getNodeFixTemplate', summary: 'the graph edit a fix would make, and the node\'s objects after it',
      description: 'Nothing is saved. 409 (saying why) when the fix does not apply to the node as it is now. `image-tag-latest` applies only once the pods of the last run report a digest for the image the node names; no tag is ever guessed.',
      params: FixTemplateParams, response: { 200: FixTemplate, ...errorResponses(400, 401, 404, 409, 422, 503) },
    },
  }, async (req) => service.fixTemplate(req.user.id, req.params.id, req.params.nodeId, req.params.fixType))

  app.post('/v1/api/workflows/:id/nodes/:nodeId/fix', {
    schema: {
      tags, operationId: 'applyNodeFix', summary: 'apply a fix to the workflow graph and save it (no version; the next run deploys it)',
      description: 'The edit the fix template shows, made on the graph as stored now and saved like POST /save; 409 when the workflow was saved meanwhile. Nothing is written to a cluster: `image-tag-latest` only reads the image digest the running pods report.',
      params: NodeParams, body: FixBody, response: { 200: FixResult, ...errorResponses(400, 401, 404, 409, 422) },
    },
  }, async (req) => service.applyFix(req.user.id, req.params.id, req.params.nodeId, req.body.fix_type))
}
