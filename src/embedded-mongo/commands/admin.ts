// Namespace and index management: create, drop, listCollections, listDatabases, dropDatabase,
// renameCollection, createIndexes, listIndexes, dropIndexes.
import { BSON } from 'bson'
import type { Collection } from '../collection.ts'
import { CommandError, ErrorCodes } from '../errors.ts'
import { compileFilter } from '../mingo-context.ts'
import { normalizeIndexSpec } from '../secondary-index.ts'
import type { CommandContext, CommandHandler } from '../state.ts'
import { encodeKey, isPlainObject, type Doc } from '../values.ts'
import { batchSizeOf, cursorReply, targetCollection } from './common.ts'

// Collection options that change behaviour the embedded server does not implement. Refusing them is
// better than accepting a capped collection or a validator and then not honouring it.
const UNSUPPORTED_CREATE_OPTIONS = ['capped', 'timeseries', 'clusteredIndex', 'viewOn', 'pipeline', 'collation', 'expireAfterSeconds', 'changeStreamPreAndPostImages', 'encryptedFields']

export const create: CommandHandler = (cmd, ctx) => {
  const name = targetCollection(cmd, 'create')
  for (const opt of UNSUPPORTED_CREATE_OPTIONS) {
    if (cmd[opt] !== undefined && cmd[opt] !== false) {
      throw new CommandError(ErrorCodes.CommandNotSupported, `create option '${opt}' is not supported by the embedded MongoDB server`)
    }
  }
  if (isPlainObject(cmd.validator) && Object.keys(cmd.validator).length > 0) {
    throw new CommandError(ErrorCodes.CommandNotSupported, 'document validation is not supported by the embedded MongoDB server')
  }
  ctx.state.catalog.createCollection(ctx.db, name, {})
  return { ok: 1 }
}

export const drop: CommandHandler = (cmd, ctx) => {
  const name = targetCollection(cmd, 'drop')
  const dropped = ctx.state.catalog.dropCollection(ctx.db, name)
  // MongoDB 7 answers ok for a collection that does not exist.
  return dropped ? { nIndexesWas: dropped.indexes.size + 1, ns: dropped.ns, ok: 1 } : { ok: 1 }
}

function collectionInfo(coll: Collection): Doc {
  return {
    name: coll.name,
    type: 'collection',
    options: coll.options,
    info: { readOnly: false },
    idIndex: { v: 2, key: { _id: 1 }, name: '_id_' },
  }
}

export const listCollections: CommandHandler = (cmd, ctx) => {
  let infos = ctx.state.catalog.collections(ctx.db).map(collectionInfo)
  if (isPlainObject(cmd.filter) && Object.keys(cmd.filter).length > 0) {
    const query = compileFilter(cmd.filter)
    infos = infos.filter((i) => query.test(i))
  }
  if (cmd.nameOnly === true) infos = infos.map((i) => ({ name: i.name, type: i.type }))
  const cursor = isPlainObject(cmd.cursor) ? cmd.cursor : {}
  return cursorReply(ctx, `${ctx.db}.$cmd.listCollections`, infos, { batchSize: batchSizeOf(cursor.batchSize) })
}

function databaseSize(ctx: CommandContext, db: string): number {
  let bytes = 0
  for (const coll of ctx.state.catalog.collections(db)) for (const d of coll.docs.values()) bytes += BSON.calculateObjectSize(d)
  return bytes
}

export const listDatabases: CommandHandler = (cmd, ctx) => {
  const nameOnly = cmd.nameOnly === true
  let dbs: Doc[] = ctx.state.catalog.databaseNames().map((name) => (
    nameOnly ? { name } : { name, sizeOnDisk: databaseSize(ctx, name), empty: false }
  ))
  if (isPlainObject(cmd.filter) && Object.keys(cmd.filter).length > 0) {
    const query = compileFilter(cmd.filter)
    dbs = dbs.filter((d) => query.test(d))
  }
  if (nameOnly) return { databases: dbs, ok: 1 }
  const totalSize = dbs.reduce((n, d) => n + Number(d.sizeOnDisk), 0)
  return { databases: dbs, totalSize, totalSizeMb: Math.floor(totalSize / (1024 * 1024)), ok: 1 }
}

export const dbStats: CommandHandler = (_cmd, ctx) => {
  const colls = ctx.state.catalog.collections(ctx.db)
  const objects = colls.reduce((n, c) => n + c.docs.size, 0)
  const dataSize = databaseSize(ctx, ctx.db)
  return {
    db: ctx.db,
    collections: colls.length,
    views: 0,
    objects,
    avgObjSize: objects > 0 ? dataSize / objects : 0,
    dataSize,
    storageSize: dataSize,
    indexes: colls.reduce((n, c) => n + c.indexes.size + 1, 0),
    ok: 1,
  }
}

export const dropDatabase: CommandHandler = (_cmd, ctx) => {
  ctx.state.catalog.dropDatabase(ctx.db)
  return { dropped: ctx.db, ok: 1 }
}

function splitNamespace(ns: unknown): [string, string] {
  if (typeof ns !== 'string' || !ns.includes('.')) throw new CommandError(ErrorCodes.InvalidNamespace, `Invalid namespace specified '${String(ns)}'`)
  const dot = ns.indexOf('.')
  return [ns.slice(0, dot), ns.slice(dot + 1)]
}

export const renameCollection: CommandHandler = (cmd, ctx) => {
  if (ctx.db !== 'admin') throw new CommandError(ErrorCodes.Unauthorized, 'renameCollection may only be run against the admin database.')
  const [db, name] = splitNamespace(cmd.renameCollection)
  const [toDb, to] = splitNamespace(cmd.to)
  ctx.state.catalog.renameCollection(db, name, toDb, to, cmd.dropTarget === true)
  return { ok: 1 }
}

export const createIndexes: CommandHandler = (cmd, ctx) => {
  const name = targetCollection(cmd, 'createIndexes')
  if (!Array.isArray(cmd.indexes) || cmd.indexes.length === 0) {
    throw new CommandError(ErrorCodes.BadValue, 'Must specify at least one index to create')
  }
  const specs = cmd.indexes.map(normalizeIndexSpec)
  const { catalog } = ctx.state
  const { coll, created } = catalog.ensureCollection(ctx.db, name)
  const before = coll.indexes.size + 1
  let createdAny = false
  for (const spec of specs) createdAny = catalog.createIndex(coll, spec) || createdAny
  const reply: Doc = { numIndexesBefore: before, numIndexesAfter: coll.indexes.size + 1, createdCollectionAutomatically: created, ok: 1 }
  if (!createdAny) reply.note = 'all indexes already exist'
  return reply
}

function requireCollection(ctx: CommandContext, name: string): Collection {
  const coll = ctx.state.catalog.getCollection(ctx.db, name)
  if (!coll) throw new CommandError(ErrorCodes.NamespaceNotFound, `ns does not exist: ${ctx.db}.${name}`)
  return coll
}

export const listIndexes: CommandHandler = (cmd, ctx) => {
  const coll = requireCollection(ctx, targetCollection(cmd, 'listIndexes'))
  const cursor = isPlainObject(cmd.cursor) ? cmd.cursor : {}
  const specs = coll.indexSpecs().map((s) => ({ ...s }))
  return cursorReply(ctx, coll.ns, specs, { batchSize: batchSizeOf(cursor.batchSize) })
}

export const dropIndexes: CommandHandler = (cmd, ctx) => {
  const name = typeof cmd.dropIndexes === 'string' ? targetCollection(cmd, 'dropIndexes') : targetCollection(cmd, 'deleteIndexes')
  const coll = ctx.state.catalog.getCollection(ctx.db, name)
  if (!coll) throw new CommandError(ErrorCodes.NamespaceNotFound, `ns not found ${ctx.db}.${name}`)
  const nIndexesWas = coll.indexes.size + 1
  const target = cmd.index
  let names: string[]
  if (target === '*') {
    names = [...coll.indexes.keys()]
  } else if (typeof target === 'string') {
    names = [target]
  } else if (Array.isArray(target) && target.every((t) => typeof t === 'string')) {
    names = target as string[]
  } else if (isPlainObject(target)) {
    if (encodeKey(target) === encodeKey({ _id: 1 })) throw new CommandError(ErrorCodes.InvalidOptions, 'cannot drop _id index')
    const match = [...coll.indexes.values()].find((i) => encodeKey(i.spec.key) === encodeKey(target))
    if (!match) throw new CommandError(ErrorCodes.IndexNotFound, `can't find index with key: ${JSON.stringify(target)}`)
    names = [match.name]
  } else {
    throw new CommandError(ErrorCodes.TypeMismatch, "'index' must be a string, an array of strings or an index key pattern")
  }
  for (const n of names) {
    if (n === '_id_') throw new CommandError(ErrorCodes.InvalidOptions, 'cannot drop _id index')
    if (!coll.indexes.has(n)) throw new CommandError(ErrorCodes.IndexNotFound, `index not found with name [${n}]`)
  }
  for (const n of names) ctx.state.catalog.dropIndex(coll, n)
  return { nIndexesWas, ok: 1 }
}
