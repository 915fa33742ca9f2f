// GET /v1/api/workflows/:id/manifests: the workflow's objects as they would be applied, for `kubectl apply
// -f -` or a GitOps repository. YAML unless the client asks for JSON; never any secret value.
import { Type } from 'typebox'
import type { App } from '../../app-types.ts'
import { errorResponses, StringEnum } from '../../../schemas/common.ts'
import { WorkflowParams } from '../../../schemas/workflow.ts'
import { AppError } from '../../errors.ts'

const DNS_LABEL = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'

const ManifestQuery = Type.Object({
  namespace: Type.Optional(Type.String({ minLength: 1, maxLength: 63, pattern: DNS_LABEL, description: 'preview with a run\'s namespace override: every object goes to this namespace' })),
})

// A Kubernetes object is a free-form document by nature (any kind, including custom resources); what every
// one of them has is typed.
const KubeObject = Type.Object({
  apiVersion: Type.String(), kind: Type.String(),
  metadata: Type.Object({
    name: Type.String(), namespace: Type.Optional(Type.String()),
    labels: Type.Optional(Type.Record(Type.String(), Type.String())), annotations: Type.Optional(Type.Record(Type.String(), Type.String())),
  }, { additionalProperties: true }),
}, { additionalProperties: true, description: 'a Kubernetes object, as it would be applied' })

const Diagnostic = Type.Object({
  node_id: Type.String({ description: 'the canvas node it concerns' }),
  severity: StringEnum(['error', 'warning'], { description: 'an error means the node renders no object; a warning never blocks' }),
  message: Type.String({ description: 'names the field or edge at fault' }),
}, { additionalProperties: false })

const ManifestPreview = Type.Object({
  workflow_id: Type.String(),
  namespace: Type.Union([Type.String(), Type.Null()], { description: 'the namespace override, if one was asked for' }),
  objects: Type.Array(Type.Object({ node_id: Type.String(), object: KubeObject }, { additionalProperties: false }), { description: 'in apply order' }),
  diagnostics: Type.Array(Diagnostic),
}, { additionalProperties: false })

const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml']
const ANY_YAML = ['*/*', 'application/*', 'text/*']

/** The representation the Accept header prefers (q-values honoured), YAML when it names none; null when it names only others. */
export function negotiate(accept: string | undefined): 'yaml' | 'json' | null {
  if (!accept || accept.trim() === '') return 'yaml'
  let best: { format: 'yaml' | 'json'; q: number; specific: boolean } | null = null
  for (const part of accept.split(',')) {
    const [type, ...params] = part.trim().toLowerCase().split(';').map((s) => s.trim())
    const qParam = params.find((p) => p.startsWith('q='))
    const q = qParam ? Number(qParam.slice(2)) : 1
    if (!(q > 0)) continue
    const format = YAML_TYPES.includes(type) || ANY_YAML.includes(type) ? 'yaml' : type === 'application/json' ? 'json' : null
    if (!format) continue
    const specific = !ANY_YAML.includes(type)
    if (!best || q > best.q || (q === best.q && specific && !best.specific)) best = { format, q, specific }
  }
  return best?.format ?? null
}

export default async function manifestRoutes(app: App) {
  const service = app.services.manifests

  app.get('/v1/api/workflows/:id/manifests', {
    schema: {
      tags: ['workflows'], operationId: 'getWorkflowManifests',
      summary: 'the workflow rendered to Kubernetes objects in apply order (YAML by default, or JSON)',
      description: 'Multi-document YAML (`Accept: application/yaml`, also when Accept is missing or `*/*`): per-node errors and warnings as leading `#` comments, then one `---` document per object, ready for `kubectl apply -f -`. `Accept: application/json` answers the objects with their node ids and the diagnostics. A node with an error renders no object; warnings never block. Secret values never appear: secrets show their keys with empty values.',
      params: WorkflowParams, querystring: ManifestQuery,
      response: {
        200: {
          description: 'the rendered objects',
          content: {
            // What a YAML parser reads, not the text: each document is one object; a reply of comments only
            // (no object rendered) is an empty stream, which parses as null.
            'application/yaml': { schema: Type.Union([KubeObject, Type.Null()], { description: 'multi-document YAML: one Kubernetes object per `---` document in apply order, diagnostics as leading `#` comments. Each document parses as a Kubernetes object; a workflow that renders no object answers comments only, which parses as null' }) },
            'application/json': { schema: ManifestPreview },
          },
        },
        ...errorResponses(400, 401, 404),
        406: Type.Ref('ErrorResponse', { description: 'Accept names neither YAML nor JSON' }),
        422: Type.Ref('ErrorResponse', { description: 'the workflow took longer to render than WORKER_JOB_TIMEOUT_MS allows (or more memory than one job may use)' }),
        503: Type.Ref('ErrorResponse', { description: 'every worker thread is busy and their queue is full, or the service is shutting down' }),
      },
    },
  }, async (req, reply) => {
    const format = negotiate(req.headers.accept)
    if (!format) throw new AppError(406, 'this route answers application/yaml or application/json')
    // The text is made with the render (on a worker thread for a large graph): serializing a large preview
    // here would hold the event loop as long as rendering it did.
    const body = await service.preview(req.user.id, req.params.id, format, { namespace: req.query.namespace })
    reply.header('vary', 'accept')
    return reply.type(format === 'json' ? 'application/json; charset=utf-8' : 'application/yaml; charset=utf-8').send(body)
  })
}
