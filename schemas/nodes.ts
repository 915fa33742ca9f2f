// The `data` of each canvas node type (API.md §4). Keys follow the Kubernetes field they fill, camelCase.
// Unknown keys are allowed everywhere (the canvas adds its own); a known key with a wrong type is reported
// per node by validateNode. Each property's title/description/default also feeds the component palette
// (GET /templates), so the two cannot drift apart.
import { Type, type TSchema, type TObject } from 'typebox'
import { JSON_LIMITS_TEXT } from './json.ts'
import { StringEnum } from './common.ts'

const DNS_LABEL = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'
const QUANTITY = '^[0-9]+(\\.[0-9]+)?(m|k|Ki|Mi|Gi|Ti|Pi|Ei|M|G|T|P|E)?$'

const StringMap = (title: string, description: string) =>
  Type.Record(Type.String(), Type.String(), { title, description })
const Enum = <const V extends string>(values: readonly V[], options: { title: string; description?: string; default?: V }) =>
  StringEnum(values, options)

const common = {
  name: Type.String({ title: 'Name', description: 'resource name (lower-case letters, digits and -)', minLength: 1, maxLength: 63, pattern: DNS_LABEL }),
  namespace: Type.Optional(Type.String({ title: 'Namespace', description: 'target namespace (the run may override it)', maxLength: 63, pattern: DNS_LABEL, default: 'default' })),
  labels: Type.Optional(StringMap('Labels', 'extra labels on the resource')),
  annotations: Type.Optional(StringMap('Annotations', 'extra annotations on the resource')),
}

const Port = (title: string, description: string, fallback?: number) =>
  Type.Integer({ title, description, minimum: 1, maximum: 65535, ...(fallback !== undefined && { default: fallback }) })

const EnvVar = Type.Object({ name: Type.String({ minLength: 1 }), value: Type.Optional(Type.String()) })
const Resources = Type.Object({
  requests: Type.Optional(Type.Object({ cpu: Type.Optional(Type.String({ pattern: QUANTITY })), memory: Type.Optional(Type.String({ pattern: QUANTITY })) })),
  limits: Type.Optional(Type.Object({ cpu: Type.Optional(Type.String({ pattern: QUANTITY })), memory: Type.Optional(Type.String({ pattern: QUANTITY })) })),
}, { title: 'Resources', description: 'CPU and memory requests and limits' })
const VolumeMount = Type.Object({
  name: Type.String({ minLength: 1 }), mountPath: Type.String({ minLength: 1 }), readOnly: Type.Optional(Type.Boolean()),
  subPath: Type.Optional(Type.String({ minLength: 1, maxLength: 253, description: 'mount only this key (file) of the volume, e.g. one secret at /run/secrets/<name>' })),
})
const Seconds = (title: string) => Type.Optional(Type.Integer({ title, minimum: 0, maximum: 86_400 }))
/** A container probe (an import writes a compose healthcheck as the readiness probe). */
export const Probe = Type.Object({
  exec: Type.Optional(Type.Object({ command: Type.Array(Type.String(), { minItems: 1 }) })),
  httpGet: Type.Optional(Type.Object({ path: Type.Optional(Type.String()), port: Type.Union([Type.Integer({ minimum: 1, maximum: 65535 }), Type.String({ minLength: 1, maxLength: 15 })]) })),
  tcpSocket: Type.Optional(Type.Object({ port: Type.Union([Type.Integer({ minimum: 1, maximum: 65535 }), Type.String({ minLength: 1, maxLength: 15 })]) })),
  initialDelaySeconds: Seconds('Initial delay (s)'), periodSeconds: Type.Optional(Type.Integer({ title: 'Period (s)', minimum: 1, maximum: 86_400 })),
  timeoutSeconds: Type.Optional(Type.Integer({ title: 'Timeout (s)', minimum: 1, maximum: 86_400 })),
  failureThreshold: Type.Optional(Type.Integer({ title: 'Failure threshold', minimum: 1, maximum: 1000 })),
}, { title: 'Probe', description: 'a Kubernetes probe: one of exec, httpGet or tcpSocket, and its timing' })
// What an import leaves for the builds issue (data.needsBuild, data.build): the image does not exist yet and is
// built from this source. Canvas-only keys, never rendered, so they are not fields of the node types' schemas.
export const BuildSource = Type.Object({
  context: Type.String({ title: 'Build context', description: 'directory of the repository to build, relative to its root', minLength: 1, maxLength: 1024 }),
  dockerfile: Type.Optional(Type.String({ title: 'Dockerfile', description: 'path of the Dockerfile, relative to the context', maxLength: 1024 })),
  target: Type.Optional(Type.String({ title: 'Target stage', maxLength: 256 })),
  repoUrl: Type.Optional(Type.String({ title: 'Repository', description: 'the Git repository holding the context', maxLength: 2048 })),
  branch: Type.Optional(Type.String({ title: 'Branch', maxLength: 256 })),
}, { title: 'Build source', description: 'where the image is built from (set by an import for a service with build:)' })

const container = {
  image: Type.String({ title: 'Image', description: 'container image reference, e.g. nginx:1.27', minLength: 1, maxLength: 512 }),
  port: Type.Optional(Port('Container port', 'port the container listens on')),
  env: Type.Optional(Type.Array(EnvVar, { title: 'Environment', description: 'environment variables (secret values come from the run, never from here)' })),
  command: Type.Optional(Type.Array(Type.String(), { title: 'Command', description: 'overrides the image entrypoint' })),
  args: Type.Optional(Type.Array(Type.String(), { title: 'Arguments', description: 'arguments to the command' })),
  resources: Type.Optional(Resources),
  volumeMounts: Type.Optional(Type.Array(VolumeMount, { title: 'Volume mounts', description: 'where volumes are mounted' })),
  imagePullPolicy: Type.Optional(Enum(['Always', 'IfNotPresent', 'Never'], { title: 'Image pull policy' })),
  readinessProbe: Type.Optional(Probe),
  livenessProbe: Type.Optional(Probe),
}
const Replicas = Type.Integer({ title: 'Replicas', description: 'number of pods', minimum: 0, maximum: 1000, default: 1 })

const node = (properties: Record<string, TSchema>) => Type.Object(properties)

export const NodeDataSchemas = {
  deployment: node({ ...common, ...container, replicas: Type.Optional(Replicas) }),
  statefulset: node({
    ...common, ...container, replicas: Type.Optional(Replicas),
    serviceName: Type.Optional(Type.String({ title: 'Governing service', description: 'headless service name (defaults to the node name)', pattern: DNS_LABEL })),
    storage: Type.Optional(Type.String({ title: 'Storage per pod', description: 'size of each pod\'s volume, e.g. 1Gi', pattern: QUANTITY })),
    storageClassName: Type.Optional(Type.String({ title: 'Storage class' })),
  }),
  daemonset: node({ ...common, ...container }),
  replicaset: node({ ...common, ...container, replicas: Type.Optional(Replicas) }),
  pod: node({ ...common, ...container, restartPolicy: Type.Optional(Enum(['Always', 'OnFailure', 'Never'], { title: 'Restart policy', default: 'Always' })) }),
  job: node({
    ...common, ...container,
    completions: Type.Optional(Type.Integer({ title: 'Completions', minimum: 1, default: 1 })),
    parallelism: Type.Optional(Type.Integer({ title: 'Parallelism', minimum: 1, default: 1 })),
    backoffLimit: Type.Optional(Type.Integer({ title: 'Retries', description: 'failed pods before the job fails', minimum: 0, maximum: 100, default: 6 })),
    restartPolicy: Type.Optional(Enum(['OnFailure', 'Never'], { title: 'Restart policy', default: 'OnFailure' })),
  }),
  cronjob: node({
    ...common, ...container,
    schedule: Type.String({ title: 'Schedule', description: 'cron expression, e.g. */5 * * * *', minLength: 1, maxLength: 100 }),
    concurrencyPolicy: Type.Optional(Enum(['Allow', 'Forbid', 'Replace'], { title: 'Concurrency policy', default: 'Allow' })),
    suspend: Type.Optional(Type.Boolean({ title: 'Suspended', default: false })),
    restartPolicy: Type.Optional(Enum(['OnFailure', 'Never'], { title: 'Restart policy', default: 'OnFailure' })),
  }),
  service: node({
    ...common,
    serviceType: Type.Optional(Enum(['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'], { title: 'Service type', default: 'ClusterIP' })),
    port: Type.Optional(Port('Port', 'port the service exposes', 80)),
    targetPort: Type.Optional(Type.Union([Port('Target port', 'container port'), Type.String({ minLength: 1, maxLength: 15 })], { title: 'Target port', description: 'container port number or name (defaults to the connected workload\'s port)' })),
    ports: Type.Optional(Type.Array(Type.Object({
      name: Type.Optional(Type.String()), port: Port('Port', 'service port'), targetPort: Type.Optional(Type.Union([Type.Integer(), Type.String()])),
      protocol: Type.Optional(Enum(['TCP', 'UDP', 'SCTP'], { title: 'Protocol' })), nodePort: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
    }), { title: 'Ports', description: 'several ports (overrides port/targetPort)' })),
    selector: Type.Optional(StringMap('Selector', 'pod labels to route to (defaults to the connected workload)')),
    externalName: Type.Optional(Type.String({ title: 'External name', description: 'DNS name, for ExternalName services' })),
  }),
  ingress: node({
    ...common,
    host: Type.Optional(Type.String({ title: 'Host', description: 'e.g. app.example.com', maxLength: 253 })),
    paths: Type.Optional(Type.Array(Type.Object({
      path: Type.String({ minLength: 1 }), pathType: Type.Optional(Enum(['Prefix', 'Exact', 'ImplementationSpecific'], { title: 'Path type' })),
      serviceName: Type.Optional(Type.String()), servicePort: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
    }), { title: 'Paths', description: 'paths and the services behind them (defaults to the connected service at /)' })),
    ingressClassName: Type.Optional(Type.String({ title: 'Ingress class' })),
    tlsEnabled: Type.Optional(Type.Boolean({ title: 'TLS', default: false })),
    tlsSecretName: Type.Optional(Type.String({ title: 'TLS secret', description: 'secret holding the certificate' })),
  }),
  configmap: node({
    ...common, data: Type.Optional(StringMap('Data', 'keys and values')),
    mountPath: Type.Optional(Type.String({ title: 'Mount path', description: 'mount as files here in connected workloads (instead of environment)', minLength: 1 })),
  }),
  secret: node({
    ...common,
    secretType: Type.Optional(Type.String({ title: 'Secret type', default: 'Opaque' })),
    // The KubeOrch canvas keeps its key list as {id, name} rows; either form names the same key.
    keys: Type.Optional(Type.Array(Type.Union([Type.String({ minLength: 1 }), Type.Object({ name: Type.String({ minLength: 1 }) }, { additionalProperties: true })]), { title: 'Keys', description: 'key names (or {name} rows); values are supplied at run time and never stored' })),
    mountPath: Type.Optional(Type.String({ title: 'Mount path', description: 'mount as files here in connected workloads (instead of environment)', minLength: 1 })),
  }),
  persistentvolumeclaim: node({
    ...common,
    storage: Type.String({ title: 'Size', description: 'e.g. 1Gi', pattern: QUANTITY, default: '1Gi' }),
    accessModes: Type.Optional(Type.Array(Enum(['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod'], { title: 'Access mode' }), { title: 'Access modes' })),
    storageClassName: Type.Optional(Type.String({ title: 'Storage class' })),
    mountPath: Type.Optional(Type.String({ title: 'Mount path', description: 'where connected workloads mount it' })),
  }),
  hpa: node({
    ...common,
    minReplicas: Type.Optional(Type.Integer({ title: 'Minimum replicas', minimum: 1, default: 1 })),
    maxReplicas: Type.Integer({ title: 'Maximum replicas', minimum: 1, maximum: 1000, default: 5 }),
    targetCPUUtilization: Type.Optional(Type.Integer({ title: 'Target CPU %', minimum: 1, maximum: 100, default: 80 })),
    targetMemoryUtilization: Type.Optional(Type.Integer({ title: 'Target memory %', minimum: 1, maximum: 100 })),
  }),
  networkpolicy: node({
    ...common,
    podSelector: Type.Optional(StringMap('Pod selector', 'pods the policy applies to (defaults to the connected workload)')),
    policyTypes: Type.Optional(Type.Array(Enum(['Ingress', 'Egress'], { title: 'Policy type' }), { title: 'Policy types' })),
    ingress: Type.Optional(Type.Array(Type.Object({}), { title: 'Ingress rules', description: 'Kubernetes NetworkPolicyIngressRule objects' })),
    egress: Type.Optional(Type.Array(Type.Object({}), { title: 'Egress rules', description: 'Kubernetes NetworkPolicyEgressRule objects' })),
  }),
  serviceaccount: node({
    ...common,
    automountServiceAccountToken: Type.Optional(Type.Boolean({ title: 'Mount token', default: true })),
    imagePullSecrets: Type.Optional(Type.Array(Type.String(), { title: 'Image pull secrets' })),
  }),
  poddisruptionbudget: node({
    ...common,
    minAvailable: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.String({ pattern: '^[0-9]+%$' })], { title: 'Minimum available', description: 'count or percentage' })),
    maxUnavailable: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.String({ pattern: '^[0-9]+%$' })], { title: 'Maximum unavailable', description: 'count or percentage' })),
    selector: Type.Optional(StringMap('Selector', 'pod labels (defaults to the connected workload)')),
  }),
  plugin: node({
    ...common,
    pluginId: Type.String({ title: 'Plugin', description: 'id of an enabled plugin', minLength: 1 }),
  }),
} satisfies Record<string, TObject>

export type NodeType = keyof typeof NodeDataSchemas
export const NODE_TYPES = Object.keys(NodeDataSchemas) as NodeType[]

/** A canvas node as the client sends it (React Flow shape); every other key is kept as sent. */
export const CanvasNode = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 200 }),
  type: Type.String({ minLength: 1, maxLength: 100 }),
  position: Type.Optional(Type.Object({ x: Type.Number(), y: Type.Number() }, { additionalProperties: true })),
  data: Type.Optional(Type.Object({}, { additionalProperties: true, description: `the node type's settings (GET /templates) and any keys of the canvas; ${JSON_LIMITS_TEXT}` })),
  width: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
  height: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
}, { additionalProperties: true, description: 'React Flow node; unknown keys are stored and returned unchanged' })

export const CanvasEdge = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 200 }),
  source: Type.String({ minLength: 1, maxLength: 200 }),
  target: Type.String({ minLength: 1, maxLength: 200 }),
  sourceHandle: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  targetHandle: Type.Optional(Type.Union([Type.String(), Type.Null()])),
}, { additionalProperties: true, description: 'React Flow edge; unknown keys are stored and returned unchanged' })

export const MAX_NODES = 2000
export const MAX_EDGES = 10_000
