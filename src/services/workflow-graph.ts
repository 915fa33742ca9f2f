// Structural checks a save must pass. Deeper checks (names, images, ports, cycles) are diagnostics: they
// are reported per node and block a run, never a save, so a half-drawn canvas can always be kept.
import { BadRequest } from '../errors.ts'
import { MAX_EDGES, MAX_NODES } from '../../schemas/nodes.ts'
import { isNodeType } from './node-catalogue.ts'

export interface GraphNode { id: string; type: string; data?: Record<string, unknown>; [key: string]: unknown }
export interface GraphEdge { id: string; source: string; target: string; [key: string]: unknown }

/** Throws BadRequest naming the first offending node or edge. */
export function assertValidGraph(nodes: GraphNode[], edges: GraphEdge[]): void {
  if (nodes.length > MAX_NODES) throw new BadRequest(`a workflow has at most ${MAX_NODES} nodes (got ${nodes.length})`)
  if (edges.length > MAX_EDGES) throw new BadRequest(`a workflow has at most ${MAX_EDGES} edges (got ${edges.length})`)
  const nodeIds = new Set<string>()
  for (const [i, node] of nodes.entries()) {
    if (nodeIds.has(node.id)) throw new BadRequest(`nodes/${i}: duplicate node id "${node.id}"`)
    nodeIds.add(node.id)
    if (!isNodeType(node.type)) throw new BadRequest(`nodes/${i}: node "${node.id}" has unknown type "${node.type}"`)
  }
  const edgeIds = new Set<string>()
  for (const [i, edge] of edges.entries()) {
    if (edgeIds.has(edge.id)) throw new BadRequest(`edges/${i}: duplicate edge id "${edge.id}"`)
    edgeIds.add(edge.id)
    if (!nodeIds.has(edge.source)) throw new BadRequest(`edges/${i}: edge "${edge.id}" starts at missing node "${edge.source}"`)
    if (!nodeIds.has(edge.target)) throw new BadRequest(`edges/${i}: edge "${edge.id}" ends at missing node "${edge.target}"`)
  }
}

/** A plugin as a save sees it: enough to tell which data keys of its nodes are secret fields. */
export interface PluginFields { id: string; name: string; config_fields: ReadonlyArray<{ name: string; type: string }> }

/** What the graph's plugin nodes name in `data.pluginId` (an id or a name), each once. */
export function pluginRefs(nodes: GraphNode[]): string[] {
  const refs = new Set<string>()
  for (const node of nodes) {
    const ref = node.type === 'plugin' ? node.data?.pluginId : undefined
    if (typeof ref === 'string' && ref !== '') refs.add(ref)
  }
  return [...refs]
}

/**
 * Throws BadRequest naming the first plugin node that carries a value for one of its plugin's secret
 * fields: a workflow is stored, versioned, cloned and exported, so a secret in it would leak everywhere;
 * the run supplies it (trigger_data.secrets). Absent, null and '' pass: the canvas sends every field of its
 * form, empty ones included, and an empty field holds no secret. Nodes of unknown plugins are left to the
 * renderer's per-node error, as a half-drawn canvas may name a plugin not registered yet.
 */
export function assertNoSecretValues(nodes: GraphNode[], plugins: readonly PluginFields[]): void {
  // Resolved as the renderer resolves pluginId: an id first, then a name.
  const byId = new Map(plugins.map((p) => [p.id, p]))
  const byName = new Map(plugins.map((p) => [p.name, p]))
  for (const [i, node] of nodes.entries()) {
    const ref = node.type === 'plugin' ? node.data?.pluginId : undefined
    if (typeof ref !== 'string') continue
    const plugin = byId.get(ref) ?? byName.get(ref)
    if (!plugin) continue
    for (const field of plugin.config_fields) {
      if (field.type !== 'secret') continue
      const value = node.data![field.name]
      if (value === undefined || value === null || value === '') continue
      throw new BadRequest(`nodes/${i}: node "${node.id}": "${field.name}" is a secret field; its value is supplied at run time (trigger_data.secrets), never saved`)
    }
  }
}
