// Import in the UI's dialect (CONTRACT.md §2.9, §4 "Import"; OBSERVED rows 18, 18b). The UI wants a compose
// upload analysed within the request, so the upload starts the same session as /v1/api and waits for it
// (never longer than the analysis may take, WORKER_JOB_TIMEOUT_MS, plus a margin); a Git analysis answers
// `{async, sessionId}` and is followed on the session's stream, reframed. The analysis is translated for
// the canvas by ../import-analysis.ts. create-workflow takes the analysis back (the UI keeps it, and may
// merge several) and makes the workflow through ImportService.createWorkflowWithGraph, which checks the
// graph as a save does. Owner-scoped as the canonical routes are: another user's session answers 404.
import multipart from '@fastify/multipart'
import { Type } from 'typebox'
import type { FastifyRequest } from 'fastify'
import type { App } from '../../../app-types.ts'
import { AnalyzeBody, ImportParams } from '../../../../schemas/import.ts'
import { CreateWorkflowBody, SaveWorkflowBody } from '../../../../schemas/workflow.ts'
import type { AnalysisDocument } from '../../../../schemas/import-analysis.ts'
import { AppError, BadRequest, Unavailable } from '../../../errors.ts'
import type { Reframe } from '../../../events/sse.ts'
import { readUpload, UPLOAD_LIMITS } from '../../../routes/import/index.ts'
import { serveImportStream } from '../../../routes/import/stream.ts'
import type { ImportSession } from '../../../repositories/import-sessions.ts'
import type { GraphEdge, GraphNode } from '../../../services/workflow-graph.ts'
import { validatorCompiler } from '../../../validation.ts'
import { uiAnalysis } from '../import-analysis.ts'
import { withCamelAliases, type Json, isObject } from '../translate.ts'

/** The UI's Git sources (derived from the URL); all are one Git import here. */
const GIT_SOURCES = new Set(['github', 'gitlab', 'git_url'])
/** The namespace the UI's import dialog may choose for the generated nodes (a DNS label). */
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/
/** Beyond the analysis's own limit, what an upload may wait for a free import slot. */
const QUEUE_MARGIN_MS = 5000

function namespaceOf(value: unknown): string {
  if (value === undefined || value === '') return 'default'
  if (typeof value !== 'string' || !NAMESPACE.test(value)) throw new BadRequest('namespace must be a DNS label (lower-case letters, digits, -)')
  return value
}

/** An import session as the UI's import stream reads it (`ImportSession`): ours plus its names. */
function uiSession(session: Json): Json {
  const { analysis, ...rest } = session
  return {
    ...withCamelAliases(rest), currentStage: rest.message ?? '', errorMessage: rest.error ?? undefined,
    ...(isObject(analysis) && { analysis: uiAnalysis(analysis as AnalysisDocument) }),
  }
}

/** The import stream for useImportStream: fields at the top level, the UI's names beside ours. Defined once (encodings are cached per reframe). */
export const reframeImportEvent: Reframe = (type, data) => {
  const d = isObject(data) ? data : {}
  switch (type) {
    case 'metadata': return { type, data: uiSession(d) }
    case 'progress': return { type, data: { ...d, current_stage: d.message ?? '', currentStage: d.message ?? '' } }
    case 'log': return { type, data: { ...d, message: d.line ?? '', stage: '', level: 'info' } }
    case 'complete': return { type, data: isObject(d.analysis) ? { analysis: uiAnalysis(d.analysis as AnalysisDocument) } : d }
    case 'failed': return { type, data: { ...d, error_message: d.error, errorMessage: d.error } }
    default: return { type, data }
  }
}

/** The finished session's analysis, or the reason it has none as an error of the request. */
function analysisOf(session: ImportSession): AnalysisDocument {
  if (session.status === 'completed' && session.analysis) return JSON.parse(session.analysis.text) as AnalysisDocument
  const error = session.error ?? 'the analysis failed'
  if (error.startsWith('interrupted')) throw new Unavailable(error)
  // A file the analysis could not finish within its budget: the worker pool's own status (JobOverrun).
  if (error.includes('WORKER_JOB_TIMEOUT_MS')) throw new AppError(422, error)
  throw new BadRequest(error)
}

const CreateFromAnalysisBody = Type.Object({
  name: CreateWorkflowBody.properties.name,
  description: CreateWorkflowBody.properties.description,
  cluster_id: CreateWorkflowBody.properties.cluster_id,
  nodes: SaveWorkflowBody.properties.nodes,
  edges: SaveWorkflowBody.properties.edges,
}, { additionalProperties: false })

/** `{name, clusterId, analysis}` as a workflow to create with the analysis's (possibly edited) canvas graph. */
function canonicalCreate(req: FastifyRequest): void {
  const body = req.body
  if (!isObject(body)) return
  const { analysis, clusterId, ...rest } = body
  if (!isObject(analysis) || !Array.isArray(analysis.suggestedNodes)) throw new BadRequest('body/analysis must be an import analysis with suggestedNodes (and suggestedEdges)')
  req.body = {
    ...rest,
    ...(clusterId !== undefined && clusterId !== '' && { cluster_id: clusterId }),
    nodes: analysis.suggestedNodes,
    edges: analysis.suggestedEdges ?? [],
  }
}

export default async function importRoutes(app: App) {
  const service = app.services.imports
  const hide = true
  // Encapsulated in this plugin, as on /v1/api; one more field: the dialog's target namespace.
  await app.register(multipart, { limits: { ...UPLOAD_LIMITS, fields: UPLOAD_LIMITS.fields + 1, parts: UPLOAD_LIMITS.parts + 1 } })

  app.post('/import/upload', {
    schema: { hide },
    // The multipart body is read and checked by readUpload, as on /v1/api.
    validatorCompiler: (route) => (route.httpPart === 'body' ? () => true : validatorCompiler(route)),
  }, async (req) => {
    const { upload, extra } = await readUpload(req, ['namespace'])
    const namespace = namespaceOf(extra.namespace)
    const { session, done } = await service.analyze(req.user.id, { source: 'compose', ...upload })
    const limitMs = app.config.WORKER_JOB_TIMEOUT_MS + QUEUE_MARGIN_MS
    let timer: NodeJS.Timeout | undefined
    const finished = await Promise.race([done, new Promise<null>((resolve) => { timer = setTimeout(() => resolve(null), limitMs) })]).finally(() => clearTimeout(timer))
    if (!finished) throw new Unavailable(`the analysis did not finish within ${limitMs} ms (the service is busy); follow it on GET /import/${session.id}/stream or try again`)
    return {
      analysis: uiAnalysis(analysisOf(finished), namespace),
      sessionId: session.id,
      fileName: upload.filename ?? 'docker-compose.yml',
      fileSize: Buffer.byteLength(upload.content),
      // The caller's own file, answered to the same request (the UI shows it beside the preview); never stored.
      fileContent: upload.content,
    }
  })

  app.post('/import/analyze', {
    schema: { hide, body: AnalyzeBody },
    preValidation: async (req) => {
      if (!isObject(req.body)) return
      // The in-canvas dialog also sends its workflowId and target namespace: both are the canvas's business
      // (the dialog hands them to its preview, which places the nodes), not the analysis's.
      const { source, workflowId: _workflow, namespace, ...rest } = req.body as Json
      namespaceOf(namespace)
      req.body = { ...rest, source: typeof source === 'string' && GIT_SOURCES.has(source) ? 'git' : source } as typeof req.body
    },
  }, async (req, reply) => {
    const { session } = await service.analyze(req.user.id, req.body)
    return reply.code(201).send({ async: true, sessionId: session.id, message: 'analysing the repository: follow the session\'s stream' })
  })

  app.get('/import/:id/stream', {
    schema: { hide, params: ImportParams },
  }, (req, reply) => serveImportStream(app, req, reply, reframeImportEvent))

  app.post('/import/create-workflow', {
    schema: { hide, body: CreateFromAnalysisBody },
    preValidation: async (req) => canonicalCreate(req),
  }, async (req, reply) => {
    const { nodes, edges, ...fields } = req.body
    const workflow = await service.createWorkflowWithGraph(req.user.id, fields, { nodes: nodes as GraphNode[], edges: edges as GraphEdge[] })
    return reply.code(201).send({ workflow, message: 'workflow created' })
  })
}
