// What a dry run would change, as leaf paths a user can read ("spec.template.spec.containers[name=web].image").
// Both sides are server objects (live, and the dry-run result), so server defaults appear on both and cancel
// out; what the server alone maintains (identity, bookkeeping, status) is dropped before comparing.
import { isDeepStrictEqual } from 'node:util'

export interface FieldChange { path: string; old?: unknown; new?: unknown }
export interface ObjectDiff { changed: FieldChange[]; added: FieldChange[]; removed: FieldChange[] }

export const HIDDEN = '(hidden)'

// Written by the server or by controllers on every object; a user's graph never sets them.
const SERVER_METADATA = ['managedFields', 'resourceVersion', 'generation', 'uid', 'creationTimestamp', 'selfLink', 'deletionTimestamp', 'deletionGracePeriodSeconds']
const SERVER_ANNOTATIONS = ['kubectl.kubernetes.io/last-applied-configuration', 'deployment.kubernetes.io/revision']

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** A copy without server bookkeeping, status, nulls and empty maps/lists (absent and empty mean the same to a user). */
export function normaliseObject(obj: unknown): Record<string, unknown> {
  if (!isObject(obj)) return {}
  const copy = JSON.parse(JSON.stringify(obj)) as Record<string, unknown>
  delete copy.status
  const meta = copy.metadata
  if (isObject(meta)) {
    for (const k of SERVER_METADATA) delete meta[k]
    if (isObject(meta.annotations)) for (const k of SERVER_ANNOTATIONS) delete meta.annotations[k]
  }
  return (prune(copy) ?? {}) as Record<string, unknown>
}

function prune(v: unknown): unknown {
  if (Array.isArray(v)) {
    const items = v.map(prune).filter((x) => x !== undefined)
    return items.length ? items : undefined
  }
  if (isObject(v)) {
    const out: Record<string, unknown> = {}
    for (const [k, x] of Object.entries(v)) {
      const p = prune(x)
      if (p !== undefined) out[k] = p
    }
    return Object.keys(out).length ? out : undefined
  }
  return v === null ? undefined : v
}

const IDENT = /^[A-Za-z_$][\w$]*$/

/** The path of `key` under `path`: dotted when an identifier, `["key"]` otherwise (labels, annotations). */
export function child(path: string, key: string): string {
  if (IDENT.test(key)) return path ? `${path}.${key}` : key
  return `${path}[${JSON.stringify(key)}]`
}

/** Lists of objects each with a distinct string `name` (containers, env, ports, volumes…) are keyed by it. */
function nameKeyed(list: unknown[]): boolean {
  const names = new Set<string>()
  for (const item of list) {
    if (!isObject(item) || typeof item.name !== 'string' || names.has(item.name)) return false
    names.add(item.name)
  }
  return true
}

/** Leaf path → value. Lists of scalars are one leaf: `args` changing reads better whole than by index. */
export function leaves(v: unknown, path = '', out = new Map<string, unknown>()): Map<string, unknown> {
  if (isObject(v)) {
    for (const [k, x] of Object.entries(v)) leaves(x, child(path, k), out)
  } else if (Array.isArray(v) && v.some((x) => isObject(x) || Array.isArray(x))) {
    const keyed = nameKeyed(v)
    v.forEach((x, i) => leaves(x, `${path}[${keyed ? `name=${(x as { name: string }).name}` : i}]`, out))
  } else {
    out.set(path, v)
  }
  return out
}

export interface DiffOptions {
  /** Secret: every value under data/stringData is shown as "(hidden)". */
  secret?: boolean
  /** Applied to every string value shown (run-time env values must not reach a reply). */
  redact?: (text: string) => string
}

const SECRET_PATH = /^(data|stringData)(\.|\[|$)/

function shown(path: string, value: unknown, o: DiffOptions): unknown {
  if (value === undefined) return undefined
  if (o.secret && SECRET_PATH.test(path)) return HIDDEN
  if (o.redact) {
    if (typeof value === 'string') return o.redact(value)
    if (Array.isArray(value)) return value.map((x) => (typeof x === 'string' ? o.redact!(x) : x))
  }
  return value
}

/** Field changes from `before` (undefined: the object does not exist) to `after`, both normalised first. */
export function diffObjects(before: unknown, after: unknown, o: DiffOptions = {}): ObjectDiff {
  const a = leaves(normaliseObject(before))
  const b = leaves(normaliseObject(after))
  const diff: ObjectDiff = { changed: [], added: [], removed: [] }
  for (const [path, value] of b) {
    if (!a.has(path)) diff.added.push({ path, new: shown(path, value, o) })
    else if (!isDeepStrictEqual(a.get(path), value)) diff.changed.push({ path, old: shown(path, a.get(path), o), new: shown(path, value, o) })
  }
  for (const [path, value] of a) if (!b.has(path)) diff.removed.push({ path, old: shown(path, value, o) })
  return diff
}

/** Equal once server bookkeeping and status are set aside. */
export function sameObject(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(normaliseObject(a), normaliseObject(b))
}

export function isEmptyDiff(d: ObjectDiff): boolean {
  return d.changed.length === 0 && d.added.length === 0 && d.removed.length === 0
}
