// GET /v1/api/resources/:id/logs/stream: a tracked resource's pod logs over SSE (API.md §7). Which pod and
// container is decided (and access checked: viewer suffices) before the stream starts, so a missing or
// foreign resource is a plain 404; what the cluster says about the container (unknown, not started) comes
// as an `error` event followed by `complete`.
import fp from 'fastify-plugin'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Static } from 'typebox'
import type { App } from '../../app-types.ts'
import { errorResponses } from '../../../schemas/common.ts'
import { ResourceParams } from '../../../schemas/resource.ts'
import { LOG_TAIL_MAX, LogStreamQuery, podLogsStreamDoc } from '../../../schemas/pod-streams.ts'
import { streamResponse } from '../../../schemas/streams.ts'
import { serveStream, type Reframe } from '../../events/sse.ts'
import { PodLogStreams, type LogOptions, type LogTarget } from '../../kube/pod-logs.ts'
import { PodTargets } from '../../services/pod-target.ts'
import { Type } from 'typebox'

declare module 'fastify' {
  interface FastifyInstance { podLogs: PodLogStreams; podTargets: PodTargets }
}

type LogStreamRequest = FastifyRequest<{ Params: { id: string }; Querystring: Static<typeof LogStreamQuery> }>

/** A pod's log stream, in this API's dialect or another (`reframe`, the KubeOrch UI adapter). */
export async function servePodLogStream(app: App, req: LogStreamRequest, reply: FastifyReply, reframe?: Reframe) {
  const { podLogs, podTargets: targets } = app
  const q = req.query
  const target = await targets.resolve(req.user.id, req.params.id, 'viewer', { pod: q.pod || undefined, container: q.container || undefined, initContainers: true })
  const container = target.container ?? q.container ?? ''
  const logTarget: LogTarget = { cluster: target.cluster, namespace: target.namespace, pod: target.pod, container }
  const opts: LogOptions = { tail: q.tail, sinceSeconds: q.since_seconds, follow: q.follow, timestamps: q.timestamps }
  const key = podLogs.keyFor(logTarget, target.problem ? { ...opts, follow: false } : opts)
  let release: (() => void) | undefined
  let releaseFollow: (() => void) | undefined
  return serveStream(req, reply, {
    hub: podLogs.hub, key, reframe,
    metadata: async () => ({ pod: target.pod, container, namespace: target.namespace, cluster: target.cluster.name }),
    onOpen: () => {
      if (target.problem) { podLogs.fail(key, target.problem); return }
      // A followed log holds a connection to the cluster for as long as it is open: capped per user (429).
      if (opts.follow) releaseFollow = app.userLimits.acquire('log_follows', req.user.id)
      release = podLogs.acquire(target.kc, key, logTarget, opts)
    },
    onClose: () => { release?.(); releaseFollow?.() },
  })
}

async function logRoutes(app: App) {
  const podLogs = new PodLogStreams({
    hub: app.streams, bufferSize: app.config.SSE_BUFFER_SIZE, maxTail: LOG_TAIL_MAX, maxLineBytes: app.config.LOG_LINE_MAX_BYTES, connectTimeoutMs: app.config.CLUSTER_TIMEOUT_MS, log: app.log.child({ component: 'pod-logs' }),
  })
  app.decorate('podLogs', podLogs)
  // preClose: open streams end before the server waits for its connections to finish.
  app.addHook('preClose', async () => podLogs.close())
  // Which pod and container a log or terminal request means (shared with the terminal route).
  app.decorate('podTargets', new PodTargets({
    resource: (ownerId, id) => app.services.resources.get(ownerId, id),
    kubeConfigFor: async (userId, ref, need) => { const { kc, cluster } = await app.services.clusters.kubeConfigFor(userId, ref, need); return { kc, cluster: { id: cluster.id, name: cluster.name } } },
    timeoutMs: app.config.CLUSTER_TIMEOUT_MS,
  }))

  app.get('/v1/api/resources/:id/logs/stream', {
    schema: {
      tags: ['resources'], operationId: 'streamResourceLogs', summary: 'pod logs of a tracked resource (SSE)',
      description: podLogsStreamDoc.description, params: ResourceParams, querystring: LogStreamQuery,
      response: {
        200: streamResponse('`text/event-stream`: metadata, log, error, complete'),
        409: Type.Ref('ErrorResponse', { description: 'the cluster\'s stored credentials cannot be opened (ENCRYPTION_KEY changed?); replace them with PUT /v1/api/clusters/{name}/credentials' }),
        429: Type.Ref('ErrorResponse', { description: 'too many open streams (MAX_STREAMS_PER_USER) or followed logs (MAX_LOG_FOLLOWS_PER_USER) for this user' }),
        ...errorResponses(400, 401, 404, 502),
      },
      'x-events': podLogsStreamDoc.events,
    },
  }, (req, reply) => servePodLogStream(app, req, reply))
}

export default fp(logRoutes, { name: 'pod-log-routes', dependencies: ['streams'] })
