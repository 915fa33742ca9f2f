// Import sessions and their routes (API.md §8 "Import", §7 `import:<id>`). The analysis shape itself is in
// schemas/import-analysis.ts.
import { Type } from 'typebox'
import { Id, StringEnum, Timestamp } from './common.ts'
import { AnalysisSchema, ImportOptionsSchema, MAX_COMPOSE_BYTES } from './import-analysis.ts'

export const ImportStatusSchema = StringEnum(['pending', 'cloning', 'analyzing', 'completed', 'failed'], {
  description: 'pending → (git: cloning →) analyzing → completed or failed',
})

export const ImportSessionSchema = Type.Object({
  id: Id,
  source: StringEnum(['compose', 'git']),
  status: ImportStatusSchema,
  progress: Type.Integer({ minimum: 0, maximum: 100 }),
  message: Type.String({ description: 'what the session is doing now, or how it ended' }),
  error: Type.Union([Type.String(), Type.Null()], { description: 'why it failed (status failed)' }),
  analysis: Type.Optional(AnalysisSchema),
  filename: Type.Union([Type.String(), Type.Null()], { description: 'compose upload: the file\'s name' }),
  url: Type.Union([Type.String(), Type.Null()], { description: 'git: the repository' }),
  branch: Type.Union([Type.String(), Type.Null()], { description: 'git: the branch asked for, or the default branch fetched' }),
  path: Type.Union([Type.String(), Type.Null()], { description: 'git: the folder looked in' }),
  commit: Type.Union([Type.String(), Type.Null()], { description: 'git: the commit analysed' }),
  logs: Type.Array(Type.String(), { description: 'the session\'s log lines (the last 500)' }),
  created_at: Timestamp,
  updated_at: Timestamp,
  finished_at: Type.Union([Timestamp, Type.Null()]),
  expires_at: Type.String({ format: 'date-time', description: 'the session and its analysis are deleted after this (IMPORT_SESSION_TTL_S)' }),
}, { $id: 'ImportSession', additionalProperties: false, description: 'an import session; `analysis` is present once it completed' })

const RepoPath = Type.String({ maxLength: 1024, pattern: '^(?!/)(?!.*(^|/)\\.\\.(/|$))[^\\u0000]*$', description: 'folder inside the repository holding the compose file (no leading slash, no ..)' })

export const AnalyzeBody = Type.Object({
  source: StringEnum(['compose', 'git']),
  content: Type.Optional(Type.String({ minLength: 1, description: `compose: the compose file (YAML), at most ${MAX_COMPOSE_BYTES} bytes (413 otherwise)` })),
  url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'git: https URL of the repository (http only when ALLOW_INSECURE_CLUSTERS)' })),
  branch: Type.Optional(Type.String({ minLength: 1, maxLength: 255, pattern: '^(?!-)(?!.*\\.\\.)[^\\s~^:?*\\[\\\\\\u0000-\\u001f]+$', description: 'git: branch (default: the repository\'s default branch)' })),
  path: Type.Optional(RepoPath),
  token: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'git: a token that may read a private repository; used for this fetch only, never stored or returned' })),
  username: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'git: the user name sent with `token` (default `x-access-token`, which GitHub expects; GitLab accepts `oauth2`)' })),
  ...ImportOptionsSchema.properties,
}, { additionalProperties: false })

/** Documents the multipart body of POST /import/upload; the handler reads and checks the parts itself. */
export const UploadBody = Type.Object({
  file: Type.String({ format: 'binary', description: `the compose file (at most ${MAX_COMPOSE_BYTES} bytes)` }),
  profiles: Type.Optional(Type.String({ description: 'comma-separated active profiles' })),
  ingress: Type.Optional(Type.String({ description: '`true`, `false`, or a host name (each service answers at <service>.<host>)' })),
  env_file: Type.Optional(Type.String({ description: 'content of a .env file for interpolation' })),
  env: Type.Optional(Type.String({ description: 'a JSON object of interpolation variables' })),
}, { description: 'multipart/form-data' })

export const ApplyBody = Type.Object({
  import_id: Id,
  workflow_id: Id,
  mode: StringEnum(['merge', 'replace'], { description: 'merge: add the imported nodes beside the existing ones (ids and names made unique); replace: the imported graph replaces the workflow\'s' }),
}, { additionalProperties: false })

export const CreateWorkflowFromImportBody = Type.Object({
  import_id: Id,
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Type.String({ maxLength: 5000 })),
  cluster_id: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 253 }), Type.Null()], { description: 'id or name of a cluster the caller may deploy to' })),
}, { additionalProperties: false })

export const ImportParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) })

// Stream events (API.md §7).
export const ImportProgressEvent = Type.Object({ status: ImportStatusSchema, progress: Type.Integer({ minimum: 0, maximum: 100 }), message: Type.String() }, { additionalProperties: false })
export const ImportLogEvent = Type.Object({ line: Type.String() }, { additionalProperties: false })
export const ImportCompleteEvent = Type.Object({ analysis: AnalysisSchema }, { additionalProperties: false })
export const ImportFailedEvent = Type.Object({ error: Type.String() }, { additionalProperties: false })
