// Field-level comparison of two workflow graphs, for GET /workflows/:id/versions/compare. Nodes and edges
// are matched by id; a node present in both is "modified" when any field differs, and each difference is
// reported with its JSON-pointer path.
import { isDeepStrictEqual } from 'node:util'
import type { GraphEdge, GraphNode } from './workflow-graph.ts'

export interface FieldChange { path: string; old?: unknown; new?: unknown }
export interface NodeChange { node_id: string; type: string; changes: FieldChange[] }
export interface GraphDiff {
  added_nodes: GraphNode[]
  removed_nodes: GraphNode[]
  modified_nodes: NodeChange[]
  added_edges: GraphEdge[]
  removed_edges: GraphEdge[]
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const pointer = (key: string | number) => `/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`

function fieldChanges(before: unknown, after: unknown, path: string, out: FieldChange[]): void {
  if (isDeepStrictEqual(before, after)) return
  const bothObjects = isPlainObject(before) && isPlainObject(after)
  const bothArrays = Array.isArray(before) && Array.isArray(after) && before.length === after.length
  if (bothObjects) {
    for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
      const child = path + pointer(key)
      if (!(key in after)) out.push({ path: child, old: before[key] })
      else if (!(key in before)) out.push({ path: child, new: after[key] })
      else fieldChanges(before[key], after[key], child, out)
    }
    return
  }
  if (bothArrays) {
    before.forEach((item, i) => fieldChanges(item, after[i], path + pointer(i), out))
    return
  }
  out.push({ path: path || '/', old: before, new: after })
}

export function diffGraphs(from: { nodes: GraphNode[]; edges: GraphEdge[] }, to: { nodes: GraphNode[]; edges: GraphEdge[] }): GraphDiff {
  const fromNodes = new Map(from.nodes.map((n) => [n.id, n]))
  const toNodes = new Map(to.nodes.map((n) => [n.id, n]))
  const modified: NodeChange[] = []
  for (const [id, after] of toNodes) {
    const before = fromNodes.get(id)
    if (!before) continue
    const changes: FieldChange[] = []
    fieldChanges(before, after, '', changes)
    if (changes.length) modified.push({ node_id: id, type: after.type, changes })
  }
  const fromEdges = new Map(from.edges.map((e) => [e.id, e]))
  const toEdges = new Map(to.edges.map((e) => [e.id, e]))
  // An edge is its endpoints: one whose id stayed but whose content changed is a removal plus an addition.
  const sameEdge = (e: GraphEdge, other: Map<string, GraphEdge>) => other.has(e.id) && isDeepStrictEqual(other.get(e.id), e)
  return {
    added_nodes: to.nodes.filter((n) => !fromNodes.has(n.id)),
    removed_nodes: from.nodes.filter((n) => !toNodes.has(n.id)),
    modified_nodes: modified,
    added_edges: to.edges.filter((e) => !sameEdge(e, fromEdges)),
    removed_edges: from.edges.filter((e) => !sameEdge(e, toEdges)),
  }
}
