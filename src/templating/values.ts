// The engine's value model: what Go sees after decoding JSON into interface{} (with integers as int).
//   undefined  — an invalid reflect.Value (a missing key): prints as "<no value>"
//   null       — a nil interface{} stored in a map or slice (JSON null)
//   bigint     — Go int (int64); number — Go float64; string; boolean
//   GoValue[]  — []interface{};  Map<string, GoValue> — map[string]interface{}
export type GoValue = undefined | null | boolean | string | number | bigint | GoValue[] | GoMap
export type GoMap = Map<string, GoValue>

export class DataError extends Error {}

const INT64_LIMIT = 2 ** 63

/** Copies caller data into the value model. Only own enumerable data is read (never a prototype, getter
 *  results aside), so a template cannot reach anything but what was passed in. Integers become Go ints,
 *  other numbers float64, as the differential test's Go program decodes its JSON. */
export function fromJS(data: unknown, maxDepth: number): GoValue {
  const done = new WeakMap<object, GoValue>()
  const active = new WeakSet<object>()
  const convert = (v: unknown, depth: number, inArray: boolean): GoValue => {
    switch (typeof v) {
      case 'undefined': return inArray ? null : undefined
      case 'boolean': case 'string': return v
      case 'number': return Number.isInteger(v) && Math.abs(v) < INT64_LIMIT ? BigInt(v) : v
      case 'bigint': return v >= -(2n ** 63n) && v < 2n ** 63n ? v : Number(v)
      case 'function': case 'symbol': return inArray ? null : undefined
    }
    if (v === null) return null
    const obj = v as object
    const cached = done.get(obj)
    if (cached !== undefined) return cached
    if (depth >= maxDepth) throw new DataError(`data is nested deeper than ${maxDepth} levels`)
    if (active.has(obj)) throw new DataError('data contains a reference cycle')
    active.add(obj)
    let out: GoValue
    if (obj instanceof Date) {
      out = Number.isNaN(obj.getTime()) ? null : obj.toISOString()
    } else if (Array.isArray(obj)) {
      out = Array.from({ length: obj.length }, (_, i) => convert(Object.hasOwn(obj, i) ? obj[i] : null, depth + 1, true))
    } else if (obj instanceof Map) {
      out = new Map()
      for (const [k, x] of obj) {
        const c = convert(x, depth + 1, false)
        if (c !== undefined) out.set(String(k), c)
      }
    } else {
      out = new Map()
      for (const k of Object.keys(obj)) {
        const c = convert((obj as Record<string, unknown>)[k], depth + 1, false)
        if (c !== undefined) out.set(k, c)
      }
    }
    active.delete(obj)
    done.set(obj, out)
    return out
  }
  return convert(data, 0, false)
}

export function isMap(v: GoValue): v is GoMap {
  return v instanceof Map
}

/** Go's reflect type string of the dynamic value, or null for nil. */
export function typeName(v: GoValue): string | null {
  switch (typeof v) {
    case 'undefined': return null
    case 'string': return 'string'
    case 'bigint': return 'int'
    case 'number': return 'float64'
    case 'boolean': return 'bool'
  }
  if (v === null) return null
  return Array.isArray(v) ? '[]interface {}' : 'map[string]interface {}'
}

/** Go's template truth: false, 0, nil, and empty strings, slices and maps are false. */
export function isTrue(v: GoValue): boolean {
  switch (typeof v) {
    case 'undefined': return false
    case 'string': return v.length > 0
    case 'bigint': return v !== 0n
    case 'number': return v !== 0
    case 'boolean': return v
  }
  if (v === null) return false
  return Array.isArray(v) ? v.length > 0 : v.size > 0
}

/** Map keys in the order Go's fmt and range use (sorted by string). */
export function sortedKeys(m: GoMap): string[] {
  return [...m.keys()].sort((a, b) => compareGoStrings(a, b))
}

/** Go compares strings by UTF-8 bytes; UTF-16 order differs only around surrogates, so compare code points. */
export function compareGoStrings(a: string, b: string): number {
  if (a === b) return 0
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x === y) continue
    const xs = x >= 0xd800 && x <= 0xdfff
    const ys = y >= 0xd800 && y <= 0xdfff
    if (xs !== ys) return xs ? 1 : -1
    return x < y ? -1 : 1
  }
  return a.length - b.length
}

/** Converts a value back to plain JSON-like JS (ints beyond 2^53 lose precision, as in any JS number). */
export function toPlain(v: GoValue): unknown {
  switch (typeof v) {
    case 'bigint': return Number(v)
    case 'undefined': return null
  }
  if (Array.isArray(v)) return v.map(toPlain)
  // fromEntries defines own properties, so a "__proto__" key stays data.
  if (v instanceof Map) return Object.fromEntries(sortedKeys(v).map((k) => [k, toPlain(v.get(k))]))
  return v
}
