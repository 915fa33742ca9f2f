// What a compose file or a repository becomes (API.md §8 "Import"): the services found, the canvas nodes and
// edges generated for them (laid out), and what could not be converted. The analysis is pure data; the
// import session stores it and the apply step copies its nodes and edges into a workflow.
import { Type, type Static } from 'typebox'
import { StringEnum } from './common.ts'
import { CanvasEdge, CanvasNode } from './nodes.ts'

/** Largest compose file (or .env / env_file content) the analysis reads, in bytes. Uploads use the same bound. */
export const MAX_COMPOSE_BYTES = 1024 * 1024
/** Most interpolation variables a request may carry (env), and the longest value. */
export const MAX_IMPORT_ENV_VARS = 1000
export const MAX_IMPORT_ENV_VALUE = 16 * 1024

export const ImportOptionsSchema = Type.Object({
  env: Type.Optional(Type.Record(
    Type.String({ minLength: 1, maxLength: 256, pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }),
    Type.String({ maxLength: MAX_IMPORT_ENV_VALUE }),
    { maxProperties: MAX_IMPORT_ENV_VARS, additionalProperties: false, description: 'variables for ${VAR} interpolation; they win over env_file. Used for this analysis only: sensitive values never reach the generated nodes' },
  )),
  env_file: Type.Optional(Type.String({ maxLength: MAX_COMPOSE_BYTES, description: 'content of a .env file (KEY=value lines) for interpolation' })),
  profiles: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 128, pattern: '^[a-zA-Z0-9][a-zA-Z0-9_.-]*$' }), {
    maxItems: 100, uniqueItems: true, description: 'active profiles ("*" is not special); default: only services without profiles',
  })),
  ingress: Type.Optional(Type.Union([
    Type.Boolean(),
    Type.Object({ host: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$' })) }, { additionalProperties: false }),
  ], { description: 'also generate an Ingress for each service with published ports; with host, each answers at <service>.<host>' })),
}, { additionalProperties: false })
export type ImportOptions = Static<typeof ImportOptionsSchema>

export const AnalysisIssueSchema = Type.Object({
  service: Type.Optional(Type.String({ description: 'the compose service (absent for file-level issues)' })),
  key: Type.Optional(Type.String({ description: 'the compose key, e.g. volumes, privileged, network_mode, deploy.placement' })),
  message: Type.String(),
}, { additionalProperties: false })
export type AnalysisIssue = Static<typeof AnalysisIssueSchema>

const DependsOn = Type.Object({
  service: Type.String(),
  condition: StringEnum(['service_started', 'service_healthy', 'service_completed_successfully']),
}, { additionalProperties: false })

const PortMapping = Type.Object({
  target: Type.Integer({ minimum: 1, maximum: 65535, description: 'container port' }),
  published: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535, description: 'host port in compose; the Kubernetes service port' })),
  protocol: StringEnum(['TCP', 'UDP', 'SCTP']),
  internal: Type.Boolean({ description: 'true for `expose` (cluster-internal only)' }),
}, { additionalProperties: false })

export const AnalysisServiceSchema = Type.Object({
  name: Type.String({ description: 'the compose service name' }),
  resource_name: Type.String({ description: 'the Kubernetes name derived from it (a DNS label)' }),
  kind: StringEnum(['deployment', 'statefulset', 'daemonset'], { description: 'statefulset when it keeps data in a named volume; daemonset for deploy.mode global' }),
  image: Type.Optional(Type.String()),
  needs_build: Type.Boolean({ description: 'true when the service has build: and no image; its workload node carries data.needsBuild and data.build' }),
  build: Type.Optional(Type.Object({
    context: Type.String(), dockerfile: Type.Optional(Type.String()), target: Type.Optional(Type.String()),
    repo_url: Type.Optional(Type.String()), branch: Type.Optional(Type.String()),
  }, { additionalProperties: false })),
  node_ids: Type.Array(Type.String(), { description: 'ids of the nodes generated for this service, workload first' }),
  depends_on: Type.Array(DependsOn),
  ports: Type.Array(PortMapping),
  profiles: Type.Array(Type.String()),
  replicas: Type.Integer({ minimum: 0 }),
}, { additionalProperties: false })
export type AnalysisService = Static<typeof AnalysisServiceSchema>

export const AnalysisSchema = Type.Object({
  services: Type.Array(AnalysisServiceSchema, { description: 'the active services, in dependency order (dependencies first), ties by name' }),
  nodes: Type.Array(CanvasNode, { description: 'canvas nodes with positions, in apply-friendly order; ids derive from compose names' }),
  edges: Type.Array(CanvasEdge),
  warnings: Type.Array(AnalysisIssueSchema, { description: 'what Kubernetes cannot express or was not converted, each naming the service and compose key' }),
  errors: Type.Array(AnalysisIssueSchema, { description: 'problems that leave part of the file unconverted (fatal ones fail the analysis instead)' }),
}, { additionalProperties: false })
/** The analysis as JSON (see src/services/import/graph.ts `Analysis` for the type the code works with). */
export type AnalysisDocument = Static<typeof AnalysisSchema>
