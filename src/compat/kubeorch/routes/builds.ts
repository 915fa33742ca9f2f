// Builds in the UI's dialect (CONTRACT.md §2.8, §4 "Build"): the UI's camelCase start body, `{build}`
// wrappers holding the camelCase build, and the build stream re-encoded (the full build as `metadata`, log
// lines as `{stage, message, level}`, terminal events with the names the build page reads). The routes call
// the same BuildService methods as src/routes/builds/index.ts and its stream through serveBuildStream.
import { posix } from 'node:path'
import type { FastifyRequest } from 'fastify'
import type { App } from '../../../app-types.ts'
import { BuildParams, StartBuildBody } from '../../../../schemas/build.ts'
import { BadRequest, NotFound } from '../../../errors.ts'
import type { Reframe } from '../../../events/sse.ts'
import type { Build } from '../../../repositories/builds.ts'
import { serveBuildStream } from '../../../routes/builds/index.ts'
import { isErrorLine } from '../../../services/build/progress.ts'
import { toCanonical, withCamelAliases, type Json, isObject } from '../translate.ts'

/** The pinned reference the build page shows once the registry confirmed the push. */
const finalRef = (ref: unknown, digest: unknown) => (typeof ref === 'string' && typeof digest === 'string' ? `${ref}@${digest}` : undefined)

/** Milliseconds from start to finish, which the build page shows for a finished build. */
function durationMs(started: unknown, finished: unknown): number | undefined {
  if (typeof started !== 'string' || typeof finished !== 'string') return undefined
  const ms = Date.parse(finished) - Date.parse(started)
  return Number.isFinite(ms) && ms >= 0 ? ms : undefined
}

/**
 * A build as the UI reads it (its `Build` type): ours with camelCase aliases, plus its own names. This
 * service builds from a Dockerfile with BuildKit, never with Nixpacks, hence `useNixpacks: false`.
 */
export function uiBuild(build: Build | Json): Json {
  const b = build as Json
  return {
    ...withCamelAliases({ ...b }),
    repoUrl: b.repo_url, branch: b.branch ?? '', commitSha: b.commit ?? undefined, buildContext: b.context_dir, buildArgs: b.build_args,
    useNixpacks: false, currentStage: b.phase ?? '', finalImageRef: b.status === 'completed' ? finalRef(b.image_ref, b.image_digest) : undefined,
    errorMessage: b.error ?? undefined, errorStage: b.status === 'failed' ? (b.phase ?? undefined) : undefined, completedAt: b.finished_at ?? undefined,
    duration: durationMs(b.started_at, b.finished_at),
  }
}

/**
 * The build stream for the build page (useBuildStream): it reads each event's fields at the top level or
 * under `data`; ours go at the top level with the UI's names beside ours. Defined once (the SSE layer caches
 * encodings per reframe function).
 */
export const reframeBuildEvent: Reframe = (type, data) => {
  const d = isObject(data) ? data : {}
  switch (type) {
    case 'metadata': return { type, data: uiBuild(d) }
    case 'progress': return { type, data: { ...d, currentStage: d.phase ?? '', current_stage: d.phase ?? '' } }
    case 'log': {
      const line = typeof d.line === 'string' ? d.line : ''
      return { type, data: { ...d, stage: d.phase ?? '', message: line, level: isErrorLine(line) ? 'error' : 'info' } }
    }
    case 'complete': {
      const ref = finalRef(d.image_ref, d.image_digest)
      return { type, data: { ...d, finalImageRef: ref, final_image_ref: ref, imageDigest: d.image_digest } }
    }
    case 'failed': return { type, data: { ...d, errorMessage: d.error, error_message: d.error, errorStage: d.phase, error_stage: d.phase } }
    default: return { type, data }
  }
}

/** A path the UI names from the repository root (its Dockerfile field), relative to the build context as ours are. */
function inContext(dockerfile: string, context: string): string {
  const dir = posix.normalize(context || '.').replace(/\/+$/, '')
  if (dir === '.' || dir === '') return dockerfile
  // Outside the context this gives a `..` path, which the canonical check refuses with a clear 400.
  return posix.relative(dir, posix.normalize(dockerfile))
}

/**
 * The UI's start body as this API's. The UI sends no cluster: the caller's default cluster runs the build.
 * It links a build to a workflow by `workflowId` alone (the import flow, for a workload waiting for its
 * image): the workflow's one node marked `needsBuild` (the one built from this repository, when several)
 * is the node whose image the build sets. `useNixpacks` has no counterpart here (builds use the context's
 * Dockerfile) and is dropped; empty inputs mean the defaults.
 */
async function canonicalStart(app: App, req: FastifyRequest): Promise<void> {
  if (!isObject(req.body)) return
  const body = toCanonical(req.body, { buildContext: 'context_dir', commitSha: 'commit' }) as Json
  if (typeof body.use_nixpacks === 'boolean') delete body.use_nixpacks
  for (const key of ['branch', 'image_tag', 'context_dir', 'dockerfile', 'commit', 'workflow_id']) if (body[key] === '' || body[key] === null) delete body[key]
  if (typeof body.dockerfile === 'string') body.dockerfile = inContext(body.dockerfile, typeof body.context_dir === 'string' ? body.context_dir : '.')
  if (body.cluster === undefined) {
    try {
      body.cluster = (await app.services.clusters.getDefault(req.user.id)).id
    } catch (err) {
      if (err instanceof NotFound) throw new BadRequest('no cluster to build in: you have no default cluster; add a cluster first')
      throw err
    }
  }
  if (typeof body.workflow_id === 'string' && body.node_id === undefined) body.node_id = await nodeAwaitingBuild(app, req.user.id, body.workflow_id, body.repo_url)
  req.body = body
}

async function nodeAwaitingBuild(app: App, userId: string, workflowId: string, repoUrl: unknown): Promise<string> {
  const workflow = await app.services.workflows.get(userId, workflowId)
  const waiting = workflow.nodes.filter((n) => isObject(n.data) && n.data.needsBuild === true)
  const fromRepo = waiting.filter((n) => isObject(n.data?.build) && (n.data.build as Json).repoUrl === repoUrl)
  const candidates = fromRepo.length ? fromRepo : waiting
  if (candidates.length === 1) return candidates[0].id
  if (candidates.length === 0) throw new BadRequest('body/workflowId: the workflow has no node waiting for a build (data.needsBuild), so the image would go nowhere')
  throw new BadRequest(`body/workflowId: several nodes of the workflow wait for a build (${candidates.slice(0, 5).map((n) => n.id).join(', ')}); say which with nodeId`)
}

export default async function buildRoutes(app: App) {
  const builds = app.services.builds
  const hide = true

  app.post('/builds/start', {
    schema: { hide, body: StartBuildBody },
    preValidation: async (req) => canonicalStart(app, req),
  }, async (req, reply) => reply.code(201).send({ build: uiBuild(await builds.start(req.user.id, req.body)), message: 'build started' }))

  app.get('/builds/:id', {
    schema: { hide, params: BuildParams },
  }, async (req) => ({ build: uiBuild(await builds.get(req.user.id, req.params.id)) }))

  app.post('/builds/:id/cancel', {
    schema: { hide, params: BuildParams },
  }, async (req) => {
    const build = await builds.cancel(req.user.id, req.params.id)
    return { build: uiBuild(build), message: build.error ?? 'build cancelled' }
  })

  app.get('/builds/:id/stream', {
    schema: { hide, params: BuildParams },
  }, (req, reply) => serveBuildStream(app, req, reply, reframeBuildEvent))
}

