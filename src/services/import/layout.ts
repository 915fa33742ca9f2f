// A small layered layout of our own: edges flow left → right, nodes never overlap, and the same input
// (nodes and edges in the same order) always gets byte-identical positions.
//
// Why not dagre: on `npm run bench:import` (200 services → ~1000 nodes) dagre's layout alone took
// 0.9–1 s of a 1 s budget whatever ranker we chose (network-simplex 885 ms, tight-tree 1204 ms,
// longest-path 1387 ms; laying out each connected component separately was slower still). Imported
// graphs are shallow and wide (workloads with their config maps, secrets, claims, services), so a plain
// Sugiyama-style pass is enough and costs O((V + E) · log V · SWEEPS):
//   1. cycles are broken by dropping the back edges of a depth-first search started from each node in
//      input order (a compose file's depends_on cannot loop, but a merged canvas might);
//   2. layers by longest path from the sources, so every kept edge goes to a strictly later layer; then
//      each source moves right to just before its nearest successor, so a config map feeding the tenth
//      workload of a chain sits beside it rather than in the first column;
//   3. order within a layer by barycenter sweeps (down, then up), ties by input order;
//   4. coordinates on a grid: layer columns as wide as their widest node plus RANK_GAP, nodes stacked
//      with NODE_GAP and each column centred vertically on the tallest one;
//   5. each connected component (an isolated node is one) is laid out on its own and the components are
//      packed, in input order of their first node, into rows about ROW_ASPECT times as wide as the whole
//      is tall, so many unrelated services make a grid rather than one very tall column.

/** The box reserved for each node (the canvas draws nodes about this size). */
export const NODE_WIDTH = 240
export const NODE_HEIGHT = 90
const NODE_GAP = 40
const RANK_GAP = 120
/** Down-and-up barycenter passes; more rarely changes an imported graph's order. */
const SWEEPS = 4
/** Target width : height of the packed components (screens are wider than tall). */
const ROW_ASPECT = 2

/** Top-left corner of each node, by node id (the canvas's `position`). */
export type Positions = Record<string, { x: number; y: number }>

export interface LayoutOptions {
  /** Where the layout's top-left corner goes (e.g. right of an existing graph when merging). */
  origin?: { x: number; y: number }
}

interface Block {
  width: number
  height: number
  /** Node index → top-left corner relative to the block. */
  placed: Array<[number, number, number]>
}

function dimension(value: number | null | undefined, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback
}

/** Keeps the edges a DFS (roots and successors in input order) does not find going back up its stack. */
function acyclic(succ: number[][]): number[][] {
  const n = succ.length
  const state = new Uint8Array(n) // 0 unseen, 1 on the stack, 2 done
  const kept: number[][] = Array.from({ length: n }, () => [])
  const stack: number[] = []
  const next: number[] = []
  for (let root = 0; root < n; root++) {
    if (state[root] !== 0) continue
    state[root] = 1
    stack.push(root)
    next.push(0)
    while (stack.length > 0) {
      const top = stack.length - 1
      const v = stack[top]
      const i = next[top]
      if (i === succ[v].length) {
        state[v] = 2
        stack.pop()
        next.pop()
        continue
      }
      next[top] = i + 1
      const w = succ[v][i]
      if (state[w] === 1) continue
      kept[v].push(w)
      if (state[w] === 0) {
        state[w] = 1
        stack.push(w)
        next.push(0)
      }
    }
  }
  return kept
}

/** Longest path from the sources (Kahn order), then sources pulled right to their nearest successor. */
function layers(succ: number[][], pred: number[][]): Int32Array {
  const n = succ.length
  const layer = new Int32Array(n)
  const indegree = new Int32Array(n)
  for (let v = 0; v < n; v++) indegree[v] = pred[v].length
  const order: number[] = []
  for (let v = 0; v < n; v++) if (indegree[v] === 0) order.push(v)
  for (let head = 0; head < order.length; head++) {
    const v = order[head]
    for (const w of succ[v]) {
      if (layer[v] + 1 > layer[w]) layer[w] = layer[v] + 1
      if (--indegree[w] === 0) order.push(w)
    }
  }
  for (let v = 0; v < n; v++) {
    if (pred[v].length !== 0 || succ[v].length === 0) continue
    let nearest = Infinity
    for (const w of succ[v]) if (layer[w] < nearest) nearest = layer[w]
    layer[v] = nearest - 1
  }
  return layer
}

/** Reorders each layer by the mean position of its neighbours on one side; ties by input order. */
function sweep(rows: number[][], pos: Float64Array, neighbours: number[][], down: boolean): void {
  const bary = new Map<number, number>()
  const from = down ? 1 : rows.length - 2
  for (let l = from; down ? l < rows.length : l >= 0; l += down ? 1 : -1) {
    const row = rows[l]
    for (const v of row) {
      const ns = neighbours[v]
      if (ns.length === 0) {
        bary.set(v, pos[v])
        continue
      }
      let sum = 0
      for (const w of ns) sum += pos[w]
      bary.set(v, sum / ns.length)
    }
    row.sort((a, b) => bary.get(a)! - bary.get(b)! || a - b)
    const centre = (row.length - 1) / 2
    row.forEach((v, i) => { pos[v] = i - centre })
    bary.clear()
  }
}

function layoutComponent(members: number[], layer: Int32Array, succ: number[][], pred: number[][], widths: number[], heights: number[], pos: Float64Array): Block {
  const byLayer = new Map<number, number[]>()
  for (const v of members) {
    const row = byLayer.get(layer[v])
    if (row) row.push(v)
    else byLayer.set(layer[v], [v])
  }
  // Members come in input order, so every row starts in input order; empty layers are skipped.
  const rows = [...byLayer.keys()].sort((a, b) => a - b).map((l) => byLayer.get(l)!)
  for (const row of rows) {
    const centre = (row.length - 1) / 2
    row.forEach((v, i) => { pos[v] = i - centre })
  }
  if (rows.length > 1) {
    for (let s = 0; s < SWEEPS; s++) {
      sweep(rows, pos, pred, true)
      sweep(rows, pos, succ, false)
    }
  }
  const columnWidth = rows.map((row) => Math.max(...row.map((v) => widths[v])))
  const columnHeight = rows.map((row) => row.reduce((h, v) => h + heights[v], 0) + NODE_GAP * (row.length - 1))
  const height = Math.max(...columnHeight)
  const placed: Block['placed'] = []
  let x = 0
  rows.forEach((row, l) => {
    let y = (height - columnHeight[l]) / 2
    for (const v of row) {
      placed.push([v, x + (columnWidth[l] - widths[v]) / 2, y])
      y += heights[v] + NODE_GAP
    }
    x += columnWidth[l] + RANK_GAP
  })
  return { width: x - RANK_GAP, height, placed }
}

export function layoutGraph(
  nodes: ReadonlyArray<{ id: string; width?: number | null; height?: number | null }>,
  edges: ReadonlyArray<{ source: string; target: string }>,
  options: LayoutOptions = {},
): Positions {
  const index = new Map<string, number>()
  const widths: number[] = []
  const heights: number[] = []
  for (const node of nodes) {
    if (index.has(node.id)) continue
    index.set(node.id, widths.length)
    widths.push(dimension(node.width, NODE_WIDTH))
    heights.push(dimension(node.height, NODE_HEIGHT))
  }
  const n = widths.length
  const out: Positions = {}
  if (n === 0) return out

  const allSucc: number[][] = Array.from({ length: n }, () => [])
  const parent = Int32Array.from({ length: n }, (_, i) => i)
  const root = (v: number): number => {
    while (parent[v] !== v) v = parent[v] = parent[parent[v]]
    return v
  }
  const seen = new Set<number>()
  for (const e of edges) {
    const s = index.get(e.source)
    const t = index.get(e.target)
    // Edges to nodes outside the set (a merge's old nodes), self-loops and repeats do not constrain this layout.
    if (s === undefined || t === undefined || s === t || seen.has(s * n + t)) continue
    seen.add(s * n + t)
    allSucc[s].push(t)
    const rs = root(s)
    const rt = root(t)
    // The smaller index becomes the root, so a component is named by its first node in input order.
    if (rs !== rt) parent[Math.max(rs, rt)] = Math.min(rs, rt)
  }
  const succ = acyclic(allSucc)
  const pred: number[][] = Array.from({ length: n }, () => [])
  for (let v = 0; v < n; v++) for (const w of succ[v]) pred[w].push(v)
  const layer = layers(succ, pred)

  const components = new Map<number, number[]>()
  for (let v = 0; v < n; v++) {
    const r = root(v)
    const members = components.get(r)
    if (members) members.push(v)
    else components.set(r, [v])
  }
  const pos = new Float64Array(n)
  const blocks = [...components.values()].map((members) => layoutComponent(members, layer, succ, pred, widths, heights, pos))

  // Shelf packing: rows left to right, a new row when the next block would pass the target width.
  let area = 0
  let widest = 0
  for (const b of blocks) {
    area += (b.width + RANK_GAP) * (b.height + NODE_GAP)
    widest = Math.max(widest, b.width)
  }
  const rowWidth = Math.max(widest, Math.sqrt(area * ROW_ASPECT))
  const ox = options.origin?.x ?? 0
  const oy = options.origin?.y ?? 0
  const ids = [...index.keys()]
  let x = 0
  let y = 0
  let rowHeight = 0
  for (const b of blocks) {
    if (x > 0 && x + b.width > rowWidth) {
      x = 0
      y += rowHeight + NODE_GAP
      rowHeight = 0
    }
    // Whole pixels keep the output byte-stable.
    for (const [v, bx, by] of b.placed) out[ids[v]] = { x: Math.round(ox + x + bx), y: Math.round(oy + y + by) }
    x += b.width + RANK_GAP
    rowHeight = Math.max(rowHeight, b.height)
  }
  return out
}
