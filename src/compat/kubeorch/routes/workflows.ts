// The UI's workflow, version and node-diagnostics calls (CONTRACT.md §2.3–2.5, §3, §4) on the services the
// /v1/api routes in src/routes/workflows/ and src/routes/versions/ call. What changes on the way:
// - Workflows go out bare, as ours do, with every node's `data._status` in the UI's vocabulary
//   (node-status.ts); the canvas is built from them and its settings panels switch on those states.
// - Lists carry `nodes[]` (the UI shows `nodes.length`): each node's and edge's id only, projected by the
//   database ('ids'), so a list never reads every canvas out; our `node_count` stays beside it. The
//   workflow list, which the UI asks for without a query and cannot page, is the largest page (100).
// - Save answers `{workflow}`. The `_status` the UI sends back (our status, re-encoded, merged into its
//   nodes by the stream) needs nothing here: a save keeps the stored status on either prefix (the service's).
// - Run: the UI's `{trigger_data: {secrets, envVars}}` is already our body (the same names, keyed by node
//   id, then by key or variable name), and the cluster defaults to the workflow's `cluster_id` as on /v1/api.
//   A run that ends `failed` within the reply's wait answers 502 with the run's error as `error` and
//   `message` (the UI treats every 2xx as started); one still running answers 202 as on /v1/api, and its
//   later failure reaches the canvas through the status stream and a notification.
// - Diagnostics get camelCase names and `autoFixable`; a fix takes `fixType` and never applies the YAML the
//   UI sends (API.md §9: a fix edits the graph, the next run deploys it), so an edited YAML is refused.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { App } from '../../../app-types.ts'
import {
  WorkflowParams, CreateWorkflowBody, UpdateWorkflowBody, SaveWorkflowBody, CloneWorkflowBody, SetStatusBody,
  WorkflowListQuery, RunRequest, VersionParams, VersionMetaBody, VersionListQuery,
} from '../../../../schemas/workflow.ts'
import { FixBody, FixTemplateParams, NodeParams } from '../../../../schemas/diagnostics.ts'
import { MAX_PAGE_SIZE } from '../../../../schemas/pagination.ts'
import type { Workflow } from '../../../repositories/workflows.ts'
import type { FixType } from '../../../services/diagnostics/types.ts'
import { serveWorkflowStream } from '../../../routes/workflows/stream.ts'
import { startRunAndWait } from '../../../routes/workflows/run.ts'
import { BadRequest } from '../../../errors.ts'
import { canonicalBody, toCanonical, type Json } from '../translate.ts'
import { uiNode } from '../node-status.ts'
import { workflowStreamReframe } from '../workflow-stream.ts'

/** A workflow (or anything with `nodes`) as the UI reads it: node statuses in its vocabulary. */
export function uiWorkflow<W extends { nodes?: readonly unknown[] }>(wf: W): W {
  return Array.isArray(wf.nodes) ? { ...wf, nodes: wf.nodes.map(uiNode) } : wf
}

/** The answer to an archive: the UI toasts "…K8s resources cleaned up" unless it gets a warning, and ours are not. */
export function archiveWarning(wf: Pick<Workflow, 'status' | 'run_count'>): string | undefined {
  if (wf.status !== 'archived' || wf.run_count === 0) return undefined
  return 'Archived: its resources are no longer watched, but the objects it deployed stay in the cluster. Delete them with DELETE /workflows/{id}?delete_resources=true, or kubectl.'
}

// The fix's `yaml` and `mode` mean nothing to this API's fix; kept per request to check them in the handler.
const fixRequests = new WeakMap<FastifyRequest, { yaml?: unknown; mode?: unknown }>()

// The apply-fix panel shows `details` first, then `error`. Not on a 401: the UI logs out before any panel
// shows it, and every adapter route answers that one alike ({error, message}).
async function withDetails(_req: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  if (reply.statusCode < 400 || reply.statusCode === 401 || typeof payload !== 'string' || !payload.startsWith('{"error":')) return payload
  try {
    const body = JSON.parse(payload) as Json
    return typeof body.error === 'string' && !('details' in body) ? JSON.stringify({ ...body, details: body.error }) : payload
  } catch {
    return payload
  }
}

export default async function workflowRoutes(app: App) {
  const service = app.services.workflows
  const diagnostics = app.services.diagnostics

  app.get('/workflows', {
    schema: { hide: true, querystring: WorkflowListQuery },
    // The UI sends no query and has no paging: the largest page, so it shows as many as a page can hold.
    preValidation: async (req) => {
      const query = (req.query ?? {}) as Json
      if (query.limit === undefined) req.query = { ...query, limit: String(MAX_PAGE_SIZE) } as unknown as typeof req.query
    },
  }, async (req) => {
    const { status, include, ...page } = req.query
    const list = await service.list(req.user.id, page, { status }, { graph: include === 'graph' ? true : 'ids' })
    return { workflows: list.items.map((w) => uiWorkflow(w)), total: list.total, page: list.page, limit: list.limit }
  })

  app.post('/workflows', { schema: { hide: true, body: CreateWorkflowBody }, preValidation: canonicalBody({ clusterId: 'cluster_id' }) }, async (req, reply) => (
    reply.code(201).send(uiWorkflow(await service.create(req.user.id, req.body)))
  ))

  app.get('/workflows/:id', { schema: { hide: true, params: WorkflowParams } }, async (req) => uiWorkflow(await service.getShared(req.user.id, req.params.id)))

  app.put('/workflows/:id', { schema: { hide: true, params: WorkflowParams, body: UpdateWorkflowBody }, preValidation: canonicalBody({ clusterId: 'cluster_id' }) }, async (req) => (
    uiWorkflow(await service.update(req.user.id, req.params.id, req.body))
  ))

  app.post('/workflows/:id/save', { schema: { hide: true, params: WorkflowParams, body: SaveWorkflowBody } }, async (req) => {
    const workflow = await service.save(req.user.id, req.params.id, req.body as Parameters<typeof service.save>[2])
    return { workflow: uiWorkflow(workflow) }
  })

  app.put('/workflows/:id/status', { schema: { hide: true, params: WorkflowParams, body: SetStatusBody } }, async (req) => {
    const workflow = await service.setStatus(req.user.id, req.params.id, req.body.status)
    const warning = archiveWarning(workflow)
    return { ...uiWorkflow(workflow), ...(warning && { warning }) }
  })

  app.post('/workflows/:id/run', { schema: { hide: true, params: WorkflowParams, body: Type.Optional(RunRequest) } }, async (req, reply) => {
    const { code, run, location } = await startRunAndWait(app, req.user.id, req.params.id, req.body ?? {})
    if (location) reply.header('location', location)
    if (code === 200 && run.status === 'failed') {
      // The canvas toasts "started successfully" on any 2xx and shows `error` otherwise: a run that failed
      // within the wait is the cluster refusing or not answering (502, API.md §1), with the run beside it.
      const error = run.error ?? 'the run failed'
      return reply.code(502).send({ ...run, run_id: run.id, error, message: error })
    }
    const message = code === 200 ? `run ${run.status}` : 'run started; it goes on in the background'
    return reply.code(code).send({ ...run, run_id: run.id, message })
  })

  app.post('/workflows/:id/clone', { schema: { hide: true, params: WorkflowParams, body: Type.Optional(CloneWorkflowBody) } }, async (req, reply) => (
    reply.code(201).send(uiWorkflow(await service.clone(req.user.id, req.params.id, req.body?.name)))
  ))

  app.get('/workflows/:id/status/stream', { schema: { hide: true, params: WorkflowParams } }, (req, reply) => (
    serveWorkflowStream(app, req, reply, workflowStreamReframe())
  ))

  // Versions (CONTRACT.md §2.4): the history list shows `nodes.length`, the compare page spreads `nodes`.

  app.get('/workflows/:id/versions', { schema: { hide: true, params: WorkflowParams, querystring: VersionListQuery } }, async (req) => {
    const { include, ...page } = req.query
    const list = await service.listVersions(req.user.id, req.params.id, page, { graph: include === 'graph' ? true : 'ids' })
    return { versions: list.items, total: list.total, page: list.page, limit: list.limit }
  })

  app.get('/workflows/:id/versions/:version', { schema: { hide: true, params: VersionParams } }, async (req) => (
    service.getVersion(req.user.id, req.params.id, req.params.version)
  ))

  app.post('/workflows/:id/versions', { schema: { hide: true, params: WorkflowParams, body: Type.Optional(VersionMetaBody) } }, async (req, reply) => {
    const version = await service.createVersion(req.user.id, req.params.id, req.body ?? {})
    return reply.code(201).send({ ...version, message: `version ${version.version} created` })
  })

  app.post('/workflows/:id/versions/:version/restore', { schema: { hide: true, params: VersionParams } }, async (req) => {
    const { version, workflow } = await service.restoreVersion(req.user.id, req.params.id, req.params.version)
    return { message: `restored version ${req.params.version} as version ${version.version}`, version, workflow: uiWorkflow(workflow) }
  })

  // Node diagnostics and fixes (CONTRACT.md §2.5), shown in a Service node's panel.

  app.get('/workflows/:id/nodes/:nodeId/diagnostics', { schema: { hide: true, params: NodeParams } }, async (req) => {
    const result = await diagnostics.diagnose(req.user.id, req.params.id, req.params.nodeId)
    const wf = await service.getShared(req.user.id, req.params.id)
    const data = ((wf.nodes as Array<{ id?: unknown; data?: Json }>).find((n) => n.id === req.params.nodeId)?.data) ?? {}
    return {
      ...result,
      overallStatus: result.overall_status,
      serviceName: typeof data.name === 'string' ? data.name : req.params.nodeId,
      namespace: typeof data.namespace === 'string' && data.namespace ? data.namespace : 'default',
      timestamp: result.checked_at,
      checks: result.checks.map((c) => ({ ...c, autoFixable: c.fix_type !== undefined, ...(c.fix_type && { fixType: c.fix_type }) })),
    }
  })

  app.get('/workflows/:id/nodes/:nodeId/fix-template/:fixType', { schema: { hide: true, params: FixTemplateParams } }, async (req) => {
    const template = await diagnostics.fixTemplate(req.user.id, req.params.id, req.params.nodeId, req.params.fixType)
    return {
      ...template, name: template.fix_type, fixType: template.fix_type, yaml: template.preview_yaml,
      // Not the objects: the graph is edited and saved, and the next run deploys it.
      applyMethod: 'graph-edit',
    }
  })

  app.post('/workflows/:id/nodes/:nodeId/fix', {
    schema: { hide: true, params: NodeParams, body: FixBody },
    preValidation: async (req) => {
      const body = req.body
      if (body && typeof body === 'object' && !Array.isArray(body)) fixRequests.set(req, { yaml: (body as Json).yaml, mode: (body as Json).mode })
      req.body = toCanonical(body, { fixType: 'fix_type' }, ['yaml', 'mode']) as typeof req.body
    },
    onSend: withDetails,
  }, async (req) => {
    const { yaml, mode } = fixRequests.get(req) ?? {}
    const fixType = req.body.fix_type as FixType
    if (mode !== undefined && mode !== 'auto' && mode !== 'manual') throw new BadRequest('mode must be "auto" or "manual"')
    if (mode === 'manual' && typeof yaml === 'string') {
      // Only the graph edit is ever applied: YAML edited by hand would be silently lost, so it is refused.
      const template = await diagnostics.fixTemplate(req.user.id, req.params.id, req.params.nodeId, fixType)
      if (yaml.trim() !== template.preview_yaml.trim()) {
        throw new BadRequest('edited YAML is not applied here: a fix edits the workflow graph and the next run deploys it; apply the fix unedited, or change the node in its settings')
      }
    }
    const { workflow, changes } = await diagnostics.applyFix(req.user.id, req.params.id, req.params.nodeId, fixType)
    return { message: `fix ${fixType} applied to the workflow; run it to deploy the change`, workflow: uiWorkflow(workflow), changes }
  })
}
