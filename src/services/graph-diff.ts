// Field-level comparison of two workflow graphs, for GET /workflows/:id/versions/compare. Nodes and edges
// are matched by id; a node or edge present in both is "modified" when any field differs, and each
// difference is reported with its JSON-pointer path.
import { isDeepStrictEqual } from 'node:util'
import type { GraphEdge, GraphNode } from './workflow-graph.ts'
import { withoutLiveStatus } from './live-status.ts'

export interface FieldChange { path: string; old?: unknown; new?: unknown }
export interface NodeChange { node_id: string; type: string; changes: FieldChange[] }
export interface EdgeChange { edge_id: string; changes: FieldChange[] }
export interface GraphDiff {
  added_nodes: GraphNode[]
  removed_nodes: GraphNode[]
  modified_nodes: NodeChange[]
  added_edges: GraphEdge[]
  removed_edges: GraphEdge[]
  modified_edges: EdgeChange[]
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

/** Items matched by id: those only in `to`, those only in `from`, and the changes of those in both. */
function matchById<T extends { id: string }>(from: T[], to: T[]): { added: T[]; removed: T[]; modified: Array<{ id: string; after: T; changes: FieldChange[] }> } {
  const before = new Map(from.map((x) => [x.id, x]))
  const after = new Map(to.map((x) => [x.id, x]))
  const modified: Array<{ id: string; after: T; changes: FieldChange[] }> = []
  for (const [id, item] of after) {
    const old = before.get(id)
    if (!old) continue
    const changes: FieldChange[] = []
    fieldChanges(withoutLiveStatus(old), withoutLiveStatus(item), '', changes)
    if (changes.length) modified.push({ id, after: item, changes })
  }
  return { added: to.filter((x) => !before.has(x.id)), removed: from.filter((x) => !after.has(x.id)), modified }
}

export function diffGraphs(from: { nodes: GraphNode[]; edges: GraphEdge[] }, to: { nodes: GraphNode[]; edges: GraphEdge[] }): GraphDiff {
  const nodes = matchById(from.nodes, to.nodes)
  const edges = matchById(from.edges, to.edges)
  return {
    added_nodes: nodes.added,
    removed_nodes: nodes.removed,
    modified_nodes: nodes.modified.map((m) => ({ node_id: m.id, type: m.after.type, changes: m.changes })),
    added_edges: edges.added,
    removed_edges: edges.removed,
    modified_edges: edges.modified.map((m) => ({ edge_id: m.id, changes: m.changes })),
  }
}
