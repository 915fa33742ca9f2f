// Workflow versions (spec "Workflow versions"): numbered snapshots of the graph.
import { Type } from 'typebox'
import type { App } from '../../app-types.ts'
import { errorResponses } from '../../../schemas/common.ts'
import {
  WorkflowParams, VersionParams, VersionMetaBody, VersionListQuery, VersionList, CompareQuery, VersionComparison, RestoreResult,
} from '../../../schemas/workflow.ts'
import { pageReply } from '../../repositories/pagination.ts'

const tags = ['versions']

export default async function versionRoutes(app: App) {
  const service = app.services.workflows

  app.get('/v1/api/workflows/:id/versions', {
    schema: {
      tags, operationId: 'listVersions', summary: 'versions of a workflow, paginated',
      description: 'Each version comes as a summary: `node_count`, `edge_count` and `node_types` instead of `nodes` and `edges`. `include=graph` adds `nodes` and `edges`; `GET /workflows/{id}/versions/{version}` answers one in full.',
      params: WorkflowParams, querystring: VersionListQuery, response: { 200: VersionList, ...errorResponses(400, 401, 404) },
    },
  }, async (req) => {
    const { include, ...page } = req.query
    return pageReply('versions', await service.listVersions(req.user.id, req.params.id, page, { graph: include === 'graph' }))
  })

  app.get('/v1/api/workflows/:id/versions/compare', {
    schema: {
      tags, operationId: 'compareVersions', summary: 'field-level differences from version v1 to version v2',
      params: WorkflowParams, querystring: CompareQuery, response: { 200: VersionComparison, ...errorResponses(400, 401, 404) },
    },
  }, async (req) => service.compareVersions(req.user.id, req.params.id, req.query.v1, req.query.v2))

  app.get('/v1/api/workflows/:id/versions/:version', {
    schema: { tags, operationId: 'getVersion', summary: 'one version', params: VersionParams, response: { 200: Type.Ref('Version'), ...errorResponses(400, 401, 404) } },
  }, async (req) => service.getVersion(req.user.id, req.params.id, req.params.version))

  app.post('/v1/api/workflows/:id/versions', {
    schema: {
      tags, operationId: 'createVersion', summary: 'snapshot the current graph as the next version',
      params: WorkflowParams, body: Type.Optional(VersionMetaBody), response: { 201: Type.Ref('Version'), ...errorResponses(400, 401, 404) },
    },
  }, async (req, reply) => reply.code(201).send(await service.createVersion(req.user.id, req.params.id, req.body ?? {})))

  app.put('/v1/api/workflows/:id/versions/:version', {
    schema: {
      tags, operationId: 'updateVersion', summary: 'update name, tag or description',
      params: VersionParams, body: VersionMetaBody, response: { 200: Type.Ref('Version'), ...errorResponses(400, 401, 404) },
    },
  }, async (req) => service.updateVersion(req.user.id, req.params.id, req.params.version, req.body))

  app.post('/v1/api/workflows/:id/versions/:version/restore', {
    schema: {
      tags, operationId: 'restoreVersion', summary: 'copy the version\'s graph into the workflow and record that as a new version',
      params: VersionParams, response: { 200: RestoreResult, ...errorResponses(400, 401, 404) },
    },
  }, async (req) => service.restoreVersion(req.user.id, req.params.id, req.params.version))
}
