// Value helpers shared by the index, planner, sorter and error messages. Stored documents hold the
// values BSON.deserialize produced (numbers promoted to JS numbers, Dates, bson class instances), so
// everything here dispatches on `typeof` first and on bson's `_bsontype` tag second.

export type Doc = Record<string, unknown>

interface BsonTagged { _bsontype?: string }

export function bsonTag(v: object): string | undefined {
  return (v as BsonTagged)._bsontype
}

export function isPlainObject(v: unknown): v is Doc {
  if (v === null || typeof v !== 'object') return false
  const proto: unknown = Object.getPrototypeOf(v)
  return proto === Object.prototype || proto === null
}

export function isDigits(s: string): boolean {
  if (s.length === 0) return false
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 48 || c > 57) return false
  }
  return true
}

// Copy-on-write needs an independent copy of the mutable parts of a document. bson class instances are
// treated as immutable values and shared; Dates are mutable in JS, so they are copied.
export function cloneValue<T>(v: T): T {
  if (v === null || typeof v !== 'object') return v
  if (Array.isArray(v)) return v.map(cloneValue) as T
  if (v instanceof Date) return new Date(v.getTime()) as T
  if (isPlainObject(v)) {
    const out: Doc = {}
    for (const k of Object.keys(v)) out[k] = cloneValue(v[k])
    return out as T
  }
  return v
}

function numberKey(n: number): string {
  if (Number.isNaN(n)) return 'dNaN'
  if (n === 0) return 'd0' // folds -0 into 0, as MongoDB's equality does
  return 'd' + String(n)
}

function toNumberLike(v: object): number | undefined {
  switch (bsonTag(v)) {
    case 'Int32':
    case 'Double':
      return (v as { valueOf(): number }).valueOf()
    case 'Long': {
      const n = Number((v as { toString(): string }).toString())
      return n
    }
    case 'Decimal128':
      return Number((v as { toString(): string }).toString())
    default:
      return undefined
  }
}

/**
 * A canonical string for a value such that two values get the same string exactly when MongoDB's
 * equality considers them equal (numbers compare across int/long/double; embedded documents are
 * field-order sensitive). Used as the key of index maps.
 */
export function encodeKey(v: unknown): string {
  switch (typeof v) {
    case 'undefined':
      return 'n'
    case 'number':
      return numberKey(v)
    case 'string':
      return 's' + JSON.stringify(v)
    case 'boolean':
      return v ? 'b1' : 'b0'
    case 'bigint':
      return Number.isSafeInteger(Number(v)) ? numberKey(Number(v)) : 'd' + v.toString()
    case 'object':
      return encodeObjectKey(v)
    default:
      return 'u' + String(v)
  }
}

function encodeObjectKey(v: object | null): string {
  if (v === null) return 'n'
  if (Array.isArray(v)) return '[' + v.map(encodeKey).join(',') + ']'
  if (v instanceof Date) return 't' + String(v.getTime())
  if (v instanceof RegExp) return 'r' + JSON.stringify(v.source) + '/' + v.flags
  if (isPlainObject(v)) {
    let s = '{'
    let first = true
    for (const k of Object.keys(v)) {
      const x = v[k]
      if (x === undefined) continue
      s += (first ? '' : ',') + JSON.stringify(k) + ':' + encodeKey(x)
      first = false
    }
    return s + '}'
  }
  if (v instanceof Uint8Array) return 'x0:' + Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64')
  const tag = bsonTag(v)
  switch (tag) {
    case 'ObjectId':
      return 'o' + (v as { toHexString(): string }).toHexString()
    case 'Int32':
    case 'Double':
    case 'Decimal128':
      return numberKey(toNumberLike(v) ?? NaN)
    case 'Long': {
      const text = (v as { toString(): string }).toString()
      const n = Number(text)
      return Number.isSafeInteger(n) ? numberKey(n) : 'd' + text
    }
    case 'Binary': {
      const b = v as { sub_type: number; toString(enc: 'base64'): string }
      return 'x' + String(b.sub_type) + ':' + b.toString('base64')
    }
    case 'Timestamp':
      return 'T' + (v as { toString(): string }).toString()
    case 'MinKey':
      return 'min'
    case 'MaxKey':
      return 'max'
    case 'BSONRegExp': {
      const r = v as { pattern: string; options: string }
      return 'r' + JSON.stringify(r.pattern) + '/' + r.options
    }
    case 'BSONSymbol':
      return 's' + JSON.stringify((v as { valueOf(): string }).valueOf())
    case 'Code': {
      const c = v as { code: string; scope?: unknown }
      return 'c' + JSON.stringify(c.code) + (c.scope ? encodeKey(c.scope) : '')
    }
    case 'DBRef': {
      const r = v as { collection: string; oid: unknown; db?: string }
      return 'R' + JSON.stringify(r.collection) + encodeKey(r.oid) + (r.db ? JSON.stringify(r.db) : '')
    }
    default:
      return 'u' + (tag ?? v.constructor?.name ?? 'object') + ':' + String(v)
  }
}

// MongoDB's cross-type ordering: MinKey < null < numbers < strings < objects < arrays < binary <
// ObjectId < boolean < Date < Timestamp < regex < MaxKey. The empty-array marker sorts below null,
// which is where MongoDB puts `[]` when it is the sort key.
export const EMPTY_ARRAY: unique symbol = Symbol('empty array')

export function typeRank(v: unknown): number {
  switch (typeof v) {
    case 'undefined':
      return 2
    case 'number':
    case 'bigint':
      return 3
    case 'string':
      return 4
    case 'boolean':
      return 9
    case 'symbol':
      return v === EMPTY_ARRAY ? 1.5 : 14
    case 'object':
      break
    default:
      return 14
  }
  if (v === null) return 2
  if (Array.isArray(v)) return 6
  if (v instanceof Date) return 10
  if (v instanceof RegExp) return 12
  if (isPlainObject(v)) return 5
  if (v instanceof Uint8Array) return 7
  switch (bsonTag(v)) {
    case 'MinKey':
      return 1
    case 'Int32':
    case 'Double':
    case 'Long':
    case 'Decimal128':
      return 3
    case 'BSONSymbol':
      return 4
    case 'DBRef':
      return 5
    case 'Binary':
      return 7
    case 'ObjectId':
      return 8
    case 'Timestamp':
      return 11
    case 'BSONRegExp':
      return 12
    case 'Code':
      return 12.5
    case 'MaxKey':
      return 13
    default:
      return 5
  }
}

function asNumber(v: unknown): number {
  if (typeof v === 'number') return v
  if (typeof v === 'bigint') return Number(v)
  return toNumberLike(v as object) ?? NaN
}

function cmp<T extends number | string>(a: T, b: T): number {
  return a < b ? -1 : a > b ? 1 : 0
}

function compareNumbers(a: number, b: number): number {
  // MongoDB orders NaN below every other number.
  const an = Number.isNaN(a)
  const bn = Number.isNaN(b)
  if (an || bn) return an && bn ? 0 : an ? -1 : 1
  return cmp(a, b)
}

/** Total order over stored values following MongoDB's BSON comparison rules (close enough for sorting). */
export function compareValues(a: unknown, b: unknown): number {
  const ra = typeRank(a)
  const rb = typeRank(b)
  if (ra !== rb) return ra < rb ? -1 : 1
  switch (ra) {
    case 1:
    case 1.5:
    case 2:
    case 13:
      return 0
    case 3:
      return compareNumbers(asNumber(a), asNumber(b))
    case 4:
      return cmp(String(a), String(b))
    case 5:
      return compareObjects(a as Doc, b as Doc)
    case 6:
      return compareArrays(a as unknown[], b as unknown[])
    case 7:
      return compareBinary(a, b)
    case 8:
      return cmp((a as { toHexString(): string }).toHexString(), (b as { toHexString(): string }).toHexString())
    case 9:
      return cmp(Number(a), Number(b))
    case 10:
      return compareNumbers((a as Date).getTime(), (b as Date).getTime())
    case 11: {
      const ta = a as { t: number; i: number }
      const tb = b as { t: number; i: number }
      return cmp(ta.t, tb.t) || cmp(ta.i, tb.i)
    }
    case 12: {
      const [sa, fa] = regexParts(a)
      const [sb, fb] = regexParts(b)
      return cmp(sa, sb) || cmp(fa, fb)
    }
    default:
      return cmp(encodeKey(a), encodeKey(b))
  }
}

function regexParts(v: unknown): [string, string] {
  if (v instanceof RegExp) return [v.source, v.flags]
  const r = v as { pattern?: string; options?: string; code?: string }
  return [r.pattern ?? r.code ?? '', r.options ?? '']
}

function compareObjects(a: Doc, b: Doc): number {
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  const n = Math.min(ka.length, kb.length)
  for (let i = 0; i < n; i++) {
    const va = a[ka[i]]
    const vb = b[kb[i]]
    const r = typeRank(va) - typeRank(vb)
    if (r !== 0) return r < 0 ? -1 : 1
    const k = cmp(ka[i], kb[i])
    if (k !== 0) return k
    const v = compareValues(va, vb)
    if (v !== 0) return v
  }
  return cmp(ka.length, kb.length)
}

function compareArrays(a: unknown[], b: unknown[]): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const v = compareValues(a[i], b[i])
    if (v !== 0) return v
  }
  return cmp(a.length, b.length)
}

function binaryBytes(v: unknown): { subtype: number; bytes: Uint8Array } {
  if (v instanceof Uint8Array) return { subtype: 0, bytes: v }
  const b = v as { sub_type: number; buffer: Uint8Array; position: number }
  return { subtype: b.sub_type, bytes: b.buffer.subarray(0, b.position) }
}

function compareBinary(a: unknown, b: unknown): number {
  const x = binaryBytes(a)
  const y = binaryBytes(b)
  return cmp(x.bytes.length, y.bytes.length) || cmp(x.subtype, y.subtype) || Buffer.compare(x.bytes, y.bytes)
}

/**
 * Values reachable through a dotted path, expanding arrays the way MongoDB's index key generation and
 * sort key extraction do: an array met along the path fans out over its elements (unless the next path
 * part is a numeric position), and an array at the end of the path contributes its elements.
 * `found` tells whether the path exists at all (a missing field is different from one holding null).
 */
export function collectPathValues(doc: unknown, parts: readonly string[]): { values: unknown[]; found: boolean } {
  const values: unknown[] = []
  let found = false
  const visit = (node: unknown, i: number): void => {
    if (i === parts.length) {
      found = true
      if (Array.isArray(node)) {
        if (node.length === 0) values.push(EMPTY_ARRAY)
        else for (const el of node) values.push(el)
      } else {
        values.push(node)
      }
      return
    }
    const part = parts[i]
    if (Array.isArray(node)) {
      if (isDigits(part)) {
        const idx = Number(part)
        if (idx < node.length) visit(node[idx], i + 1)
        return
      }
      for (const el of node) if (isPlainObject(el)) visit(el, i)
      return
    }
    if (isPlainObject(node)) {
      if (Object.prototype.hasOwnProperty.call(node, part) && node[part] !== undefined) visit(node[part], i + 1)
    }
  }
  visit(doc, 0)
  return { values, found }
}

/** Renders a key value the way MongoDB prints it in duplicate-key messages, e.g. `{ email: "a" }`. */
export function formatValue(v: unknown): string {
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v)
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(v)
    case 'undefined':
      return 'null'
    case 'symbol':
      return 'undefined'
    default:
      break
  }
  if (v === null) return 'null'
  if (Array.isArray(v)) return '[ ' + v.map(formatValue).join(', ') + ' ]'
  if (v instanceof Date) return `new Date(${v.getTime()})`
  if (v instanceof RegExp) return String(v)
  if (isPlainObject(v)) return formatDocument(v)
  switch (bsonTag(v as object)) {
    case 'ObjectId':
      return `ObjectId('${(v as { toHexString(): string }).toHexString()}')`
    case 'Long':
    case 'Int32':
    case 'Double':
    case 'Decimal128':
      return String(asNumber(v))
    default:
      return String(v)
  }
}

export function formatDocument(d: Doc): string {
  const keys = Object.keys(d)
  if (keys.length === 0) return '{}'
  return '{ ' + keys.map((k) => `${k}: ${formatValue(d[k])}`).join(', ') + ' }'
}

export function splitPath(path: string): string[] {
  return path.split('.')
}
