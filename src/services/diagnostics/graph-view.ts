// The workflow graph as diagnostics read it: each node's resolved name and namespace and its wired links,
// through the same edge table the renderer uses, so a check never disagrees with what a run would deploy.
import type { Link, NodeView } from '../../manifests/build-context.ts'
import { wire, isWorkload, type RuleName } from '../../manifests/wiring.ts'
import { MANAGED_BY, MANAGED_BY_LABEL, selectorLabels } from '../../manifests/metadata.ts'
import type { ManifestNode } from '../../manifests/types.ts'
import { isNodeType, NODE_TYPE_INFO } from '../node-catalogue.ts'
import type { Graph } from './types.ts'

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/
export const isDnsLabel = (s: unknown): s is string => typeof s === 'string' && s.length <= 63 && DNS_LABEL.test(s)

/** The nearest valid DNS label to `s` (lower-cased, other characters turned into dashes); null when nothing is left. */
export function toDnsLabel(s: string): string | null {
  const label = s.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/-+/g, '-').replace(/^-+/, '').slice(0, 63).replace(/-+$/, '')
  return label === '' ? null : label
}

export const dataOf = (node: ManifestNode): Record<string, unknown> =>
  (node.data && typeof node.data === 'object' ? node.data : {}) as Record<string, unknown>

/** The Kubernetes kind a node renders (a plugin's kind is known only once its plugin is). */
export const kindOf = (node: ManifestNode): string => (isNodeType(node.type) && NODE_TYPE_INFO[node.type].kind) || node.type

export class GraphView {
  readonly views = new Map<string, NodeView>()
  readonly links: Map<string, Link[]>

  constructor(readonly graph: Graph, readonly workflowId: string) {
    for (const [order, node] of graph.nodes.entries()) {
      if (!isNodeType(node.type)) continue
      const data = dataOf(node)
      const ns = data.namespace
      this.views.set(node.id, {
        id: node.id, type: node.type, data, order,
        name: typeof data.name === 'string' ? data.name : '',
        namespace: typeof ns === 'string' && ns !== '' ? ns : 'default',
      })
    }
    this.links = wire(this.views, graph.edges).links
  }

  node(id: string): ManifestNode | undefined { return this.graph.nodes.find((n) => n.id === id) }

  linksOf(nodeId: string, rule: RuleName): Link[] {
    return (this.links.get(nodeId) ?? []).filter((l) => l.rule === rule)
  }

  /** Nodes at the other end of any edge of `nodeId`, wired or not. */
  neighbours(nodeId: string): NodeView[] {
    const ids = this.graph.edges.flatMap((e) => (e.source === nodeId ? [e.target] : e.target === nodeId ? [e.source] : []))
    return [...new Set(ids)].map((id) => this.views.get(id)).filter((v): v is NodeView => v !== undefined && v.id !== nodeId)
  }

  /** The labels the pods of a workload node carry once rendered. */
  podLabels(workload: NodeView): Record<string, string> {
    const labels = workload.data.labels && typeof workload.data.labels === 'object' ? workload.data.labels as Record<string, string> : {}
    return { ...labels, ...selectorLabels(workload.name, this.workflowId), [MANAGED_BY_LABEL]: MANAGED_BY }
  }

  workloads(): NodeView[] { return [...this.views.values()].filter((v) => isWorkload(v.type)) }
}

/** The value that occurs most often (the first seen wins a tie); undefined for none. */
export function mostCommon(values: string[]): string | undefined {
  const counts = new Map<string, number>()
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1)
  let best: string | undefined
  for (const [v, n] of counts) if (best === undefined || n > counts.get(best)!) best = v
  return best
}
