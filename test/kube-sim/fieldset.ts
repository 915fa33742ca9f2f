import { keyOf, listKeys, sameKey } from './schema.ts'
import { deepEqual, isObject, type Json, type JsonObject } from './util.ts'

// Field sets in the managedFields "FieldsV1" encoding. A path is a list of path elements:
// `f:<field>` for a map field and `k:<json key>` for an item of a keyed list. Internally a set is a
// Set of JSON-encoded paths; `toFieldsV1`/`fromFieldsV1` convert to and from the nested wire form,
// where `.` marks a node that is itself owned (list items) and `{}` marks an owned leaf.

export type Path = string[]
export type FieldSet = Set<string>

const enc = (p: Path) => JSON.stringify(p)
const dec = (s: string) => JSON.parse(s) as Path

/** Metadata the server owns; never part of anyone's field set. */
const serverMeta = new Set(['name', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'managedFields', 'selfLink', 'generateName'])

/** The fields an object sets: every leaf, plus every keyed-list item (so dropping an item is a removal). */
export function fieldSetOf(obj: JsonObject, opts: { skipStatus?: boolean; onlyStatus?: boolean } = {}): FieldSet {
  const out: FieldSet = new Set()
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'apiVersion' || k === 'kind' || v === undefined) continue
    if (opts.skipStatus && k === 'status') continue
    if (opts.onlyStatus && k !== 'status') continue
    if (k === 'metadata' && isObject(v)) {
      for (const [mk, mv] of Object.entries(v)) {
        if (serverMeta.has(mk) || mv === undefined) continue
        walk(mv, ['f:metadata', `f:${mk}`], mk, out)
      }
      continue
    }
    walk(v, [`f:${k}`], k, out)
  }
  return out
}

function walk(v: Json, path: Path, field: string, out: FieldSet): void {
  if (isObject(v) && Object.keys(v).length > 0) {
    for (const [k, x] of Object.entries(v)) if (x !== undefined) walk(x, [...path, `f:${k}`], k, out)
    return
  }
  if (Array.isArray(v) && v.length > 0) {
    const keys = listKeys(field, v)
    if (keys) {
      for (const item of v) {
        const ip = [...path, `k:${JSON.stringify(keyOf(item, keys))}`]
        out.add(enc(ip))
        for (const [k, x] of Object.entries(item as JsonObject)) if (x !== undefined) walk(x, [...ip, `f:${k}`], k, out)
      }
      return
    }
  }
  out.add(enc(path))
}

/** Resolves a path inside an object; `found` distinguishes an absent field from a null one. */
export function lookup(obj: Json, path: Path): { found: boolean; value?: Json; parent?: Json; index?: number | string } {
  let cur: Json = obj
  let parent: Json
  let index: number | string | undefined
  let field = ''
  for (const pe of path) {
    if (pe.startsWith('f:')) {
      field = pe.slice(2)
      if (!isObject(cur) || !(field in cur)) return { found: false }
      parent = cur; index = field; cur = cur[field]
    } else if (pe.startsWith('k:')) {
      if (!Array.isArray(cur)) return { found: false }
      const key = JSON.parse(pe.slice(2)) as JsonObject
      const keys = Object.keys(key)
      const i = cur.findIndex((x) => isObject(x) && sameKey(x, key, keys))
      if (i < 0) return { found: false }
      parent = cur; index = i; cur = cur[i]
    } else return { found: false }
  }
  return { found: true, value: cur, parent, index }
}

export function removePath(obj: Json, path: Path): void {
  const r = lookup(obj, path)
  if (!r.found || r.parent === undefined) return
  if (Array.isArray(r.parent)) r.parent.splice(r.index as number, 1)
  else delete r.parent[r.index as string]
}

export const isItem = (p: Path) => p[p.length - 1].startsWith('k:')

export function paths(s: FieldSet): Path[] { return [...s].map(dec) }
export function union(a: FieldSet, b: FieldSet): FieldSet { return new Set([...a, ...b]) }
export function minus(a: FieldSet, b: FieldSet): FieldSet { return new Set([...a].filter((x) => !b.has(x))) }
export function has(s: FieldSet, p: Path): boolean { return s.has(enc(p)) }
export function encode(p: Path): string { return enc(p) }

/** True when any member of `s` is `p` or lies below it. */
export function coversOrBelow(s: FieldSet, p: Path): boolean {
  for (const m of s) {
    const mp = dec(m)
    if (mp.length >= p.length && p.every((pe, i) => mp[i] === pe)) return true
  }
  return false
}

/** Members whose values differ between two objects (added or changed); items count when newly present. */
export function changedBetween(before: JsonObject | undefined, after: JsonObject, set: FieldSet): FieldSet {
  const out: FieldSet = new Set()
  for (const s of set) {
    const p = dec(s)
    const a = lookup(after, p)
    const b = before ? lookup(before, p) : { found: false }
    if (isItem(p)) { if (!b.found) out.add(s) } else if (!b.found || !deepEqual(a.value, b.value)) out.add(s)
  }
  return out
}

export function toFieldsV1(s: FieldSet): JsonObject {
  const root: JsonObject = {}
  for (const p of paths(s).sort((a, b) => a.length - b.length)) {
    let node = root
    for (const pe of p) node = (node[pe] ??= {})
    if (isItem(p)) node['.'] = {}
  }
  // An owned map that later gained children keeps its own membership via '.'.
  for (const p of paths(s)) {
    let node = root
    for (const pe of p) node = node[pe]
    if (Object.keys(node).some((k) => k !== '.')) node['.'] = {}
  }
  return sortTree(root)
}

function sortTree(n: JsonObject): JsonObject {
  const out: JsonObject = {}
  for (const k of Object.keys(n).sort((a, b) => (a === '.' ? -1 : b === '.' ? 1 : a < b ? -1 : a > b ? 1 : 0))) out[k] = sortTree(n[k])
  return out
}

export function fromFieldsV1(tree: JsonObject | undefined): FieldSet {
  const out: FieldSet = new Set()
  const visit = (n: JsonObject, p: Path) => {
    const kids = Object.keys(n).filter((k) => k !== '.')
    if (p.length && (kids.length === 0 || '.' in n)) out.add(enc(p))
    for (const k of kids) visit(n[k], [...p, k])
  }
  if (tree) visit(tree, [])
  return out
}

/** `.spec.template.spec.containers[name="app"].image`: the field path notation conflict messages use. */
export function describePath(p: Path): string {
  return p.map((pe) => {
    if (pe.startsWith('f:')) return `.${pe.slice(2)}`
    const key = JSON.parse(pe.slice(2)) as JsonObject
    return `[${Object.entries(key).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}]`
  }).join('')
}
