// Command dispatch: name lookup, uniform error replies, and waiting for journal durability before a
// write is acknowledged.
import { CommandError, ErrorCodes, toCommandError } from '../errors.ts'
import { performance } from 'node:perf_hooks'
import type { CommandContext, CommandHandler, ServerState, ServerStats } from '../state.ts'
import type { Doc } from '../values.ts'
import { create, createIndexes, dbStats, drop, dropDatabase, dropIndexes, listCollections, listDatabases, listIndexes, renameCollection } from './admin.ts'
import { aggregate } from './aggregate.ts'
import { collationError, isSimpleCollation } from './common.ts'
import { explain } from './explain.ts'
import { handshakeCommands } from './handshake.ts'
import { count, distinct, find, getMore, killCursors } from './read.ts'
import { del, findAndModify, insert, update } from './write.ts'

const handlers = new Map<string, CommandHandler>(Object.entries({
  ...handshakeCommands,
  insert,
  find,
  getMore,
  killCursors,
  update,
  delete: del,
  findAndModify,
  findandmodify: findAndModify,
  count,
  distinct,
  aggregate,
  create,
  drop,
  listCollections,
  listDatabases,
  dropDatabase,
  dbStats,
  renameCollection,
  createIndexes,
  listIndexes,
  dropIndexes,
  deleteIndexes: dropIndexes,
  explain,
}))

/**
 * Adds to the per-command CPU time the server spends (decode, handler, encode; not the journal wait);
 * `ran` marks the part that counts one execution. Client-chosen names are not used as keys, so the
 * map stays bounded.
 */
export function recordTiming(stats: ServerStats, command: string, ms: number, ran = false): void {
  const name = handlers.has(command) ? command : '(unsupported)'
  let entry = stats.commandTimings.get(name)
  if (!entry) {
    entry = { count: 0, totalMs: 0 }
    stats.commandTimings.set(name, entry)
  }
  entry.totalMs += ms
  if (ran) entry.count++
}

/** Runs one command and always produces a reply document; never throws. */
export async function runCommand(state: ServerState, body: Doc, db: unknown, connectionId: number): Promise<Doc> {
  state.stats.commands++
  const name = Object.keys(body)[0]
  const handler = name === undefined ? undefined : handlers.get(name)
  if (!handler) {
    return new CommandError(ErrorCodes.CommandNotFound, `no such command: '${name ?? ''}'`).toReply()
  }
  if (typeof db !== 'string' || db === '') {
    return new CommandError(ErrorCodes.NoDollarDbField, 'OP_MSG requests require a $db argument').toReply()
  }
  if (body.txnNumber !== undefined || body.startTransaction !== undefined || body.autocommit !== undefined) {
    // What a standalone mongod answers too; the driver only sends these for explicit transactions.
    return new CommandError(ErrorCodes.IllegalOperation, 'Transaction numbers are only allowed on a replica set member or mongos').toReply()
  }
  if (!isSimpleCollation(body.collation)) return collationError().toReply()
  const ctx: CommandContext = { state, db, connectionId }
  const seqBefore = state.storage.loggedSeq
  let reply: Doc
  const started = performance.now()
  try {
    reply = handler(body, ctx)
  } catch (err) {
    const error = toCommandError(err)
    if (error.code === ErrorCodes.InternalError) {
      state.logger?.error(`embedded-mongo: command '${name}' failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`)
    }
    reply = error.toReply()
  }
  recordTiming(state.stats, name, performance.now() - started, true)
  const seq = state.storage.loggedSeq
  if (seq !== seqBefore) {
    try {
      await state.storage.waitDurable(seq)
    } catch (err) {
      // The storage has undone the command's changes; its error says why (e.g. OutOfDiskSpace).
      reply = (err instanceof CommandError ? err : new CommandError(ErrorCodes.InternalError, 'write could not be made durable')).toReply()
    }
  }
  return reply
}
