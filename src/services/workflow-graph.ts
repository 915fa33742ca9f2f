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
