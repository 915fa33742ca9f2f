// The component palette: one entry per built-in node type, with the parameters the settings panel shows.
// Parameters are read off the node's data schema (schemas/nodes.ts), so what the palette offers and what
// validateNode checks are the same thing.
import type { TSchema } from 'typebox'
import { Value } from 'typebox/value'
import { NodeDataSchemas, NODE_TYPES, type NodeType } from '../../schemas/nodes.ts'

export type ParameterType = 'string' | 'number' | 'boolean' | 'select' | 'textarea' | 'secret' | 'map' | 'list' | 'object'

export interface TemplateParameter {
  name: string
  label: string
  type: ParameterType
  required: boolean
  default: unknown
  options: string[]
  description: string
}

export interface NodeTemplate {
  id: string
  name: string
  display_name: string
  category: string
  description: string
  icon: string
  version: string
  tags: string[]
  parameters: TemplateParameter[]
  is_plugin: boolean
  plugin_id: string | null
}

interface TypeInfo { display_name: string; category: string; description: string; icon: string; tags: string[]; kind: string }

/** What each built-in type is, for people; `kind` is the Kubernetes kind it produces. */
export const NODE_TYPE_INFO: Record<NodeType, TypeInfo> = {
  deployment: { kind: 'Deployment', display_name: 'Deployment', category: 'workloads', icon: 'deployment', description: 'Stateless pods kept at a replica count, rolled out on change.', tags: ['workload', 'apps'] },
  statefulset: { kind: 'StatefulSet', display_name: 'StatefulSet', category: 'workloads', icon: 'statefulset', description: 'Pods with stable names and their own volumes, for databases and queues.', tags: ['workload', 'database', 'storage'] },
  daemonset: { kind: 'DaemonSet', display_name: 'DaemonSet', category: 'workloads', icon: 'daemonset', description: 'One pod on every node, for agents and log collectors.', tags: ['workload', 'agent'] },
  replicaset: { kind: 'ReplicaSet', display_name: 'ReplicaSet', category: 'workloads', icon: 'replicaset', description: 'A fixed set of identical pods (prefer a Deployment).', tags: ['workload'] },
  pod: { kind: 'Pod', display_name: 'Pod', category: 'workloads', icon: 'pod', description: 'A single pod, for one-off tools and debugging.', tags: ['workload'] },
  job: { kind: 'Job', display_name: 'Job', category: 'workloads', icon: 'job', description: 'Pods that run to completion, retried on failure.', tags: ['workload', 'batch'] },
  cronjob: { kind: 'CronJob', display_name: 'CronJob', category: 'workloads', icon: 'cronjob', description: 'A Job started on a cron schedule.', tags: ['workload', 'batch', 'schedule'] },
  service: { kind: 'Service', display_name: 'Service', category: 'networking', icon: 'service', description: 'A stable address in front of pods; connect it to a workload.', tags: ['network'] },
  ingress: { kind: 'Ingress', display_name: 'Ingress', category: 'networking', icon: 'ingress', description: 'HTTP routing from outside the cluster to services; connect it to a service.', tags: ['network', 'http'] },
  configmap: { kind: 'ConfigMap', display_name: 'ConfigMap', category: 'config', icon: 'configmap', description: 'Configuration values; connect it to a workload to expose them as environment.', tags: ['config'] },
  secret: { kind: 'Secret', display_name: 'Secret', category: 'config', icon: 'secret', description: 'Sensitive values, supplied at run time and never stored in the workflow.', tags: ['config', 'security'] },
  persistentvolumeclaim: { kind: 'PersistentVolumeClaim', display_name: 'Persistent volume claim', category: 'storage', icon: 'pvc', description: 'A volume; connect it to a workload to mount it.', tags: ['storage'] },
  hpa: { kind: 'HorizontalPodAutoscaler', display_name: 'Horizontal pod autoscaler', category: 'scaling', icon: 'hpa', description: 'Scales a connected workload on CPU or memory use.', tags: ['scaling'] },
  networkpolicy: { kind: 'NetworkPolicy', display_name: 'Network policy', category: 'security', icon: 'networkpolicy', description: 'Limits which traffic reaches a connected workload\'s pods.', tags: ['network', 'security'] },
  serviceaccount: { kind: 'ServiceAccount', display_name: 'Service account', category: 'security', icon: 'serviceaccount', description: 'An identity for pods.', tags: ['security', 'identity'] },
  poddisruptionbudget: { kind: 'PodDisruptionBudget', display_name: 'Pod disruption budget', category: 'scaling', icon: 'pdb', description: 'Keeps a connected workload available during voluntary disruptions.', tags: ['availability'] },
  plugin: { kind: '', display_name: 'Plugin resource', category: 'plugins', icon: 'plugin', description: 'A custom resource defined by an enabled plugin.', tags: ['plugin', 'crd'] },
}

const CATALOGUE_VERSION = '1.0.0'

type SchemaLike = { type?: string; enum?: unknown[]; title?: string; description?: string; default?: unknown; anyOf?: SchemaLike[]; const?: unknown; properties?: Record<string, SchemaLike>; required?: string[] }

function parameterType(s: SchemaLike): { type: ParameterType; options: string[] } {
  if (s.enum) return { type: 'select', options: s.enum.map(String) }
  if (s.anyOf?.length && s.anyOf.every((o) => o.const !== undefined)) return { type: 'select', options: s.anyOf.map((o) => String(o.const)) }
  if (s.anyOf?.length) return parameterType(s.anyOf[0])
  switch (s.type) {
    case 'integer': case 'number': return { type: 'number', options: [] }
    case 'boolean': return { type: 'boolean', options: [] }
    case 'array': return { type: 'list', options: [] }
    case 'object': return { type: (s as { patternProperties?: unknown }).patternProperties ? 'map' : 'object', options: [] }
    default: return { type: 'string', options: [] }
  }
}

function parametersOf(schema: SchemaLike): TemplateParameter[] {
  const required = new Set(schema.required ?? [])
  return Object.entries(schema.properties ?? {}).map(([name, prop]) => {
    const { type, options } = parameterType(prop)
    return { name, label: prop.title ?? name, type, required: required.has(name), default: prop.default ?? null, options, description: prop.description ?? '' }
  })
}

const BUILT_IN: NodeTemplate[] = NODE_TYPES.filter((t) => t !== 'plugin').map((type) => ({
  id: `builtin:${type}`,
  name: type,
  ...(({ kind: _k, ...info }) => info)(NODE_TYPE_INFO[type]),
  version: CATALOGUE_VERSION,
  parameters: parametersOf(NodeDataSchemas[type] as SchemaLike),
  is_plugin: false,
  plugin_id: null,
}))

/** The built-in node types as palette entries (plugin node types are added by the plugin service). */
export function builtInTemplates(): NodeTemplate[] {
  return BUILT_IN
}

export function isNodeType(type: string): type is NodeType {
  return Object.hasOwn(NodeDataSchemas, type)
}

export interface NodeIssue { path: string; message: string }

/**
 * Checks a node's data against its type's schema. Unknown keys are the canvas's business and pass; a known
 * key with a wrong type or value, or a missing required key, is reported with its path.
 */
export function validateNode(node: { type: string; data?: unknown }): NodeIssue[] {
  if (!isNodeType(node.type)) return [{ path: '/type', message: `unknown node type "${node.type}"` }]
  const schema = NodeDataSchemas[node.type] as TSchema
  const data = node.data ?? {}
  return Value.Errors(schema, data).map((e) => ({ path: `/data${e.instancePath}`, message: e.message }))
}
