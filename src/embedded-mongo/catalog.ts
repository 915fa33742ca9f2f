// All databases and collections, and the single place where state changes. Every change is described
// as journal operations handed to the storage sink in the same synchronous step that applies it, so
// the journal order always equals the in-memory order. Each group also carries how to undo it: a change
// is visible as soon as it is applied, and if the journal then cannot make it durable (a full disk) the
// storage undoes every group that is not durable, newest first, so no read ever sees a refused write.
import { Collection, ID_INDEX_SPEC, type Change } from './collection.ts'
import { BSON } from 'bson'
import { CommandError, ErrorCodes } from './errors.ts'
import { sameIndexOptions, type IndexSpec } from './secondary-index.ts'
import { encodeKey, type Doc } from './values.ts'
import { MAX_BSON_OBJECT_BYTES } from './wire.ts'

export type JournalOp =
  | { op: 'createCollection'; db: string; coll: string; options?: Doc }
  | { op: 'dropCollection'; db: string; coll: string }
  | { op: 'dropDatabase'; db: string }
  | { op: 'createIndex'; db: string; coll: string; spec: IndexSpec }
  | { op: 'dropIndex'; db: string; coll: string; name: string }
  | { op: 'put'; db: string; coll: string; doc: Doc }
  | { op: 'delete'; db: string; coll: string; id: unknown }
  | { op: 'renameCollection'; db: string; coll: string; toDb: string; to: string }

/** Puts memory back as it was before one group was applied; only called newest group first. */
export type Revert = () => void

export interface OpSink {
  /** Records one atomic group of operations (one journal frame) and how to undo it until it is durable. */
  log(ops: JournalOp[], revert: Revert): void
}

const INVALID_DB_CHARS = /[/\\. "$*<>:|?\0]/

export function validateDbName(db: string): void {
  if (!db || db.length > 63 || INVALID_DB_CHARS.test(db)) {
    throw new CommandError(ErrorCodes.InvalidNamespace, `Invalid database name: '${db}'`)
  }
}

export function validateCollectionName(db: string, name: string): void {
  if (typeof name !== 'string' || !name || name.includes('\0') || name.startsWith('.') || name.includes('$') || name.startsWith('system.')) {
    throw new CommandError(ErrorCodes.InvalidNamespace, `Invalid collection name: '${db}.${String(name)}'`)
  }
}

export class Catalog {
  private readonly dbs = new Map<string, Map<string, Collection>>()
  private readonly sink: OpSink

  constructor(sink: OpSink) {
    this.sink = sink
  }

  databaseNames(): string[] {
    return [...this.dbs.keys()].filter((db) => (this.dbs.get(db)?.size ?? 0) > 0)
  }

  collections(db: string): Collection[] {
    return [...(this.dbs.get(db)?.values() ?? [])]
  }

  allCollections(): Collection[] {
    return [...this.dbs.values()].flatMap((m) => [...m.values()])
  }

  getCollection(db: string, name: string): Collection | undefined {
    return this.dbs.get(db)?.get(name)
  }

  /** Implicit creation on first write, like MongoDB. */
  ensureCollection(db: string, name: string): { coll: Collection; created: boolean } {
    const existing = this.getCollection(db, name)
    if (existing) return { coll: existing, created: false }
    return { coll: this.createCollection(db, name, {}), created: true }
  }

  createCollection(db: string, name: string, options: Doc): Collection {
    validateDbName(db)
    validateCollectionName(db, name)
    if (this.getCollection(db, name)) {
      throw new CommandError(ErrorCodes.NamespaceExists, `Collection ${db}.${name} already exists.`)
    }
    const coll = this.addCollection(db, name, options)
    this.sink.log([{ op: 'createCollection', db, coll: name, options }], () => {
      if (this.getCollection(db, name) === coll) this.removeCollection(db, name)
    })
    return coll
  }

  private addCollection(db: string, name: string, options: Doc): Collection {
    let colls = this.dbs.get(db)
    if (!colls) {
      colls = new Map()
      this.dbs.set(db, colls)
    }
    const coll = new Collection(db, name, options)
    colls.set(name, coll)
    return coll
  }

  dropCollection(db: string, name: string): Collection | undefined {
    const coll = this.getCollection(db, name)
    if (!coll) return undefined
    this.removeCollection(db, name)
    this.sink.log([{ op: 'dropCollection', db, coll: name }], () => this.putCollection(coll))
    return coll
  }

  private putCollection(coll: Collection): void {
    let colls = this.dbs.get(coll.dbName)
    if (!colls) {
      colls = new Map()
      this.dbs.set(coll.dbName, colls)
    }
    colls.set(coll.name, coll)
  }

  private removeCollection(db: string, name: string): void {
    const colls = this.dbs.get(db)
    colls?.delete(name)
    if (colls && colls.size === 0) this.dbs.delete(db)
  }

  dropDatabase(db: string): void {
    const colls = this.dbs.get(db)
    if (!colls) return
    this.dbs.delete(db)
    this.sink.log([{ op: 'dropDatabase', db }], () => { this.dbs.set(db, colls) })
  }

  renameCollection(db: string, name: string, toDb: string, to: string, dropTarget: boolean): void {
    const coll = this.getCollection(db, name)
    if (!coll) throw new CommandError(ErrorCodes.NamespaceNotFound, `Source collection ${db}.${name} does not exist`)
    validateDbName(toDb)
    validateCollectionName(toDb, to)
    const target = this.getCollection(toDb, to)
    if (target) {
      if (!dropTarget) throw new CommandError(ErrorCodes.NamespaceExists, `Target namespace ${toDb}.${to} exists`)
      this.removeCollection(toDb, to)
    }
    this.moveCollection(coll, toDb, to)
    // The moved collection shares its index objects with `coll`; later groups that changed them are
    // undone before this one, so `coll` is whole again when it is put back.
    this.sink.log([{ op: 'renameCollection', db, coll: name, toDb, to }], () => {
      this.removeCollection(toDb, to)
      if (target) this.putCollection(target)
      this.putCollection(coll)
    })
  }

  private moveCollection(coll: Collection, toDb: string, to: string): void {
    this.removeCollection(coll.dbName, coll.name)
    const moved = this.addCollection(toDb, to, coll.options)
    for (const [k, d] of coll.docs) moved.docs.set(k, d)
    for (const [n, i] of coll.indexes) moved.indexes.set(n, i)
  }

  /** Validates a batch of document changes as a whole, journals it as one frame, and applies it. */
  write(coll: Collection, changes: Change[]): void {
    if (changes.length === 0) return
    for (const c of changes) {
      // Inserts arrive within the wire limit; an update can grow a document past it.
      if (c.before && c.after && BSON.calculateObjectSize(c.after) > MAX_BSON_OBJECT_BYTES) {
        throw new CommandError(ErrorCodes.BSONObjectTooLarge, `Resulting document after update is larger than ${MAX_BSON_OBJECT_BYTES}`)
      }
    }
    const prepared = coll.prepare(changes)
    // Logged before applying: if the journal refuses the record, memory stays unchanged too.
    this.sink.log(changes.map((c): JournalOp => (
      c.after
        ? { op: 'put', db: coll.dbName, coll: coll.name, doc: c.after }
        : { op: 'delete', db: coll.dbName, coll: coll.name, id: c.before?._id }
    )), () => coll.revert(changes))
    coll.apply(prepared)
  }

  /** Returns false when an identical index already exists. */
  createIndex(coll: Collection, spec: IndexSpec): boolean {
    if (encodeKey(spec.key) === encodeKey(ID_INDEX_SPEC.key) && !spec.unique && !spec.sparse && !spec.partialFilterExpression) {
      if (spec.name === '_id_' || spec.name === '_id_1') return false
    }
    const sameName = coll.indexes.get(spec.name) ?? (spec.name === '_id_' ? ({ spec: ID_INDEX_SPEC } as const) : undefined)
    if (sameName) {
      if (sameIndexOptions(sameName.spec, spec)) return false
      throw new CommandError(
        encodeKey(sameName.spec.key) === encodeKey(spec.key) ? ErrorCodes.IndexOptionsConflict : ErrorCodes.IndexKeySpecsConflict,
        `An existing index has the same name as the requested index. Requested index: ${JSON.stringify(spec)}, existing index: ${JSON.stringify(sameName.spec)}`,
      )
    }
    for (const existing of coll.indexes.values()) {
      if (encodeKey(existing.spec.key) === encodeKey(spec.key) && encodeKey(existing.spec.partialFilterExpression) === encodeKey(spec.partialFilterExpression)) {
        throw new CommandError(
          ErrorCodes.IndexOptionsConflict,
          `Index already exists with a different name: ${existing.name}`,
        )
      }
    }
    const index = coll.buildIndex(spec, true)
    coll.indexes.set(spec.name, index)
    this.sink.log([{ op: 'createIndex', db: coll.dbName, coll: coll.name, spec }], () => {
      if (coll.indexes.get(spec.name) === index) coll.indexes.delete(spec.name)
    })
    return true
  }

  dropIndex(coll: Collection, name: string): void {
    const before = [...coll.indexes]
    coll.indexes.delete(name)
    // Restored in the original order, so listIndexes answers as before.
    this.sink.log([{ op: 'dropIndex', db: coll.dbName, coll: coll.name, name }], () => {
      coll.indexes.clear()
      for (const [n, index] of before) coll.indexes.set(n, index)
    })
  }

  /** Applies a journal or snapshot operation during recovery. */
  replay(op: JournalOp): void {
    switch (op.op) {
      case 'createCollection':
        if (!this.getCollection(op.db, op.coll)) this.addCollection(op.db, op.coll, op.options ?? {})
        return
      case 'dropCollection':
        this.removeCollection(op.db, op.coll)
        return
      case 'dropDatabase':
        this.dbs.delete(op.db)
        return
      case 'renameCollection': {
        const coll = this.getCollection(op.db, op.coll)
        if (!coll) return
        this.removeCollection(op.toDb, op.to)
        this.moveCollection(coll, op.toDb, op.to)
        return
      }
      case 'createIndex': {
        const coll = this.getCollection(op.db, op.coll) ?? this.addCollection(op.db, op.coll, {})
        coll.indexes.set(op.spec.name, coll.buildIndex(op.spec, false))
        return
      }
      case 'dropIndex':
        this.getCollection(op.db, op.coll)?.indexes.delete(op.name)
        return
      case 'put': {
        const coll = this.getCollection(op.db, op.coll) ?? this.addCollection(op.db, op.coll, {})
        coll.replayPut(op.doc)
        return
      }
      case 'delete':
        this.getCollection(op.db, op.coll)?.replayDelete(op.id)
        return
    }
  }

  /** The whole state as replayable operations, for writing a snapshot. */
  *snapshotOps(): Generator<JournalOp> {
    for (const [db, colls] of this.dbs) {
      for (const coll of colls.values()) {
        yield { op: 'createCollection', db, coll: coll.name, options: coll.options }
        for (const index of coll.indexes.values()) yield { op: 'createIndex', db, coll: coll.name, spec: index.spec }
        for (const doc of coll.docs.values()) yield { op: 'put', db, coll: coll.name, doc }
      }
    }
  }
}
