// One collection's documents and indexes. Documents are never mutated after they are stored: an update
// stores a new object, so cursors and in-flight replies can keep references to the old one.
import { CommandError, ErrorCodes } from './errors.ts'
import { equalityConstraints, soleIdEquality } from './planner.ts'
import { SecondaryIndex, type IndexEntry, type IndexSpec } from './secondary-index.ts'
import { encodeKey, formatDocument, type Doc } from './values.ts'

export const ID_INDEX_SPEC: IndexSpec = { v: 2, key: { _id: 1 }, name: '_id_' }

/** A pending change to one document: insert (after only), replace (both) or delete (before only). */
export interface Change {
  idKey: string
  before?: Doc
  after?: Doc
}

export interface PlanInfo {
  /** 'IDHACK' for _id lookups, 'IXSCAN' for secondary index lookups, 'COLLSCAN' otherwise. */
  stage: 'IDHACK' | 'IXSCAN' | 'COLLSCAN'
  indexName?: string
  keysExamined: number
}

export interface Candidates {
  docs: Iterable<Doc>
  plan: PlanInfo
  /** True when the candidates are exactly the matching documents (a filter on `_id` alone). */
  exact: boolean
}

interface PreparedChange extends Change {
  entries: Map<SecondaryIndex, IndexEntry[] | null>
}

export class Collection {
  readonly dbName: string
  readonly name: string
  readonly options: Doc
  readonly docs = new Map<string, Doc>()
  readonly indexes = new Map<string, SecondaryIndex>()

  constructor(dbName: string, name: string, options: Doc = {}) {
    this.dbName = dbName
    this.name = name
    this.options = options
  }

  get ns(): string { return `${this.dbName}.${this.name}` }

  indexSpecs(): IndexSpec[] {
    return [ID_INDEX_SPEC, ...[...this.indexes.values()].map((i) => i.spec)]
  }

  getById(id: unknown): Doc | undefined {
    return this.docs.get(encodeKey(id))
  }

  /**
   * The documents that can possibly match `filter`, using the `_id` map or a secondary index when the
   * filter pins the indexed fields to a few values; otherwise every document.
   */
  candidates(filter: Doc): Candidates {
    const sole = soleIdEquality(filter)
    if (sole) {
      const doc = this.docs.get(encodeKey(sole.value))
      return { docs: doc ? [doc] : [], plan: { stage: 'IDHACK', indexName: '_id_', keysExamined: 1 }, exact: true }
    }
    const eq = equalityConstraints(filter)
    const ids = eq.get('_id')
    if (ids) {
      const keys = unique(ids.map(encodeKey))
      const exact = eq.size === 1 && Object.keys(filter).length === 1
      return { docs: this.lookup(keys), plan: { stage: 'IDHACK', indexName: '_id_', keysExamined: keys.length }, exact }
    }
    let best: { idKeys: Set<string>; index: SecondaryIndex; keys: number } | null = null
    for (const index of this.indexes.values()) {
      const found = this.indexLookup(index, eq)
      if (found && (!best || found.idKeys.size < best.idKeys.size)) best = { ...found, index }
    }
    if (best) {
      return { docs: this.lookup(best.idKeys), plan: { stage: 'IXSCAN', indexName: best.index.name, keysExamined: best.keys }, exact: false }
    }
    return { docs: this.docs.values(), plan: { stage: 'COLLSCAN', keysExamined: 0 }, exact: false }
  }

  private indexLookup(index: SecondaryIndex, eq: Map<string, unknown[]>): { idKeys: Set<string>; keys: number } | null {
    if (index.isPartial) return null
    const perField = index.fields.map((f) => eq.get(f))
    const first = perField[0]
    if (!first) return null
    // Missing fields are indexed as null, but sparse indexes skip them and dotted paths through arrays
    // can match null in ways the keys do not capture, so null lookups only go to plain single-path indexes.
    const nullUnsafe = index.sparse || index.fields.some((f) => f.includes('.'))
    const usable = (vals: unknown[] | undefined): vals is unknown[] => !!vals && !(nullUnsafe && vals.some((v) => v === null))
    if (!usable(first)) return null
    const idKeys = new Set<string>()
    if (perField.every(usable)) {
      const tuples = cartesian(perField as unknown[][], 1000)
      if (tuples) {
        for (const t of tuples) for (const id of index.entries.get(index.encodeTuple(t)) ?? []) idKeys.add(id)
        return { idKeys, keys: tuples.length }
      }
    }
    if (!index.firstFieldEntries) return null
    for (const v of first) for (const id of index.firstFieldEntries.get(encodeKey(v)) ?? []) idKeys.add(id)
    return { idKeys, keys: first.length }
  }

  private lookup(idKeys: Iterable<string>): Doc[] {
    const out: Doc[] = []
    for (const k of idKeys) {
      const doc = this.docs.get(k)
      if (doc) out.push(doc)
    }
    return out
  }

  /** Checks a batch of changes against `_id` and unique indexes as if they were applied together. */
  prepare(changes: Change[]): PreparedChange[] {
    const vacated = new Set<string>()
    for (const c of changes) if (c.before) vacated.add(c.idKey)
    const prepared: PreparedChange[] = changes.map((c) => ({ ...c, entries: new Map() }))
    const claimedIds = new Set<string>()
    for (const c of prepared) {
      if (!c.after || c.before) continue
      if ((this.docs.has(c.idKey) && !vacated.has(c.idKey)) || claimedIds.has(c.idKey)) {
        throw this.duplicateKeyError('_id_', { _id: 1 }, { _id: c.after._id })
      }
      claimedIds.add(c.idKey)
    }
    for (const index of this.indexes.values()) {
      const claimed = new Map<string, string>()
      for (const c of prepared) {
        if (!c.after) continue
        const entries = index.entriesFor(c.after)
        c.entries.set(index, entries)
        if (!index.unique || !entries) continue
        for (const e of entries) {
          const owners = index.entries.get(e.key)
          let conflict = false
          if (owners) for (const o of owners) if (o !== c.idKey && !vacated.has(o)) conflict = true
          const prev = claimed.get(e.key)
          if (conflict || (prev !== undefined && prev !== c.idKey)) {
            throw this.duplicateKeyError(index.name, index.spec.key, index.keyValue(e))
          }
          claimed.set(e.key, c.idKey)
        }
      }
    }
    return prepared
  }

  /** Applies changes that `prepare` accepted. Never throws for prepared input. */
  apply(prepared: PreparedChange[]): void {
    for (const c of prepared) {
      if (!c.before) continue
      for (const index of this.indexes.values()) index.remove(c.idKey, index.entriesFor(c.before))
      if (!c.after) this.docs.delete(c.idKey)
    }
    for (const c of prepared) {
      if (!c.after) continue
      this.docs.set(c.idKey, c.after)
      for (const index of this.indexes.values()) {
        index.add(c.idKey, c.entries.has(index) ? (c.entries.get(index) ?? null) : index.entriesFor(c.after))
      }
    }
  }

  /**
   * Undoes a batch that `apply` applied, by applying the inverse batch (the journal could not make it
   * durable). A deleted document comes back at the end of the natural order, which MongoDB does not
   * promise to keep either.
   */
  revert(changes: Change[]): void {
    this.apply(changes.map((c) => ({ idKey: c.idKey, before: c.after, after: c.before, entries: new Map() })))
  }

  /** Journal replay: trust the log, keep indexes consistent, skip uniqueness checks. */
  replayPut(doc: Doc): void {
    const idKey = encodeKey(doc._id)
    const before = this.docs.get(idKey)
    this.apply([{ idKey, before, after: doc, entries: new Map() }])
  }

  replayDelete(id: unknown): void {
    const idKey = encodeKey(id)
    const before = this.docs.get(idKey)
    if (before) this.apply([{ idKey, before, entries: new Map() }])
  }

  /** Builds an index over the current documents; throws 11000 if a unique index meets duplicates. */
  buildIndex(spec: IndexSpec, enforceUnique: boolean): SecondaryIndex {
    const index = new SecondaryIndex(spec)
    for (const [idKey, doc] of this.docs) {
      const entries = index.entriesFor(doc)
      if (enforceUnique && index.unique && entries) {
        for (const e of entries) {
          const owners = index.entries.get(e.key)
          if (owners && owners.size > 0 && !owners.has(idKey)) {
            throw this.duplicateKeyError(index.name, spec.key, index.keyValue(e))
          }
        }
      }
      index.add(idKey, entries)
    }
    return index
  }

  duplicateKeyError(indexName: string, keyPattern: Doc, keyValue: Doc): CommandError {
    return new CommandError(
      ErrorCodes.DuplicateKey,
      `E11000 duplicate key error collection: ${this.ns} index: ${indexName} dup key: ${formatDocument(keyValue)}`,
      { keyPattern, keyValue },
    )
  }
}

function unique(keys: string[]): string[] {
  return keys.length < 2 ? keys : [...new Set(keys)]
}

function cartesian(lists: unknown[][], max: number): unknown[][] | null {
  let out: unknown[][] = [[]]
  for (const list of lists) {
    if (out.length * list.length > max) return null
    const next: unknown[][] = []
    for (const prefix of out) for (const v of list) next.push([...prefix, v])
    out = next
  }
  return out
}
