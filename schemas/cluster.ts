// Clusters as the API shows them (API.md §5). No credential field is ever part of a reply.
import { Type } from 'typebox'
import { Timestamp, Id, StringEnum } from './common.ts'
import { PaginationQuery, PageOf } from './pagination.ts'

const DNS_1123 = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'
export const AuthTypeSchema = StringEnum(['kubeconfig', 'token', 'certificate', 'serviceaccount', 'oidc'], {
  description: 'kubeconfig {kubeconfig, context?} · token {token, ca_data?} · certificate {client_cert_data, client_key_data, ca_data?} · serviceaccount {token, namespace, ca_data?} · oidc {issuer_url, client_id, client_secret?, refresh_token, id_token?, ca_data?}',
})
export const ShareRole = StringEnum(['viewer', 'deployer', 'admin'], { description: 'viewer sees it; deployer may also deploy to it; admin may also update, rotate credentials and share' })
const Labels = Type.Record(Type.String({ maxLength: 63 }), Type.String({ maxLength: 253 }))

const credentialProperties = {
  kubeconfig: Type.Optional(Type.String({ minLength: 1, maxLength: 262_144, description: 'kubeconfig YAML; exec, auth-provider and file paths are refused' })),
  context: Type.Optional(Type.String({ minLength: 1, maxLength: 253, description: 'kubeconfig context (default: its current context)' })),
  token: Type.Optional(Type.String({ minLength: 1, maxLength: 16_384, description: 'bearer token (token, serviceaccount)' })),
  namespace: Type.Optional(Type.String({ minLength: 1, maxLength: 63, pattern: DNS_1123, description: 'namespace of the service account (serviceaccount)' })),
  client_cert_data: Type.Optional(Type.String({ minLength: 1, maxLength: 65_536, description: 'client certificate PEM, raw or base64 (certificate)' })),
  client_key_data: Type.Optional(Type.String({ minLength: 1, maxLength: 65_536, description: 'client key PEM, raw or base64 (certificate)' })),
  ca_data: Type.Optional(Type.String({ minLength: 1, maxLength: 65_536, description: 'CA certificate PEM, raw or base64' })),
  issuer_url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'OIDC issuer (oidc)' })),
  client_id: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
  client_secret: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
  refresh_token: Type.Optional(Type.String({ minLength: 1, maxLength: 16_384 })),
  id_token: Type.Optional(Type.String({ minLength: 1, maxLength: 16_384 })),
  insecure_skip_tls_verify: Type.Optional(Type.Boolean({ description: 'do not verify the server certificate (not recommended)' })),
}
export const CredentialsObject = Type.Object(credentialProperties, { additionalProperties: false, description: 'the credential fields of auth_type; write-only' })

export const CreateClusterBody = Type.Object({
  name: Type.String({
    minLength: 1, maxLength: 63, pattern: DNS_1123,
    description: 'DNS-1123 label; the key in paths. Unique among the clusters the caller reaches (409 when one shared with them has it); `default` and id-shaped names (24 hexadecimal characters) are refused',
  }),
  display_name: Type.Optional(Type.String({ maxLength: 200 })),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  server: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'API server URL (https); for kubeconfig it comes from the kubeconfig' })),
  auth_type: AuthTypeSchema,
  credentials: Type.Optional(CredentialsObject),
  labels: Type.Optional(Labels),
  is_default: Type.Optional(Type.Boolean()),
  ...credentialProperties,
}, { additionalProperties: false, description: 'credential fields may be given inside `credentials` or at the top level, not both' })

export const UpdateClusterBody = Type.Object({
  display_name: Type.Optional(Type.String({ maxLength: 200 })),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  server: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  labels: Type.Optional(Labels),
}, { additionalProperties: false, minProperties: 1 })

export const UpdateCredentialsBody = Type.Object({
  auth_type: Type.Optional(AuthTypeSchema),
  server: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  credentials: Type.Optional(CredentialsObject),
  ...credentialProperties,
}, { additionalProperties: false, description: 'checked against the cluster before they replace the stored ones' })

export const ShareBody = Type.Object({ email: Type.String({ format: 'email', maxLength: 320 }), role: ShareRole }, { additionalProperties: false })

export const Cluster = Type.Object({
  id: Id,
  name: Type.String(),
  display_name: Type.String(),
  description: Type.String(),
  server: Type.String(),
  auth_type: AuthTypeSchema,
  status: StringEnum(['unknown', 'connected', 'error']),
  status_message: Type.String(),
  last_checked_at: Type.Union([Timestamp, Type.Null()]),
  is_default: Type.Boolean({ description: 'the caller\'s default cluster' }),
  labels: Labels,
  metadata: Type.Object({
    version: Type.Union([Type.String(), Type.Null()]),
    platform: Type.Union([Type.String(), Type.Null()]),
    node_count: Type.Union([Type.Integer(), Type.Null()]),
    namespaces: Type.Array(Type.String()),
  }, { additionalProperties: false }),
  owner_id: Type.String(),
  access: StringEnum(['owner', 'viewer', 'deployer', 'admin'], { description: 'what the caller may do with it' }),
  shared_with: Type.Array(Type.Object({
    user_id: Type.String(),
    email: Type.Union([Type.String(), Type.Null()], { description: 'the user\'s current email; null once the account is gone' }),
    name: Type.Union([Type.String(), Type.Null()], { description: 'the user\'s current name; null once the account is gone' }),
    role: ShareRole,
  }, { additionalProperties: false }), { description: 'with whom it is shared; shown to the owner and shared admins only (empty for others)' }),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'Cluster', additionalProperties: false })

const ClusterKey = Type.String({ minLength: 1, maxLength: 63, description: 'the cluster\'s name or its id (a name is never id-shaped)' })
export const ClusterParams = Type.Object({ name: ClusterKey })
export const ShareParams = Type.Object({ name: ClusterKey, user_id: Type.String({ minLength: 1, maxLength: 64, description: 'the user the cluster is shared with' }) })
export const ClusterListQuery = PaginationQuery(['created_at', 'name', 'status', 'updated_at'], {
  status: Type.Optional(StringEnum(['unknown', 'connected', 'error'])),
})
export const ClusterList = PageOf('clusters', Type.Ref('Cluster'))

export const TestResult = Type.Object({
  status: Type.Literal('healthy'),
  version: Type.String({ description: 'the cluster\'s Kubernetes version' }),
  nodes: Type.Integer({ minimum: 0 }),
}, { additionalProperties: false })

export const ClusterStatus = Type.Object({
  name: Type.String(),
  status: StringEnum(['unknown', 'connected', 'error']),
  status_message: Type.String(),
  last_checked_at: Type.Union([Timestamp, Type.Null()]),
  version: Type.Union([Type.String(), Type.Null()]),
}, { additionalProperties: false })

const Usage = Type.Object({
  cpu_cores: Type.Union([Type.Number(), Type.Null()]),
  memory_bytes: Type.Union([Type.Number(), Type.Null()]),
}, { additionalProperties: false })
export const ClusterMetrics = Type.Object({
  available: Type.Boolean({ description: 'false when metrics.k8s.io is not installed: usage is then null and message says why' }),
  message: Type.String(),
  usage: Usage,
  capacity: Type.Object({ cpu_cores: Type.Number(), memory_bytes: Type.Number(), storage_bytes: Type.Number() }, { additionalProperties: false }),
  nodes: Type.Array(Type.Object({
    name: Type.String(), cpu_cores: Type.Union([Type.Number(), Type.Null()]), memory_bytes: Type.Union([Type.Number(), Type.Null()]),
    cpu_capacity: Type.Number(), memory_capacity: Type.Number(),
  }, { additionalProperties: false })),
  collected_at: Timestamp,
}, { additionalProperties: false })

export const ConnectionLog = Type.Object({
  id: Id,
  action: StringEnum(['create', 'test', 'health_check', 'refresh', 'credentials', 'update', 'share', 'watch'], { description: 'what talked to the cluster; `watch`: a resource watch reconnecting' }),
  success: Type.Boolean(),
  message: Type.String(),
  created_at: Timestamp,
}, { additionalProperties: false })
export const ConnectionLogQuery = PaginationQuery(['created_at'])
export const ConnectionLogList = PageOf('logs', ConnectionLog)
