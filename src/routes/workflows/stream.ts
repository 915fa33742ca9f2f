// GET /v1/api/workflows/:id/status/stream: the workflow's live node statuses over SSE (spec "Events",
// API.md §7). Authenticated like every route (plugins/auth.ts) and owner-scoped: the snapshot is read
// before the stream starts, so another user's workflow answers 404 as JSON.
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { App } from '../../app-types.ts'
import { errorResponses } from '../../../schemas/common.ts'
import { WorkflowParams } from '../../../schemas/workflow.ts'
import { streamResponse, tooManyStreams, workflowStreamDoc } from '../../../schemas/streams.ts'
import { serveStream, type Reframe } from '../../events/sse.ts'
import { workflowKey } from '../../services/workflow-stream.ts'

/** The stream of one workflow, in this API's dialect or another (`reframe`, the KubeOrch UI adapter). */
export function serveWorkflowStream(app: App, req: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply, reframe?: Reframe) {
  return serveStream(req, reply, {
    hub: app.streams, key: workflowKey(req.params.id), reframe,
    metadata: () => app.services.workflows.get(req.user.id, req.params.id),
  })
}

export default async function workflowStreamRoutes(app: App) {
  app.get('/v1/api/workflows/:id/status/stream', {
    schema: {
      tags: ['workflows'], operationId: 'streamWorkflowStatus', summary: 'live node statuses of the workflow (SSE)',
      description: workflowStreamDoc.description,
      params: WorkflowParams,
      response: { 200: streamResponse('`text/event-stream`: metadata, node_update, status_change, workflow_sync, error, complete'), ...errorResponses(400, 401, 404), ...tooManyStreams },
      'x-events': workflowStreamDoc.events,
    },
  }, (req, reply) => serveWorkflowStream(app, req, reply))
}
