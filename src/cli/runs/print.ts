// How runs, dry-run diffs, drift and graph changes read in a terminal. Plain text, one object per header
// line and one field per line below it, so the output greps and diffs well.
import type { components, operations } from '../api/openapi.ts'
import type { Run } from './wait.ts'

type RunNode = Run['nodes'][number]
type FieldDiff = NonNullable<RunNode['diff']>['changed'][number]
export type Drift = operations['getWorkflowDrift']['responses'][200]['content']['application/json']
export type GraphChanges = operations['rollbackWorkflow']['responses'][200]['content']['application/json']['changes']
type CanvasNode = components['schemas']['CanvasNode']
type CanvasEdge = components['schemas']['CanvasEdge']

// C0, DEL and C1 (whose \u009b is a one-byte CSI): JSON.stringify would leave the last two as they are.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' }

/**
 * Text from the cluster or the server on one line, with its control characters escaped: a value someone
 * put in a label cannot move the cursor or recolour the terminal it is printed to.
 */
export function clean(text: string): string {
  return text.replace(CONTROL, (ch) => NAMED[ch] ?? `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/** A value on one line: strings as they are (control characters escaped), anything else as JSON. */
export function value(v: unknown): string {
  if (v === undefined) return '(none)'
  return typeof v === 'string' ? clean(v) : JSON.stringify(v)
}

function objectName(o: { kind: string; name: string; namespace: string | null }): string {
  return clean(`${o.kind}/${o.name}${o.namespace ? ` (${o.namespace})` : ''}`)
}

/**
 * The action and the message, without saying the action twice: the API's message often starts with it
 * ("configured", "unchanged: the cluster already matches").
 */
function outcome(action: string, message: string | null | undefined): string {
  if (!message) return action
  const text = clean(message)
  return text === action || text.startsWith(`${action}:`) || text.startsWith(`${action},`) ? text : `${action}, ${text}`
}

/** One line per object of the run: `Kind/name (namespace): action, message`. */
export function outcomeLines(run: Run): string {
  return run.nodes.map((n) => `${objectName(n)}: ${outcome(n.action, n.message)}\n`).join('')
}

/** The run's last line: its id, status, version and how long it took. */
export function summaryLine(run: Run): string {
  const what = run.dry_run ? 'dry run' : run.trigger === 'manual' ? 'run' : `${run.trigger.replace('_', ' ')} run`
  const took = run.duration_ms !== null ? `, ${(run.duration_ms / 1000).toFixed(1)} s` : ''
  return `${what} ${run.id} ${run.status} (version ${run.version} on ${run.cluster}${run.namespace ? `/${run.namespace}` : ''}${took})\n`
}

/** The objects a dry run would change; unchanged ones are left out. */
export function changedNodes(run: Run): RunNode[] {
  return run.nodes.filter((n) => n.action !== 'unchanged')
}

/**
 * A dry run as a diff: `Kind/name (namespace): action`, then `~ path` with `- live` and `+ applied` below
 * it, `+ path: value` for a field the run would add, `- path: value` for one it would remove.
 */
export function diffText(nodes: readonly RunNode[]): string {
  let out = ''
  for (const n of nodes) {
    out += `${objectName(n)}: ${n.action}${n.action === 'failed' || n.action === 'skipped' ? `, ${clean(n.message)}` : ''}\n`
    out += fieldLines(n.diff?.changed ?? [], n.diff?.added ?? [], n.diff?.removed ?? [])
  }
  return out
}

function fieldLines(changed: readonly FieldDiff[], added: readonly FieldDiff[], removed: readonly FieldDiff[]): string {
  let out = ''
  for (const c of changed) out += `  ~ ${clean(c.path)}\n    - ${value(c.old)}\n    + ${value(c.new)}\n`
  for (const a of added) out += `  + ${clean(a.path)}: ${value(a.new)}\n`
  for (const r of removed) out += `  - ${clean(r.path)}: ${value(r.old)}\n`
  return out
}

/** Drifted objects: `Kind/name (namespace): drifted|missing`, then `~ path` with `- applied` and `+ live`. */
export function driftText(drift: Drift): string {
  let out = ''
  for (const node of drift.nodes) {
    for (const o of node.objects) {
      out += `${objectName(o)}: ${o.missing ? 'missing (deleted from the cluster)' : 'drifted'}\n`
      for (const f of o.fields) out += `  ~ ${clean(f.path)}\n    - ${value(f.applied)}\n    + ${value(f.live)}\n`
    }
  }
  return out
}

export function driftedObjectCount(drift: Drift): number {
  return drift.nodes.reduce((sum, n) => sum + n.objects.length, 0)
}

/** The graph changes of a rollback: nodes and edges added, removed, modified (JSON pointers into them). */
export function graphChangesText(c: GraphChanges): string {
  const node = (n: CanvasNode) => clean(`node ${n.id} (${n.type}${typeof n.data?.name === 'string' ? ` ${n.data.name}` : ''})`)
  const edge = (e: CanvasEdge) => clean(`edge ${e.id} (${e.source} -> ${e.target})`)
  const pointer = (p: { path: string; old?: unknown; new?: unknown }) => `      ${clean(p.path)}: ${value(p.old)} -> ${value(p.new)}\n`
  let out = `graph changes, to version ${c.to_version}:\n`
  const before = out
  for (const n of c.added_nodes) out += `  + ${node(n)}\n`
  for (const n of c.removed_nodes) out += `  - ${node(n)}\n`
  for (const m of c.modified_nodes) out += `  ~ ${clean(`node ${m.node_id} (${m.type})`)}\n${m.changes.map(pointer).join('')}`
  for (const e of c.added_edges) out += `  + ${edge(e)}\n`
  for (const e of c.removed_edges) out += `  - ${edge(e)}\n`
  for (const m of c.modified_edges) out += `  ~ ${clean(`edge ${m.edge_id}`)}\n${m.changes.map(pointer).join('')}`
  if (out === before) out += '  (none: the graph is already that version\'s)\n'
  return out
}
