// GET /v1/api/resources/:id/stream: one tracked resource's status over SSE (spec "Events", API.md §7).
// Authenticated and owner-scoped like every route: another user's resource answers 404 before any stream.
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { App } from '../../app-types.ts'
import { errorResponses } from '../../../schemas/common.ts'
import { ResourceParams } from '../../../schemas/resource.ts'
import { resourceStreamDoc, streamResponse, tooManyStreams } from '../../../schemas/streams.ts'
import { serveStream, type Reframe } from '../../events/sse.ts'
import { resourceKey } from '../../services/workflow-stream.ts'

/** The stream of one tracked resource, in this API's dialect or another (`reframe`, the KubeOrch UI adapter). */
export function serveResourceStream(app: App, req: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply, reframe?: Reframe) {
  let clusterId = ''
  let release: (() => void) | undefined
  return serveStream(req, reply, {
    hub: app.streams, key: resourceKey(req.params.id), reframe,
    metadata: async () => {
      const resource = await app.services.resources.get(req.user.id, req.params.id)
      clusterId = resource.cluster_id
      return resource
    },
    onOpen: () => { release = app.workflowStreams.openResource(req.params.id, clusterId) },
    onClose: () => release?.(),
  })
}

export default async function resourceStreamRoutes(app: App) {
  app.get('/v1/api/resources/:id/stream', {
    schema: {
      tags: ['resources'], operationId: 'streamResource', summary: 'live status of one tracked resource (SSE)',
      description: resourceStreamDoc.description,
      params: ResourceParams,
      response: { 200: streamResponse('`text/event-stream`: metadata, node_update, status_change, error'), ...errorResponses(400, 401, 404), ...tooManyStreams },
      'x-events': resourceStreamDoc.events,
    },
  }, (req, reply) => serveResourceStream(app, req, reply))
}
