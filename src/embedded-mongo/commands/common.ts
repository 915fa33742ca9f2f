// Small helpers shared by command handlers.
import { cursorIdToLong, DEFAULT_FIRST_BATCH, takeBatch, type BatchTransform } from '../cursors.ts'
import { CommandError, ErrorCodes } from '../errors.ts'
import { STORED_BATCH, type CursorReplyDoc } from '../encoded-docs.ts'
import type { CommandContext } from '../state.ts'
import type { Doc } from '../values.ts'

/** The collection a command targets: the string value of its first field. */
export function targetCollection(cmd: Doc, name: string): string {
  const v = cmd[name]
  if (typeof v !== 'string' || v === '') {
    throw new CommandError(ErrorCodes.InvalidNamespace, `collection name has invalid type ${v === null ? 'null' : typeof v}`)
  }
  return v
}

export function optionalBool(v: unknown): boolean {
  return v === true || v === 1
}

export function batchSizeOf(v: unknown): number | undefined {
  if (v === undefined || v === null) return undefined
  const n = Number(v)
  if (!Number.isInteger(n) || n < 0) throw new CommandError(ErrorCodes.BadValue, 'batchSize must be a non-negative integer')
  return n
}

/** Builds a `{cursor: {firstBatch, id, ns}}` reply, registering a server cursor if results remain. */
export function cursorReply(
  ctx: CommandContext,
  ns: string,
  docs: Doc[],
  opts: { batchSize?: number; singleBatch?: boolean; transform?: BatchTransform; stored?: boolean },
): Doc {
  const limit = opts.batchSize ?? DEFAULT_FIRST_BATCH
  const stored = opts.stored === true && !opts.transform
  const { batch, next } = takeBatch(docs, 0, opts.singleBatch && opts.batchSize === undefined ? undefined : limit, opts.transform, stored)
  let id = 0
  if (!opts.singleBatch && next < docs.length) id = ctx.state.cursors.open(ns, docs, next, opts.transform, stored)
  const reply: CursorReplyDoc = { cursor: { firstBatch: batch, id: cursorIdToLong(id), ns }, ok: 1 }
  if (stored) reply[STORED_BATCH] = true
  return reply
}

/** Collations change string comparison everywhere; the embedded server only does binary comparison. */
export function isSimpleCollation(collation: unknown): boolean {
  return collation === undefined || collation === null ||
    (typeof collation === 'object' && (collation as Doc).locale === 'simple')
}

export function collationError(): CommandError {
  return new CommandError(ErrorCodes.CommandNotSupported, 'collation is not supported by the embedded MongoDB server')
}
