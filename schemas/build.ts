// Image builds as the API shows them (API.md §8) and the events of their stream (API.md §7, `build:<id>`).
import { Type } from 'typebox'
import { Timestamp, Id, StringEnum } from './common.ts'
import { PaginationQuery, PageOf } from './pagination.ts'

export const BUILD_STATUSES = ['pending', 'cloning', 'building', 'pushing', 'completed', 'failed', 'cancelled'] as const
export const BuildStatus = StringEnum(BUILD_STATUSES, {
  description: 'pending → cloning → building → pushing → completed; or failed (at `phase`) or cancelled. A terminal status never changes again',
})
export const BuildPhase = Type.Union([StringEnum(['clone', 'build', 'push']), Type.Null()], {
  description: 'the phase the build is in, or ended in (clone, build, push); null before the pod starts',
})

const BuildArgs = Type.Record(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]{0,127}$' }), Type.String({ maxLength: 4096 }), {
  maxProperties: 64,
  description: 'Dockerfile ARG values (at most 64, 32 KiB in all). Not secret: they are visible in the Job and the builder\'s log',
})

export const StartBuildBody = Type.Object({
  repo_url: Type.String({ minLength: 1, maxLength: 2048, description: 'git repository (https; http only with ALLOW_INSECURE_CLUSTERS); no credentials in the URL; never a link-local or metadata address' }),
  branch: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'branch to build (default: the repository\'s default branch); ignored when `commit` is given' })),
  commit: Type.Optional(Type.String({ pattern: '^(?:[0-9a-f]{40}|[0-9a-f]{64})$', description: 'full commit id to build' })),
  context_dir: Type.Optional(Type.String({ maxLength: 1024, description: 'build context, relative to the repository root (default `.`); no `..`' })),
  dockerfile: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'Dockerfile path relative to `context_dir` (default `Dockerfile`); no `..`' })),
  build_args: Type.Optional(BuildArgs),
  registry_id: Type.String({ minLength: 1, maxLength: 64, description: 'the registry to push to (GET /v1/api/registries); its stored login is used' }),
  image_name: Type.String({ minLength: 1, maxLength: 255, description: 'repository inside the registry, without the host (e.g. `acme/api`)' }),
  image_tag: Type.Optional(Type.String({ pattern: '^[\\w][\\w.-]{0,127}$', description: 'default `latest`' })),
  cluster: Type.String({ minLength: 1, maxLength: 253, description: 'cluster name or id to run the build in (deployer access needed)' }),
  namespace: Type.Optional(Type.String({ minLength: 1, maxLength: 63, description: 'namespace of the build Job (default `default`)' })),
  workflow_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'with node_id: on success, that node\'s image is set to the digest-pinned reference' })),
  node_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
}, { additionalProperties: false })

export const Build = Type.Object({
  id: Id,
  repo_url: Type.String(),
  branch: Type.Union([Type.String(), Type.Null()]),
  commit: Type.Union([Type.String(), Type.Null()]),
  context_dir: Type.String(),
  dockerfile: Type.String({ description: 'repository-relative path of the Dockerfile' }),
  build_args: Type.Record(Type.String(), Type.String()),
  registry_id: Type.String(),
  image_name: Type.String(),
  image_tag: Type.String(),
  cluster: Type.String({ description: 'the cluster\'s name when the build started' }),
  cluster_id: Type.String(),
  namespace: Type.String(),
  workflow_id: Type.Union([Type.String(), Type.Null()]),
  node_id: Type.Union([Type.String(), Type.Null()]),
  status: BuildStatus,
  phase: BuildPhase,
  progress: Type.Integer({ minimum: 0, maximum: 100, description: 'never goes back' }),
  image_ref: Type.Union([Type.String(), Type.Null()], { description: '`host/name:tag` being built' }),
  image_digest: Type.Union([Type.String(), Type.Null()], { description: 'manifest digest, confirmed against the registry; set when completed' }),
  error: Type.Union([Type.String(), Type.Null()]),
  node_updated: Type.Union([Type.Boolean(), Type.Null()], { description: 'whether the workflow node\'s image was set (null when no node was named)' }),
  job_name: Type.String({ description: 'the Job in the cluster (kept until BUILD_TTL_AFTER_FINISHED_S after it ends)' }),
  logs_truncated: Type.Boolean({ description: 'the kept log left lines out (BUILD_LOG_MAX_LINES / BUILD_LOG_MAX_BYTES)' }),
  created_at: Timestamp,
  started_at: Type.Union([Timestamp, Type.Null()], { description: 'when the Job was created' }),
  finished_at: Type.Union([Timestamp, Type.Null()]),
  updated_at: Timestamp,
}, { $id: 'Build', additionalProperties: false, description: 'an image build' })

export const BuildParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) })
export const BuildListQuery = PaginationQuery(['created_at', 'finished_at', 'status', 'image_name', 'updated_at'], {
  status: Type.Optional(BuildStatus),
  workflow_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
})
export const BuildList = PageOf('builds', Type.Ref('Build'))

// Stream events

export const BuildProgressEvent = Type.Object({ status: BuildStatus, phase: BuildPhase, progress: Type.Integer({ minimum: 0, maximum: 100 }) }, { additionalProperties: false })
export const BuildLogEvent = Type.Object({
  phase: StringEnum(['clone', 'build', 'push']),
  line: Type.String({ description: 'one line, secrets masked as [redacted]' }),
  timestamp: Timestamp,
}, { additionalProperties: false })
export const BuildCompleteEvent = Type.Object({ image_ref: Type.String(), image_digest: Type.String() }, { additionalProperties: false })
export const BuildFailedEvent = Type.Object({ error: Type.String(), phase: BuildPhase }, { additionalProperties: false })
export const BuildCancelledEvent = Type.Object({}, { additionalProperties: false })

export const buildStreamDoc = {
  description: [
    'Server-Sent Events. Frames: `id: <n>\\nevent: <type>\\ndata: <one line of JSON>\\n\\n` (LF only); the first frame also carries `retry: 3000` and is the `metadata` event (the build); a `: ping` comment comes every SSE_HEARTBEAT_MS. Send `Authorization: Bearer <token>`.',
    'The log kept so far is replayed first (`log` events), then what happens next. Events: `progress {status, phase, progress}`, `log {phase, line, timestamp}`, `metadata` again (the whole build) when the build starts and when it ends, and one terminal event — `complete {image_ref, image_digest}`, `failed {error, phase}` or `cancelled {}` — after which the response ends. A finished build\'s stream replays its log, sends its terminal event and ends.',
    'A client reconnecting with `Last-Event-ID` gets the events it missed that are still in the replay window instead of the whole log.',
  ].join('\n\n'),
  events: {
    metadata: { description: 'the build as GET /v1/api/builds/{id} returns it: first, then again when it gains a timestamp (`started_at` once its Job is made, `finished_at` just before the terminal event), so a stream opened while it was pending learns when it started', schema: { $ref: '#/components/schemas/Build' } },
    progress: { description: 'status, phase or progress changed', schema: BuildProgressEvent },
    log: { description: 'one log line of the build pod', schema: BuildLogEvent },
    complete: { description: 'pushed and confirmed against the registry', schema: BuildCompleteEvent },
    failed: { description: 'the build failed', schema: BuildFailedEvent },
    cancelled: { description: 'the build was cancelled', schema: BuildCancelledEvent },
  },
}
