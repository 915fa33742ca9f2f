// Workflow CRUD, clone, status, save and run history (spec "Workflows").
import { Type } from 'typebox'
import type { App } from '../../app-types.ts'
import { errorResponses } from '../../../schemas/common.ts'
import {
  WorkflowParams, CreateWorkflowBody, UpdateWorkflowBody, SaveWorkflowBody, CloneWorkflowBody, SetStatusBody,
  WorkflowListQuery, WorkflowList, RunListQuery, RunList, DeleteWorkflowQuery,
} from '../../../schemas/workflow.ts'
import { pageReply, type Page } from '../../repositories/pagination.ts'
import { derivedSnapshot } from '../../repositories/snapshot.ts'
import type { WorkflowSummary } from '../../repositories/workflows.ts'

const tags = ['workflows']
const workflowsReply = (page: Page<WorkflowSummary>) => pageReply('workflows', page)

export default async function workflowRoutes(app: App) {
  const service = app.services.workflows

  app.post('/v1/api/workflows', {
    schema: {
      tags, operationId: 'createWorkflow', summary: 'create a workflow (status draft, empty graph)',
      body: CreateWorkflowBody, response: { 201: Type.Ref('Workflow'), ...errorResponses(400, 401) },
    },
  }, async (req, reply) => reply.code(201).send(await service.create(req.user.id, req.body)))

  app.get('/v1/api/workflows', {
    schema: {
      tags, operationId: 'listWorkflows', summary: 'the caller\'s workflows, paginated; `search` matches name and description',
      description: 'Each workflow comes as a summary: `node_count`, `edge_count` and `node_types` instead of `nodes` and `edges`. `include=graph` adds `nodes` and `edges` (the whole canvas of every workflow on the page); `GET /workflows/{id}` answers one in full.',
      querystring: WorkflowListQuery, response: { 200: WorkflowList, ...errorResponses(400, 401) },
    },
  }, async (req) => {
    const { status, include, ...page } = req.query
    if (include === 'graph') return pageReply('workflows', await service.list(req.user.id, page, { status }, { graph: true }))
    // A cached page's reply is derived (and serialized) once, while the page stays cached.
    return derivedSnapshot(await service.listShared(req.user.id, page, { status }), workflowsReply)
  })

  app.get('/v1/api/workflows/:id', {
    schema: { tags, operationId: 'getWorkflow', summary: 'one workflow', params: WorkflowParams, response: { 200: Type.Ref('Workflow'), ...errorResponses(401, 404) } },
  }, async (req) => service.getShared(req.user.id, req.params.id))

  app.put('/v1/api/workflows/:id', {
    schema: {
      tags, operationId: 'updateWorkflow', summary: 'update name, description, cluster_id or metadata',
      params: WorkflowParams, body: UpdateWorkflowBody, response: { 200: Type.Ref('Workflow'), ...errorResponses(400, 401, 404) },
    },
  }, async (req) => service.update(req.user.id, req.params.id, req.body))

  app.delete('/v1/api/workflows/:id', {
    schema: {
      tags, operationId: 'deleteWorkflow',
      summary: 'delete the workflow, its versions and run history; stops its watchers; resources already deployed stay in the cluster unless delete_resources=true',
      description: 'Without `delete_resources`, the objects the workflow deployed stay in their clusters. With `delete_resources=true`, its objects are first removed from every cluster it was deployed to (reverse apply order; only objects this service created for this workflow) and marked deleted among the tracked resources; if a cluster cannot be reached or an object cannot be deleted, the reply is 502 and the workflow is kept (409 while one of its runs is running).',
      params: WorkflowParams, querystring: DeleteWorkflowQuery,
      response: { 204: Type.Null({ description: 'deleted' }), ...errorResponses(400, 401, 403, 404, 409, 502) },
    },
  }, async (req, reply) => {
    if (req.query.delete_resources) await app.services.runs.deleteWithResources(req.user.id, req.params.id)
    else await service.delete(req.user.id, req.params.id)
    return reply.code(204).send(null)
  })

  app.post('/v1/api/workflows/:id/clone', {
    schema: {
      tags, operationId: 'cloneWorkflow', summary: 'copy into a new draft owned by the caller (default name "<name> (copy)")',
      params: WorkflowParams, body: Type.Optional(CloneWorkflowBody), response: { 201: Type.Ref('Workflow'), ...errorResponses(400, 401, 404) },
    },
  }, async (req, reply) => reply.code(201).send(await service.clone(req.user.id, req.params.id, req.body?.name)))

  app.put('/v1/api/workflows/:id/status', {
    schema: {
      tags, operationId: 'setWorkflowStatus', summary: 'set draft, published or archived; archiving stops the watchers of its resources',
      params: WorkflowParams, body: SetStatusBody, response: { 200: Type.Ref('Workflow'), ...errorResponses(400, 401, 404) },
    },
  }, async (req) => service.setStatus(req.user.id, req.params.id, req.body.status))

  app.post('/v1/api/workflows/:id/save', {
    schema: {
      tags, operationId: 'saveWorkflow',
      summary: 'save nodes and edges (and metadata) without creating a version',
      description: 'Nodes and edges are stored as sent, except each node\'s live status (`data._status`, drift included): it stays what the watchers stored for that node id, whatever the body says (a new node has none; a removed node\'s goes with it). Refused (400, naming the node or edge) when node ids repeat, an edge names a missing node, or a node type is unknown. Deeper checks are diagnostics and never block a save.',
      params: WorkflowParams, body: SaveWorkflowBody, response: { 200: Type.Ref('Workflow'), ...errorResponses(400, 401, 404, 413) },
    },
  }, async (req) => service.save(req.user.id, req.params.id, req.body as Parameters<typeof service.save>[2]))

  app.get('/v1/api/workflows/:id/runs', {
    schema: {
      tags, operationId: 'listWorkflowRuns', summary: 'execution history, newest first',
      params: WorkflowParams, querystring: RunListQuery, response: { 200: RunList, ...errorResponses(400, 401, 404) },
    },
  }, async (req) => {
    const { status, ...page } = req.query
    return pageReply('runs', await service.listRuns(req.user.id, req.params.id, page, { status }))
  })
}
