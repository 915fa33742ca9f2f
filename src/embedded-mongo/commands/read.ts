// find, getMore, killCursors, count, distinct.
import { cursorIdFromWire, cursorIdToLong, takeBatch } from '../cursors.ts'
import { STORED_BATCH, type CursorReplyDoc } from '../encoded-docs.ts'
import { CommandError, ErrorCodes } from '../errors.ts'
import { asFilter, findMatching, makeProjector, nonNegativeInt } from '../query-exec.ts'
import type { CommandHandler } from '../state.ts'
import { collectPathValues, compareValues, EMPTY_ARRAY, encodeKey } from '../values.ts'
import { batchSizeOf, cursorReply, optionalBool, targetCollection } from './common.ts'

export const find: CommandHandler = (cmd, ctx) => {
  const name = targetCollection(cmd, 'find')
  if (cmd.tailable === true || cmd.awaitData === true) {
    throw new CommandError(ErrorCodes.CommandNotSupported, 'tailable cursors are not supported by the embedded MongoDB server')
  }
  const filter = asFilter(cmd.filter)
  let singleBatch = optionalBool(cmd.singleBatch)
  let limit = cmd.limit === undefined || cmd.limit === null ? 0 : Number(cmd.limit)
  if (!Number.isInteger(limit)) throw new CommandError(ErrorCodes.BadValue, 'limit must be an integer')
  if (limit < 0) {
    // Legacy negative limit: one batch of at most |limit| documents.
    singleBatch = true
    limit = -limit
  }
  const coll = ctx.state.catalog.getCollection(ctx.db, name)
  const { docs } = findMatching(coll, { filter, sort: cmd.sort, skip: nonNegativeInt(cmd.skip, 'skip'), limit }, ctx.state.stats)
  return cursorReply(ctx, `${ctx.db}.${name}`, docs, {
    batchSize: batchSizeOf(cmd.batchSize),
    singleBatch,
    transform: makeProjector(filter, cmd.projection),
    stored: true,
  })
}

export const getMore: CommandHandler = (cmd, ctx) => {
  const id = cursorIdFromWire(cmd.getMore)
  const name = targetCollection(cmd, 'collection')
  const cursor = ctx.state.cursors.get(id)
  if (!cursor) throw new CommandError(ErrorCodes.CursorNotFound, `cursor id ${id} not found`)
  const ns = `${ctx.db}.${name}`
  if (cursor.ns !== ns && !cursor.ns.startsWith(`${ctx.db}.$cmd`)) {
    throw new CommandError(ErrorCodes.Unauthorized, `Requested getMore on namespace '${ns}', but cursor belongs to a different namespace ${cursor.ns}`)
  }
  const { batch, next } = takeBatch(cursor.docs, cursor.pos, batchSizeOf(cmd.batchSize) || undefined, cursor.transform, cursor.stored)
  cursor.pos = next
  let replyId = id
  if (next >= cursor.docs.length) {
    ctx.state.cursors.kill(id)
    replyId = 0
  }
  const reply: CursorReplyDoc = { cursor: { nextBatch: batch, id: cursorIdToLong(replyId), ns: cursor.ns }, ok: 1 }
  if (cursor.stored) reply[STORED_BATCH] = true
  return reply
}

export const killCursors: CommandHandler = (cmd, ctx) => {
  targetCollection(cmd, 'killCursors')
  if (!Array.isArray(cmd.cursors)) throw new CommandError(ErrorCodes.BadValue, 'cursors must be an array')
  const killed: unknown[] = []
  const notFound: unknown[] = []
  for (const raw of cmd.cursors) {
    const id = cursorIdFromWire(raw)
    ;(ctx.state.cursors.kill(id) ? killed : notFound).push(cursorIdToLong(id))
  }
  return { cursorsKilled: killed, cursorsNotFound: notFound, cursorsAlive: [], cursorsUnknown: [], ok: 1 }
}

export const count: CommandHandler = (cmd, ctx) => {
  const name = targetCollection(cmd, 'count')
  const coll = ctx.state.catalog.getCollection(ctx.db, name)
  const filter = asFilter(cmd.query, 'query')
  const skip = nonNegativeInt(cmd.skip, 'skip') ?? 0
  const limit = Math.abs(Number(cmd.limit ?? 0)) || 0
  if (!coll) return { n: 0, ok: 1 }
  // estimatedDocumentCount sends a bare count: answer from the map size, no scan.
  if (Object.keys(filter).length === 0) {
    const total = Math.max(0, coll.docs.size - skip)
    return { n: limit > 0 ? Math.min(limit, total) : total, ok: 1 }
  }
  const { docs } = findMatching(coll, { filter, skip, limit }, ctx.state.stats)
  return { n: docs.length, ok: 1 }
}

export const distinct: CommandHandler = (cmd, ctx) => {
  const name = targetCollection(cmd, 'distinct')
  const key = cmd.key
  if (typeof key !== 'string' || key === '') throw new CommandError(ErrorCodes.TypeMismatch, "'key' must be a non-empty string")
  const coll = ctx.state.catalog.getCollection(ctx.db, name)
  const { docs } = findMatching(coll, { filter: asFilter(cmd.query, 'query') }, ctx.state.stats)
  const seen = new Map<string, unknown>()
  const parts = key.split('.')
  for (const doc of docs) {
    const { values, found } = collectPathValues(doc, parts)
    if (!found) continue
    for (const v of values) {
      if (v === EMPTY_ARRAY) continue
      const k = encodeKey(v)
      if (!seen.has(k)) seen.set(k, v)
    }
  }
  const values = [...seen.values()].sort(compareValues)
  return { values, ok: 1 }
}

