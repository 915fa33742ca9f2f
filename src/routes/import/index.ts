// Import (spec "Import", API.md §8): analyse a compose file or a Git repository into a workflow graph, follow
// the session, then apply the graph to a workflow or make a new workflow of it. Owner-scoped throughout:
// another user's session or workflow answers 404. The work itself is in src/services/import-service.ts.
import multipart from '@fastify/multipart'
import { Type } from 'typebox'
import { Value } from 'typebox/value'
import type { FastifyRequest } from 'fastify'
import type { App } from '../../app-types.ts'
import { errorResponses } from '../../../schemas/common.ts'
import { AnalyzeBody, ApplyBody, CreateWorkflowFromImportBody, ImportParams, UploadBody } from '../../../schemas/import.ts'
import { ImportOptionsSchema, MAX_COMPOSE_BYTES, type ImportOptions } from '../../../schemas/import-analysis.ts'
import { BadRequest, AppError } from '../../errors.ts'
import { ImportTooLarge } from '../../services/import/index.ts'
import { validatorCompiler } from '../../validation.ts'
import importStreamRoutes from './stream.ts'
import { sessionJson } from './session-json.ts'

const tags = ['import']
const Session = Type.Ref('ImportSession')
const WorkflowRef = Type.Ref('Workflow')
/** Option fields an upload may carry besides the file, each at most this long (env_file is a whole .env file). */
const MAX_UPLOAD_FIELD_BYTES = MAX_COMPOSE_BYTES
const UPLOAD_FIELDS = new Set(['profiles', 'ingress', 'env_file', 'env'])
/** @fastify/multipart's limits for an upload (the KubeOrch UI adapter registers the plugin with them too). */
export const UPLOAD_LIMITS = { fileSize: MAX_COMPOSE_BYTES, files: 1, fields: UPLOAD_FIELDS.size, fieldSize: MAX_UPLOAD_FIELD_BYTES, parts: UPLOAD_FIELDS.size + 1, headerPairs: 100 }

export default async function importRoutes(app: App) {
  const service = app.services.imports
  // Registered in this scope (and in the UI adapter's import scope), not app-wide: no other route takes multipart bodies.
  await app.register(multipart, { limits: UPLOAD_LIMITS })

  app.post('/v1/api/import/analyze', {
    schema: {
      tags, operationId: 'analyzeImport',
      summary: 'start analysing a compose file (`source: compose`, `content`) or a Git repository (`source: git`, `url`, `branch?`, `path?`, `token?`); answers the pending session at once',
      description: 'Follow the session with GET /v1/api/import/{id}/stream (or poll GET /v1/api/import/{id}). A Git URL must be https (http only when ALLOW_INSECURE_CLUSTERS) and may not point at link-local or cloud metadata addresses. A `token` is used for this fetch only and is never stored or returned.',
      body: AnalyzeBody,
      response: { 201: Session, ...errorResponses(400, 401, 413, 503) },
    },
  }, async (req, reply) => reply.code(201).send((await service.analyze(req.user.id, req.body)).session))

  app.post('/v1/api/import/upload', {
    schema: {
      tags, operationId: 'uploadImport', summary: 'upload a compose file (multipart/form-data, field `file`) and start analysing it; answers the pending session at once',
      description: `The file is at most ${MAX_COMPOSE_BYTES} bytes (413 otherwise). Optional fields: \`profiles\` (comma-separated), \`ingress\` (\`true\`, \`false\` or a host), \`env_file\` (.env content), \`env\` (a JSON object of variables).`,
      consumes: ['multipart/form-data'],
      body: UploadBody,
      response: { 201: Session, ...errorResponses(400, 401, 413, 415, 503) },
    },
    // The multipart body is read and checked by the handler; the schema documents it.
    validatorCompiler: (route) => (route.httpPart === 'body' ? () => true : validatorCompiler(route)),
  }, async (req, reply) => {
    const { upload } = await readUpload(req)
    return reply.code(201).send((await service.analyze(req.user.id, { source: 'compose', ...upload })).session)
  })

  app.post('/v1/api/import/apply', {
    schema: {
      tags, operationId: 'applyImport',
      summary: 'put a completed import\'s graph into a workflow: `merge` adds it beside the existing nodes (ids and names made unique), `replace` swaps the graph',
      body: ApplyBody,
      response: { 200: WorkflowRef, ...errorResponses(400, 401, 404, 409) },
    },
  }, async (req) => service.apply(req.user.id, req.body))

  app.post('/v1/api/import/create-workflow', {
    schema: {
      tags, operationId: 'createWorkflowFromImport', summary: 'a new draft workflow holding a completed import\'s graph',
      body: CreateWorkflowFromImportBody,
      response: { 201: WorkflowRef, ...errorResponses(400, 401, 404, 409) },
    },
  }, async (req, reply) => reply.code(201).send(await service.createWorkflow(req.user.id, req.body)))

  // The session's JSON is made here (session-json.ts), its analysis as the stored text: a large analysis
  // through the response serializer held the event loop. The shape is the schema's.
  app.get('/v1/api/import/:id', {
    schema: {
      tags, operationId: 'getImport', summary: 'an import session: status, progress, log and, once completed, the analysis',
      params: ImportParams,
      response: { 200: Session, ...errorResponses(401, 404) },
    },
  }, async (req, reply) => reply.type('application/json; charset=utf-8').send(sessionJson(await service.get(req.user.id, req.params.id)).text))

  await app.register(importStreamRoutes)
}

export interface Upload extends ImportOptions { content: string; filename?: string }

/**
 * The compose file and option fields of a multipart upload, checked; every failure is a 400, 413 or 415
 * `{error}`. `otherFields` are fields another dialect sends (the KubeOrch UI adapter), answered apart in `extra`.
 */
export async function readUpload(req: FastifyRequest, otherFields: readonly string[] = []): Promise<{ upload: Upload; extra: Record<string, string> }> {
  if (!req.isMultipart()) throw new AppError(415, 'send the compose file as multipart/form-data, in the field `file`')
  let content: string | undefined
  let filename: string | undefined
  const fields: Record<string, string> = {}
  const extra: Record<string, string> = {}
  try {
    for await (const part of req.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file') {
          part.file.resume()
          throw new BadRequest(`unexpected file field "${part.fieldname.slice(0, 64)}": send the compose file in the field \`file\``)
        }
        const bytes = await part.toBuffer()
        if (part.file.truncated) throw tooLarge()
        content = bytes.toString('utf8')
        filename = part.filename ? part.filename.slice(0, 255) : undefined
      } else if (otherFields.includes(part.fieldname) && !part.valueTruncated) {
        extra[part.fieldname] = String(part.value)
      } else {
        if (!UPLOAD_FIELDS.has(part.fieldname)) throw new BadRequest(`unexpected field "${part.fieldname.slice(0, 64)}": the fields are file, ${[...UPLOAD_FIELDS].join(', ')}`)
        if (part.valueTruncated) throw new ImportTooLarge(`field ${part.fieldname} is longer than ${MAX_UPLOAD_FIELD_BYTES} bytes`)
        fields[part.fieldname] = String(part.value)
      }
    }
  } catch (err) {
    throw uploadError(err)
  }
  if (content === undefined) throw new BadRequest('the compose file is missing: send it in the multipart field `file`')
  if (content.trim() === '') throw new BadRequest('the uploaded compose file is empty')
  return { upload: { content, ...(filename && { filename }), ...uploadOptions(fields) }, extra }
}

function tooLarge(): ImportTooLarge {
  return new ImportTooLarge(`the compose file is larger than ${MAX_COMPOSE_BYTES} bytes`)
}

/** Multipart's own errors (limits, malformed bodies) in our words and documented statuses. */
function uploadError(err: unknown): AppError {
  if (err instanceof AppError) return err
  const code = (err as { code?: unknown })?.code
  if (code === 'FST_REQ_FILE_TOO_LARGE') return tooLarge()
  if (code === 'FST_FILES_LIMIT') return new BadRequest('send one file, in the field `file`')
  if (code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') return new BadRequest(`too many fields: the fields are file, ${[...UPLOAD_FIELDS].join(', ')}`)
  if (code === 'FST_INVALID_MULTIPART_CONTENT_TYPE') return new AppError(415, 'send the compose file as multipart/form-data, in the field `file`')
  return new BadRequest('the multipart body could not be read')
}

/** The option fields as the analysis takes them, checked against the same schema as analyze's body. */
function uploadOptions(fields: Record<string, string>): ImportOptions {
  const options: Record<string, unknown> = {}
  if (fields.profiles !== undefined) options.profiles = fields.profiles.split(',').map((p) => p.trim()).filter(Boolean)
  if (fields.ingress !== undefined) {
    const value = fields.ingress.trim()
    options.ingress = value === 'true' ? true : value === 'false' || value === '' ? false : { host: value }
  }
  if (fields.env_file !== undefined) options.env_file = fields.env_file
  if (fields.env !== undefined) {
    try { options.env = JSON.parse(fields.env) } catch { throw new BadRequest('field env must be a JSON object of variables, e.g. {"TAG":"1.2"}') }
  }
  const first = Value.Errors(ImportOptionsSchema, options)[0]
  if (first) throw new BadRequest(`field ${first.instancePath.split('/')[1] || 'options'}${first.instancePath.split('/').slice(2).map((s) => `/${s}`).join('')} ${first.message}`)
  return options as ImportOptions
}
