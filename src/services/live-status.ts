// A node's live status (`data._status`) is written by the resource watchers (resource-watch-service) for
// the workflow's deployed objects: it describes the cluster now, not the graph the user drew. So it is never
// copied: not into a version, not into a clone, not back from a version by a restore.
import type { GraphNode } from './workflow-graph.ts'

/** The keys of a node's `data` that only the watchers write. */
export const LIVE_KEYS = ['_status'] as const

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The node (or any item with `data`) without its live keys (the same object when it has none). */
export function withoutLiveStatus<N>(node: N): N {
  const data = (node as { data?: unknown }).data
  if (!isPlainObject(data) || !LIVE_KEYS.some((k) => k in data)) return node
  const rest = { ...data }
  for (const k of LIVE_KEYS) delete rest[k]
  return { ...node, data: rest }
}

export const stripLiveStatus = <N extends GraphNode>(nodes: N[]): N[] => nodes.map(withoutLiveStatus)

/**
 * `nodes` (from a version) with the live keys of the workflow's current nodes of the same id: the objects a
 * restored node describes are still the ones the watchers report on, until the next run changes them.
 */
export function withLiveStatusOf<N extends GraphNode>(nodes: N[], current: readonly GraphNode[]): N[] {
  const live = new Map<string, Record<string, unknown>>()
  for (const n of current) {
    const data = (n as { data?: unknown }).data
    if (!isPlainObject(data)) continue
    const keys = Object.fromEntries(LIVE_KEYS.filter((k) => k in data).map((k) => [k, data[k]]))
    if (Object.keys(keys).length) live.set(n.id, keys)
  }
  return nodes.map((n) => {
    const clean = withoutLiveStatus(n)
    const keys = live.get(n.id)
    const data = (clean as { data?: unknown }).data
    return keys && isPlainObject(data) ? { ...clean, data: { ...data, ...keys } } : clean
  })
}
