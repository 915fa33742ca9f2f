// Sorting with MongoDB semantics: mixed types in BSON type order, and an array field sorts by its
// smallest element ascending / largest element descending.
import { CommandError, ErrorCodes } from './errors.ts'
import { collectPathValues, compareValues, isPlainObject } from './values.ts'

/** `natural` keys order by storage (insertion) order, for `{$natural: ±1}`. */
export interface SortKey { parts: string[]; dir: 1 | -1; natural?: boolean }

export function parseSort(spec: unknown): SortKey[] {
  if (spec === undefined || spec === null) return []
  if (!isPlainObject(spec)) throw new CommandError(ErrorCodes.BadValue, 'sort must be an object')
  const keys: SortKey[] = []
  for (const [path, raw] of Object.entries(spec)) {
    if (isPlainObject(raw)) {
      throw new CommandError(ErrorCodes.BadValue, `$meta sort on '${path}' is not supported by the embedded server`)
    }
    const n = Number(raw)
    if (n !== 1 && n !== -1) throw new CommandError(ErrorCodes.BadValue, `$sort key ordering must be 1 (for ascending) or -1 (for descending)`)
    keys.push(path === '$natural' ? { parts: [], dir: n, natural: true } : { parts: path.split('.'), dir: n })
  }
  return keys
}

function sortValue(doc: unknown, key: SortKey): unknown {
  // The common case, a top-level scalar field, needs no path walk.
  if (key.parts.length === 1 && isPlainObject(doc)) {
    const v = doc[key.parts[0]]
    if (v !== undefined && v !== null && !Array.isArray(v) && Object.hasOwn(doc, key.parts[0])) return v
  }
  const { values, found } = collectPathValues(doc, key.parts)
  if (!found || values.length === 0) return null
  let best = values[0]
  for (let i = 1; i < values.length; i++) {
    const c = compareValues(values[i], best)
    if (key.dir === 1 ? c < 0 : c > 0) best = values[i]
  }
  return best
}

/** Stable sort returning a new array; keys are extracted once per document. */
export function sortDocuments<T>(docs: readonly T[], keys: readonly SortKey[]): T[] {
  if (keys.length === 0) return docs.slice()
  const decorated = docs.map((doc, i) => ({ doc, values: keys.map((k) => (k.natural ? i : sortValue(doc, k))) }))
  decorated.sort((a, b) => {
    for (let i = 0; i < keys.length; i++) {
      const c = compareValues(a.values[i], b.values[i])
      if (c !== 0) return c * keys[i].dir
    }
    return 0
  })
  return decorated.map((d) => d.doc)
}

