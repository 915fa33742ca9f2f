// Tracked resources for the KubeOrch UI (CONTRACT.md §2.7, §4, §5): the list page, the detail page with
// its pods, favourites, the live status stream, pod logs and the terminal. Each route validates with the
// schema of the /v1/api route it stands for (src/routes/resources/), after its preValidation hook turned
// the UI's names into ours, and calls the same service or serving function; only the answers are reshaped.
import { Type } from 'typebox'
import type { FastifyRequest } from 'fastify'
import type { WebSocket } from 'ws'
import type { App } from '../../../app-types.ts'
import { Defaulted, StringEnum } from '../../../../schemas/common.ts'
import { PatchResourceBody, ResourceListQuery, ResourceParams } from '../../../../schemas/resource.ts'
import { MAX_PAGE_SIZE } from '../../../../schemas/pagination.ts'
import { LogStreamQuery, TerminalQuery } from '../../../../schemas/pod-streams.ts'
import { AppError } from '../../../errors.ts'
import { serveResourceStream } from '../../../routes/resources/stream.ts'
import { servePodLogStream } from '../../../routes/resources/logs.ts'
import { serveTerminal } from '../../../routes/resources/terminal.ts'
import { canonicalBody, offsetToPage, toCanonical, type Json } from '../translate.ts'
import { resourceHistory, toUiPod, toUiPodRecord, toUiResource } from '../resource-shape.ts'
import { podLogReframe, resourceStreamReframe, terminalEncoder } from '../pod-streams.ts'
import { ListSyncs } from '../list-sync.ts'

/** The UI's `sort_by` values → our sort fields (`type` is our `kind`, `created` our `created_at`). */
const SORT_BY: Record<string, string> = { name: 'name', type: 'kind', namespace: 'namespace', cluster: 'cluster', status: 'status', created: 'created_at' }
const canonicalSorts = (ResourceListQuery.properties.sort as unknown as { enum: string[] }).enum

/**
 * The list query: the canonical one, plus `cluster` as a sort (the UI sorts by that column) and the two
 * flags only this dialect has: `sync` (sync before listing, see list-sync.ts) and `hide_system`
 * (Kubernetes' own objects left out: kube-* namespaces, kube-root-ca.crt, the `kubernetes` Service).
 */
const UiListQuery = Type.Object({
  ...ResourceListQuery.properties,
  sort: Defaulted(StringEnum([...canonicalSorts, 'cluster'], { default: canonicalSorts[0] })),
  sync: Type.Optional(Type.Boolean()),
  hide_system: Type.Optional(Type.Boolean()),
}, { additionalProperties: false })

/** `?sync=true&hideSystem=true&limit=25&offset=0&type=Deployment&sort_by=created&sort_order=asc` → ours. */
async function listQuery(req: FastifyRequest) {
  const q = toCanonical(req.query, { type: 'kind', sort_by: 'sort', sort_order: 'order' }) as Json
  // An unknown sort_by value is left as sent: the schema refuses it with the allowed values.
  if (typeof q.sort === 'string' && SORT_BY[q.sort]) q.sort = SORT_BY[q.sort]
  req.query = offsetToPage(q)
}

type IdRequest = FastifyRequest<{ Params: { id: string } }>

export default async function resourceRoutes(app: App) {
  const service = app.services.resources
  const syncs = new ListSyncs({ sync: (userId, cluster) => service.sync(userId, cluster), waitMs: app.config.CLUSTER_TIMEOUT_MS, log: app.log })

  app.get('/resources', { schema: { hide: true, querystring: UiListQuery }, preValidation: listQuery }, async (req) => {
    const { page, limit, sort, order, search, sync, hide_system, ...filter } = req.query
    const synced = sync ? await syncs.before(req.user.id, filter.cluster) : undefined
    const result = await service.list(req.user.id, { page, limit, sort, order, search }, { ...filter, ...(hide_system && { hide_system }) })
    return {
      resources: result.items.map((r) => toUiResource(r)), total: result.total, page: result.page, limit: result.limit,
      // Not read by the UI: whether the list is as fresh as asked, and why not.
      ...(synced && { sync: synced }),
    }
  })

  app.get('/resources/:id', { schema: { hide: true, params: ResourceParams } }, async (req) => {
    const resource = await service.get(req.user.id, req.params.id)
    // The detail page links the workflow by name; a workflow deleted since just goes unnamed.
    const workflowName = resource.workflow_id
      ? await app.services.workflows.get(req.user.id, resource.workflow_id).then((w) => w.name, () => undefined)
      : undefined
    return { resource: toUiResource(resource, { workflowName }), history: resourceHistory(resource) }
  })

  app.patch('/resources/:id', { schema: { hide: true, params: ResourceParams, body: PatchResourceBody }, preValidation: canonicalBody() }, async (req) => {
    return { resource: toUiResource(await service.patch(req.user.id, req.params.id, req.body)) }
  })

  app.get('/resources/:id/pods', { schema: { hide: true, params: ResourceParams } }, async (req) => {
    // The page asks a CronJob for its children too. It has no selector of its own (GET /v1/api/…/pods
    // refuses it), but the watchers record its jobs' pods with it as their parent: those records answer.
    const resource = await service.get(req.user.id, req.params.id)
    if (resource.kind === 'CronJob') {
      const children = await service.list(req.user.id, { page: 1, limit: MAX_PAGE_SIZE, sort: 'created_at', order: 'desc' }, { parent_id: resource.id })
      return { pods: children.items.map(toUiPodRecord) }
    }
    const { pods } = await service.pods(req.user.id, req.params.id)
    // The badge shows the pod records' own status (read from container states, so a crash loop is
    // `failed`); one read of the workload's pod records, as GET /v1/api/resources?parent_id= answers them.
    const records = pods.some((p) => p.id) ? await service.list(req.user.id, { page: 1, limit: MAX_PAGE_SIZE }, { parent_id: req.params.id }) : null
    const statusOf = new Map(records?.items.map((r) => [r.id, r.status]))
    return { pods: pods.map((p) => toUiPod(p, p.id ? statusOf.get(p.id) : undefined)) }
  })

  app.get('/resources/:id/stream', { schema: { hide: true, params: ResourceParams } }, (req, reply) => serveResourceStream(app, req, reply, resourceStreamReframe))

  app.get('/resources/:id/logs/stream', { schema: { hide: true, params: ResourceParams, querystring: LogStreamQuery } }, (req, reply) => servePodLogStream(app, req, reply, podLogReframe))

  app.route({
    method: 'GET',
    url: '/resources/:id/exec/terminal',
    config: { tokenInQuery: true },
    schema: { hide: true, params: ResourceParams, querystring: TerminalQuery },
    handler: async (req: IdRequest) => {
      await service.get(req.user.id, req.params.id)
      throw new AppError(426, 'this route is a WebSocket: connect with an Upgrade: websocket request')
    },
    wsHandler: (socket: WebSocket, req) => serveTerminal(app, socket, req, terminalEncoder),
  })
}
