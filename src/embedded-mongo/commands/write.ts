// insert, update, delete and findAndModify. Per-statement failures become `writeErrors` entries
// (the driver raises MongoBulkWriteError / MongoServerError from them); ordered writes stop at the
// first failure, unordered writes carry on.
import type { Collection } from '../collection.ts'
import { CommandError, ErrorCodes, toCommandError } from '../errors.ts'
import { asFilter, findMatching, makeProjector } from '../query-exec.ts'
import type { CommandContext, CommandHandler } from '../state.ts'
import { applyUpdate, buildUpsertDocument, updateKind, withIdFirst } from '../update.ts'
import { encodeKey, isPlainObject, type Doc } from '../values.ts'
import { MAX_WRITE_BATCH_SIZE } from '../wire.ts'
import { collationError, isSimpleCollation, targetCollection } from './common.ts'

function statements(cmd: Doc, field: string): unknown[] {
  const list = cmd[field]
  if (!Array.isArray(list)) throw new CommandError(ErrorCodes.FailedToParse, `BSON field '${field}' is missing or not an array`)
  if (list.length > MAX_WRITE_BATCH_SIZE) {
    throw new CommandError(ErrorCodes.InvalidLength, `Write batch sizes must be between 1 and ${MAX_WRITE_BATCH_SIZE}. Got ${list.length} operations.`)
  }
  return list
}

function isOrdered(cmd: Doc): boolean {
  return cmd.ordered !== false
}

function ensure(ctx: CommandContext, name: string): Collection {
  return ctx.state.catalog.ensureCollection(ctx.db, name).coll
}

function writeReply(base: Doc, writeErrors: Doc[]): Doc {
  return writeErrors.length > 0 ? { ...base, writeErrors, ok: 1 } : { ...base, ok: 1 }
}

export const insert: CommandHandler = (cmd, ctx) => {
  const name = targetCollection(cmd, 'insert')
  const docs = statements(cmd, 'documents')
  const ordered = isOrdered(cmd)
  const writeErrors: Doc[] = []
  let n = 0
  let coll: Collection | undefined
  for (let i = 0; i < docs.length; i++) {
    try {
      const raw = docs[i]
      if (!isPlainObject(raw)) throw new CommandError(ErrorCodes.TypeMismatch, 'document to insert must be an object')
      const doc = withIdFirst(raw)
      coll ??= ensure(ctx, name)
      ctx.state.catalog.write(coll, [{ idKey: encodeKey(doc._id), after: doc }])
      n++
    } catch (err) {
      writeErrors.push(toCommandError(err).toWriteError(i))
      if (ordered) break
    }
  }
  return writeReply({ n }, writeErrors)
}

interface UpdateStatement {
  q: Doc
  u: unknown
  upsert: boolean
  multi: boolean
  arrayFilters: Doc[] | undefined
  sort: unknown
}

function parseUpdateStatement(raw: unknown): UpdateStatement {
  if (!isPlainObject(raw)) throw new CommandError(ErrorCodes.TypeMismatch, 'update statement must be an object')
  if (raw.u === undefined) throw new CommandError(ErrorCodes.FailedToParse, "BSON field 'u' is missing but a required field")
  const multi = raw.multi === true
  const kind = updateKind(raw.u)
  if (multi && kind === 'replacement') {
    throw new CommandError(ErrorCodes.FailedToParse, 'multi update is not supported for replacement-style update')
  }
  if (!isSimpleCollation(raw.collation)) throw collationError()
  if (raw.arrayFilters !== undefined && !Array.isArray(raw.arrayFilters)) {
    throw new CommandError(ErrorCodes.TypeMismatch, 'arrayFilters must be an array')
  }
  return {
    q: asFilter(raw.q, 'q'),
    u: raw.u,
    upsert: raw.upsert === true,
    multi,
    arrayFilters: raw.arrayFilters as Doc[] | undefined,
    sort: raw.sort,
  }
}

export const update: CommandHandler = (cmd, ctx) => {
  const name = targetCollection(cmd, 'update')
  const list = statements(cmd, 'updates')
  const ordered = isOrdered(cmd)
  const { catalog, stats } = ctx.state
  const writeErrors: Doc[] = []
  const upserted: Doc[] = []
  let n = 0
  let nModified = 0
  for (let i = 0; i < list.length; i++) {
    try {
      const s = parseUpdateStatement(list[i])
      const coll = catalog.getCollection(ctx.db, name)
      const { docs } = findMatching(coll, { filter: s.q, sort: s.sort, limit: s.multi ? 0 : 1 }, stats)
      if (docs.length === 0) {
        if (s.upsert) {
          const doc = buildUpsertDocument(s.q, s.u, s.arrayFilters)
          catalog.write(ensure(ctx, name), [{ idKey: encodeKey(doc._id), after: doc }])
          n++
          upserted.push({ index: i, _id: doc._id })
        }
        continue
      }
      const changes = []
      for (const old of docs) {
        const next = applyUpdate(old, s.u, { query: s.q, arrayFilters: s.arrayFilters, inserting: false })
        if (next) changes.push({ idKey: encodeKey(old._id), before: old, after: next })
      }
      // All changed documents are validated together before any is applied: a unique-index
      // violation anywhere leaves every document of the statement untouched.
      if (coll) catalog.write(coll, changes)
      n += docs.length
      nModified += changes.length
    } catch (err) {
      writeErrors.push(toCommandError(err).toWriteError(i))
      if (ordered) break
    }
  }
  const base: Doc = { n, nModified }
  if (upserted.length > 0) base.upserted = upserted
  return writeReply(base, writeErrors)
}

export const del: CommandHandler = (cmd, ctx) => {
  const name = targetCollection(cmd, 'delete')
  const list = statements(cmd, 'deletes')
  const ordered = isOrdered(cmd)
  const { catalog, stats } = ctx.state
  const writeErrors: Doc[] = []
  let n = 0
  for (let i = 0; i < list.length; i++) {
    try {
      const raw = list[i]
      if (!isPlainObject(raw)) throw new CommandError(ErrorCodes.TypeMismatch, 'delete statement must be an object')
      if (!isSimpleCollation(raw.collation)) throw collationError()
      const limit = Number(raw.limit ?? 0)
      if (limit !== 0 && limit !== 1) throw new CommandError(ErrorCodes.FailedToParse, 'The limit field in delete objects must be 0 or 1')
      const coll = catalog.getCollection(ctx.db, name)
      const { docs } = findMatching(coll, { filter: asFilter(raw.q, 'q'), sort: raw.sort, limit }, stats)
      if (coll) catalog.write(coll, docs.map((d) => ({ idKey: encodeKey(d._id), before: d })))
      n += docs.length
    } catch (err) {
      writeErrors.push(toCommandError(err).toWriteError(i))
      if (ordered) break
    }
  }
  return writeReply({ n }, writeErrors)
}

export const findAndModify: CommandHandler = (cmd, ctx) => {
  const name = typeof cmd.findAndModify === 'string' ? targetCollection(cmd, 'findAndModify') : targetCollection(cmd, 'findandmodify')
  const query = asFilter(cmd.query, 'query')
  const remove = cmd.remove === true
  const u = cmd.update
  if (remove && u !== undefined) throw new CommandError(ErrorCodes.FailedToParse, 'Cannot specify both an update and remove=true')
  if (!remove && u === undefined) throw new CommandError(ErrorCodes.FailedToParse, 'Either an update or remove=true must be specified')
  if (remove && cmd.upsert === true) throw new CommandError(ErrorCodes.FailedToParse, 'Cannot specify both upsert=true and remove=true')
  const arrayFilters = cmd.arrayFilters as Doc[] | undefined
  const returnNew = cmd.new === true
  const { catalog, stats } = ctx.state
  const coll = catalog.getCollection(ctx.db, name)
  const [target] = findMatching(coll, { filter: query, sort: cmd.sort, limit: 1 }, stats).docs
  const projector = makeProjector(query, cmd.fields)
  const project = (d: Doc | null): Doc | null => (d && projector ? (projector([d])[0] ?? null) : d)

  if (remove) {
    if (!target || !coll) return { lastErrorObject: { n: 0 }, value: null, ok: 1 }
    catalog.write(coll, [{ idKey: encodeKey(target._id), before: target }])
    return { lastErrorObject: { n: 1 }, value: project(target), ok: 1 }
  }
  if (target && coll) {
    const next = applyUpdate(target, u, { query, arrayFilters, inserting: false })
    if (next) catalog.write(coll, [{ idKey: encodeKey(target._id), before: target, after: next }])
    return {
      lastErrorObject: { n: 1, updatedExisting: true },
      value: project(returnNew ? (next ?? target) : target),
      ok: 1,
    }
  }
  if (cmd.upsert === true) {
    const doc = buildUpsertDocument(query, u, arrayFilters)
    catalog.write(ensure(ctx, name), [{ idKey: encodeKey(doc._id), after: doc }])
    return {
      lastErrorObject: { n: 1, updatedExisting: false, upserted: doc._id },
      value: returnNew ? project(doc) : null,
      ok: 1,
    }
  }
  return { lastErrorObject: { n: 0, updatedExisting: false }, value: null, ok: 1 }
}
