// An in-memory secondary index: a map from the canonical encoding of a key to the `_id` keys of the
// documents holding it. Used both to enforce uniqueness and to answer equality lookups without a scan.
import { CommandError, ErrorCodes } from './errors.ts'
import { compileFilter, type Query } from './mingo-context.ts'
import { collectPathValues, EMPTY_ARRAY, encodeKey, isPlainObject, type Doc } from './values.ts'

export interface IndexSpec {
  v: number
  key: Doc
  name: string
  unique?: boolean
  sparse?: boolean
  expireAfterSeconds?: number
  partialFilterExpression?: Doc
  [option: string]: unknown
}

export interface IndexEntry {
  /** Canonical encoding of the full (possibly compound) key. */
  key: string
  /** Canonical encoding of the first field only, for prefix lookups on compound indexes. */
  first: string
  values: unknown[]
}

// Component separator for compound keys: encodeKey never emits a raw NUL (JSON escapes it in strings).
const SEP = '\u0000'

export class SecondaryIndex {
  readonly spec: IndexSpec
  readonly fields: string[]
  private readonly parts: string[][]
  private readonly partial: Query | null
  readonly entries = new Map<string, Set<string>>()
  readonly firstFieldEntries: Map<string, Set<string>> | null

  constructor(spec: IndexSpec) {
    this.spec = spec
    this.fields = Object.keys(spec.key)
    this.parts = this.fields.map((f) => f.split('.'))
    this.partial = isPlainObject(spec.partialFilterExpression) ? compileFilter(spec.partialFilterExpression) : null
    this.firstFieldEntries = this.fields.length > 1 ? new Map() : null
  }

  get name(): string { return this.spec.name }
  get unique(): boolean { return this.spec.unique === true }
  get sparse(): boolean { return this.spec.sparse === true }
  get isPartial(): boolean { return this.partial !== null }

  get ttlSeconds(): number | undefined {
    const s = this.spec.expireAfterSeconds
    return typeof s === 'number' && this.fields.length === 1 ? s : undefined
  }

  /** Index entries for a document, or null when a sparse/partial index leaves the document out. */
  entriesFor(doc: Doc): IndexEntry[] | null {
    if (this.partial && !this.partial.test(doc)) return null
    const perField = this.parts.map((p) => collectPathValues(doc, p))
    if (this.sparse && perField.every((f) => !f.found)) return null
    const lists = perField.map((f) => (f.found ? f.values : [null]))
    const multi = lists.filter((l) => l.length > 1)
    if (multi.length > 1) {
      throw new CommandError(ErrorCodes.CannotIndexParallelArrays, `cannot index parallel arrays in index ${this.name}`)
    }
    const out: IndexEntry[] = []
    const seen = new Set<string>()
    const width = multi.length === 1 ? multi[0].length : 1
    for (let i = 0; i < width; i++) {
      const values = lists.map((l) => (l.length > 1 ? l[i] : l[0]))
      const encoded = values.map(encodeKey)
      const key = encoded.join(SEP)
      if (seen.has(key)) continue
      seen.add(key)
      out.push({ key, first: encoded[0], values: values.map((v) => (v === EMPTY_ARRAY ? undefined : v)) })
    }
    return out
  }

  /** Encodes a lookup tuple (one value per index field) the same way entriesFor does. */
  encodeTuple(values: readonly unknown[]): string {
    return values.map(encodeKey).join(SEP)
  }

  add(idKey: string, entries: IndexEntry[] | null): void {
    if (!entries) return
    for (const e of entries) {
      addTo(this.entries, e.key, idKey)
      if (this.firstFieldEntries) addTo(this.firstFieldEntries, e.first, idKey)
    }
  }

  remove(idKey: string, entries: IndexEntry[] | null): void {
    if (!entries) return
    for (const e of entries) {
      removeFrom(this.entries, e.key, idKey)
      if (this.firstFieldEntries) removeFrom(this.firstFieldEntries, e.first, idKey)
    }
  }

  clear(): void {
    this.entries.clear()
    this.firstFieldEntries?.clear()
  }

  keyValue(entry: IndexEntry): Doc {
    const out: Doc = {}
    this.fields.forEach((f, i) => { out[f] = entry.values[i] ?? null })
    return out
  }
}

function addTo(map: Map<string, Set<string>>, key: string, idKey: string): void {
  const set = map.get(key)
  if (set) set.add(idKey)
  else map.set(key, new Set([idKey]))
}

function removeFrom(map: Map<string, Set<string>>, key: string, idKey: string): void {
  const set = map.get(key)
  if (!set) return
  set.delete(idKey)
  if (set.size === 0) map.delete(key)
}

const ALLOWED_INDEX_OPTIONS = new Set([
  'key', 'name', 'unique', 'sparse', 'expireAfterSeconds', 'partialFilterExpression', 'background', 'v', 'ns',
  'hidden', 'collation', 'dropDups',
])

/** Validates a createIndexes entry and returns the normalised spec that listIndexes will report. */
export function normalizeIndexSpec(raw: unknown): IndexSpec {
  if (!isPlainObject(raw)) throw new CommandError(ErrorCodes.BadValue, 'index specification must be an object')
  const key = raw.key
  if (!isPlainObject(key) || Object.keys(key).length === 0) {
    throw new CommandError(ErrorCodes.CannotCreateIndex, "index specification must have a non-empty 'key' document")
  }
  for (const [field, dir] of Object.entries(key)) {
    if (field === '' || field.startsWith('$')) throw new CommandError(ErrorCodes.CannotCreateIndex, `bad index key field '${field}'`)
    if (typeof dir === 'string') {
      if (dir !== 'hashed') {
        throw new CommandError(ErrorCodes.CannotCreateIndex, `index type '${dir}' is not supported by the embedded MongoDB server`)
      }
    } else if (typeof dir !== 'number' || dir === 0 || Number.isNaN(dir)) {
      throw new CommandError(ErrorCodes.CannotCreateIndex, `bad index key pattern: values must be 1, -1 or 'hashed'`)
    }
  }
  const name = typeof raw.name === 'string' && raw.name ? raw.name : defaultIndexName(key)
  for (const opt of Object.keys(raw)) {
    if (!ALLOWED_INDEX_OPTIONS.has(opt)) {
      throw new CommandError(ErrorCodes.InvalidOptions, `index option '${opt}' is not supported by the embedded MongoDB server`)
    }
  }
  if (raw.collation !== undefined) {
    throw new CommandError(ErrorCodes.InvalidOptions, 'index collation is not supported by the embedded MongoDB server')
  }
  const spec: IndexSpec = { v: 2, key, name }
  if (raw.unique === true) spec.unique = true
  if (raw.sparse === true) spec.sparse = true
  if (raw.expireAfterSeconds !== undefined) {
    const s = Number(raw.expireAfterSeconds)
    if (!Number.isFinite(s) || s < 0) throw new CommandError(ErrorCodes.CannotCreateIndex, 'expireAfterSeconds must be a non-negative number')
    spec.expireAfterSeconds = s
  }
  if (raw.partialFilterExpression !== undefined) {
    if (!isPlainObject(raw.partialFilterExpression)) {
      throw new CommandError(ErrorCodes.CannotCreateIndex, 'partialFilterExpression must be an object')
    }
    spec.partialFilterExpression = raw.partialFilterExpression
  }
  if (raw.hidden === true) spec.hidden = true
  return spec
}

export function defaultIndexName(key: Doc): string {
  return Object.entries(key).map(([f, d]) => `${f}_${String(d)}`).join('_')
}

/** Whether two specs describe the same index (same key and the options that change behaviour). */
export function sameIndexOptions(a: IndexSpec, b: IndexSpec): boolean {
  return (
    encodeKey(a.key) === encodeKey(b.key) &&
    !!a.unique === !!b.unique &&
    !!a.sparse === !!b.sparse &&
    a.expireAfterSeconds === b.expireAfterSeconds &&
    encodeKey(a.partialFilterExpression) === encodeKey(b.partialFilterExpression)
  )
}
