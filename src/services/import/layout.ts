// A layered layout (dagre): edges flow left → right, nodes never overlap, and the same graph always gets
// the same positions (dagre is deterministic for a given insertion order, and the order is the caller's).
import dagre from '@dagrejs/dagre'

/** The box reserved for each node (the canvas draws nodes about this size). */
export const NODE_WIDTH = 240
export const NODE_HEIGHT = 90
const NODE_GAP = 40
const RANK_GAP = 120

/** Top-left corner of each node, by node id (the canvas's `position`). */
export type Positions = Record<string, { x: number; y: number }>

export interface LayoutOptions {
  /** Where the layout's top-left corner goes (e.g. right of an existing graph when merging). */
  origin?: { x: number; y: number }
}

export function layoutGraph(
  nodes: ReadonlyArray<{ id: string; width?: number | null; height?: number | null }>,
  edges: ReadonlyArray<{ source: string; target: string }>,
  options: LayoutOptions = {},
): Positions {
  const g = new dagre.graphlib.Graph({ multigraph: true })
  g.setGraph({ rankdir: 'LR', nodesep: NODE_GAP, ranksep: RANK_GAP, marginx: 0, marginy: 0 })
  g.setDefaultEdgeLabel(() => ({}))
  const size = new Map<string, { width: number; height: number }>()
  for (const n of nodes) {
    const s = { width: n.width ?? NODE_WIDTH, height: n.height ?? NODE_HEIGHT }
    size.set(n.id, s)
    g.setNode(n.id, { ...s })
  }
  for (const [i, e] of edges.entries()) {
    // Edges to nodes outside the set (a merge's old nodes) do not constrain this layout.
    if (!size.has(e.source) || !size.has(e.target) || e.source === e.target) continue
    g.setEdge(e.source, e.target, {}, `e${i}`)
  }
  dagre.layout(g)
  const ox = options.origin?.x ?? 0
  const oy = options.origin?.y ?? 0
  const out: Positions = {}
  for (const n of nodes) {
    const placed = g.node(n.id)
    const s = size.get(n.id)!
    // dagre answers centres; the canvas wants corners. Whole pixels keep the output byte-stable.
    out[n.id] = { x: Math.round(ox + placed.x - s.width / 2), y: Math.round(oy + placed.y - s.height / 2) }
  }
  return out
}
