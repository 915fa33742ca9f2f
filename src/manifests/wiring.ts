// Edge wiring as a table: one row per relation the canvas can draw. An edge is wired when its (source,
// target) types match a row in the documented direction or reversed (no pair of types means two different
// things in the two directions, so a reversed edge is unambiguous); any other edge is a warning on its
// source node. Both ends of a wired edge see the link; each builder reads the links it cares about, and
// explicit node data always wins over what a link implies.
import type { NodeType } from '../../schemas/nodes.ts'
import type { ManifestEdge } from './types.ts'
import type { Link, NodeView } from './build-context.ts'

export const WORKLOAD_TYPES = ['deployment', 'statefulset', 'daemonset', 'replicaset', 'pod', 'job', 'cronjob'] as const satisfies readonly NodeType[]
export type WorkloadType = typeof WORKLOAD_TYPES[number]
export function isWorkload(type: string): type is WorkloadType {
  return (WORKLOAD_TYPES as readonly string[]).includes(type)
}

export interface WiringRule {
  name: string
  from: readonly NodeType[]
  to: readonly NodeType[]
  /** What the edge does, for the docs and diagnostics. */
  effect: string
}

export const WIRING_RULES = [
  { name: 'workload-service', from: WORKLOAD_TYPES, to: ['service'], effect: 'the service selects the workload\'s pods and targets its container port' },
  { name: 'service-ingress', from: ['service'], to: ['ingress'], effect: 'the ingress routes to the service (backend name and port)' },
  { name: 'workload-hpa', from: WORKLOAD_TYPES, to: ['hpa'], effect: 'the autoscaler scales the workload (scaleTargetRef)' },
  { name: 'workload-networkpolicy', from: WORKLOAD_TYPES, to: ['networkpolicy'], effect: 'the policy applies to the workload\'s pods (podSelector)' },
  { name: 'workload-poddisruptionbudget', from: WORKLOAD_TYPES, to: ['poddisruptionbudget'], effect: 'the budget covers the workload\'s pods (selector)' },
  { name: 'config-workload', from: ['configmap', 'secret'], to: WORKLOAD_TYPES, effect: 'the workload gets the keys as environment (envFrom), or as files when mounted' },
  { name: 'pvc-workload', from: ['persistentvolumeclaim'], to: WORKLOAD_TYPES, effect: 'the workload mounts the claim at the claim\'s mountPath' },
  { name: 'serviceaccount-workload', from: ['serviceaccount'], to: WORKLOAD_TYPES, effect: 'the workload\'s pods run as the service account (serviceAccountName)' },
  // Compose's depends_on, drawn from the dependency to the dependent. Kubernetes has no start order, so the
  // edge orders the apply (the dependency first) and the dependent must retry until the dependency answers.
  { name: 'workload-dependency', from: WORKLOAD_TYPES, to: WORKLOAD_TYPES, effect: 'the target depends on the source: the source is applied first' },
] as const satisfies readonly WiringRule[]

export type RuleName = typeof WIRING_RULES[number]['name']

export interface WiringResult {
  links: Map<string, Link[]>
  warnings: Array<{ node_id: string; message: string }>
}

function matches(rule: WiringRule, source: NodeType, target: NodeType): boolean {
  return rule.from.includes(source) && rule.to.includes(target)
}

export function wire(nodes: Map<string, NodeView>, edges: ManifestEdge[]): WiringResult {
  const links = new Map<string, Link[]>([...nodes.keys()].map((id) => [id, []]))
  const warnings: WiringResult['warnings'] = []
  for (const edge of edges) {
    const source = nodes.get(edge.source)
    const target = nodes.get(edge.target)
    if (!source || !target) {
      warnings.push({ node_id: source?.id ?? target?.id ?? edge.source, message: `edge ${JSON.stringify(edge.id)} connects a node that is not in the workflow; ignored` })
      continue
    }
    let rule: WiringRule | undefined = WIRING_RULES.find((r) => matches(r, source.type, target.type))
    let reversed = false
    if (!rule) {
      rule = WIRING_RULES.find((r) => matches(r, target.type, source.type))
      reversed = rule !== undefined
    }
    if (!rule) {
      warnings.push({ node_id: source.id, message: `edge ${JSON.stringify(edge.id)}: a ${source.type} cannot be wired to a ${target.type}; the edge has no effect` })
      continue
    }
    if (source.namespace !== target.namespace) {
      warnings.push({ node_id: source.id, message: `edge ${JSON.stringify(edge.id)}: ${source.name} (namespace ${source.namespace}) and ${target.name} (namespace ${target.namespace}) are in different namespaces; the edge has no effect` })
      continue
    }
    const name = rule.name as RuleName
    links.get(source.id)!.push({ rule: name, edge, peer: target, reversed })
    links.get(target.id)!.push({ rule: name, edge, peer: source, reversed })
  }
  return { links, warnings }
}
