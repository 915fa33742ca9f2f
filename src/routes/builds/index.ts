// Image builds (spec "Builds", API.md §8): start, list, read, follow (SSE) and cancel. The build runs as a
// Job in the user's cluster; these routes only start it and read what the build service records.
import { Type } from 'typebox'
import type { App } from '../../app-types.ts'
import { errorResponses } from '../../../schemas/common.ts'
import { streamResponse, tooManyStreams } from '../../../schemas/streams.ts'
import { BuildList, BuildListQuery, BuildParams, StartBuildBody, buildStreamDoc } from '../../../schemas/build.ts'
import { pageReply } from '../../repositories/pagination.ts'
import { serveStream, type Reframe } from '../../events/sse.ts'
import type { FastifyReply, FastifyRequest } from 'fastify'

const tags = ['builds']
/** The stream of one build, in this API's dialect or another (`reframe`, the KubeOrch UI adapter). */
export function serveBuildStream(app: App, req: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply, reframe?: Reframe) {
  const stream = app.services.builds.stream(req.user.id, req.params.id)
  return serveStream(req, reply, { hub: stream.hub, key: stream.key, metadata: stream.metadata, reframe })
}

const unreadable = { 409: Type.Ref('ErrorResponse', { description: 'stored credentials (cluster or registry) cannot be opened with the current ENCRYPTION_KEY' }) }

export default async function buildRoutes(app: App) {
  const builds = app.services.builds

  app.post('/v1/api/builds/start', {
    schema: {
      tags, operationId: 'startBuild', summary: 'build an image from a git repository in a cluster and push it to a registry',
      description: [
        'Checks first, recording nothing when one fails: the input (400: paths stay inside the repository, a valid branch, commit, image name and tag, bounded build_args); the registry exists (404); `workflow_id` is yours (404) and has `node_id` (400); `repo_url` passes the outbound policy (400: https unless ALLOW_INSECURE_CLUSTERS, no credentials in it, no link-local or metadata address); you may deploy to `cluster` (404; 403 when it is shared with you as viewer).',
        'Then the build is recorded as `pending` (201) and runs in the cluster as the Job `build-<id>`: init containers clone the repository (shallow, the branch or commit), then a rootless BuildKit builds and pushes with the registry\'s stored login, mounted from a Secret made for this build and deleted when it ends. Follow it with GET /v1/api/builds/{id}/stream.',
        'The build is `completed` only once the registry confirms it holds the pushed manifest digest. With `workflow_id` and `node_id`, that node\'s `image` is then set to `host/name:tag@sha256:…` (no other node changes).',
      ].join('\n\n'),
      body: StartBuildBody,
      response: { 201: Type.Ref('Build'), ...errorResponses(400, 401, 403, 404, 413, 502, 503), ...unreadable },
    },
  }, async (req, reply) => reply.code(201).send(await builds.start(req.user.id, req.body)))

  app.get('/v1/api/builds', {
    schema: {
      tags, operationId: 'listBuilds', summary: 'the caller\'s builds, newest first',
      description: '`search` matches the image name, tag and repository URL literally.',
      querystring: BuildListQuery, response: { 200: BuildList, ...errorResponses(400, 401) },
    },
  }, async (req) => {
    const { status, workflow_id, ...page } = req.query
    return pageReply('builds', await builds.list(req.user.id, page, { status, workflow_id }))
  })

  app.get('/v1/api/builds/:id', {
    schema: { tags, operationId: 'getBuild', summary: 'one build', params: BuildParams, response: { 200: Type.Ref('Build'), ...errorResponses(401, 404) } },
  }, async (req) => builds.get(req.user.id, req.params.id))

  app.get('/v1/api/builds/:id/stream', {
    schema: {
      tags, operationId: 'streamBuild', summary: 'the build\'s progress and log (SSE)',
      description: buildStreamDoc.description, params: BuildParams,
      response: { 200: streamResponse('`text/event-stream`: metadata, progress, log, complete, failed, cancelled'), ...errorResponses(401, 404), ...tooManyStreams },
      'x-events': buildStreamDoc.events,
    },
  }, (req, reply) => serveBuildStream(app, req, reply))

  app.post('/v1/api/builds/:id/cancel', {
    schema: {
      tags, operationId: 'cancelBuild', summary: 'cancel a build still running',
      description: 'The build becomes `cancelled` at once and stays so, whatever its pod reports while it dies; its Job is deleted with its pods (and the credentials Secret with it). A build that has ended → 409.',
      params: BuildParams, response: { 200: Type.Ref('Build'), ...errorResponses(401, 404, 409) },
    },
  }, async (req) => builds.cancel(req.user.id, req.params.id))
}
