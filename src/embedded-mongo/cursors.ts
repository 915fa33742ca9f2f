// Server-side cursors for find/aggregate/list* results that do not fit in the first batch. A cursor
// holds the complete, already ordered result (references to immutable stored documents) and a position;
// projection is applied per batch as it is sent.
import { BSON, Long } from 'bson'
import { encodedDocument } from './encoded-docs.ts'
import { MAX_BSON_OBJECT_BYTES } from './wire.ts'
import type { Doc } from './values.ts'

export type BatchTransform = (docs: Doc[]) => Doc[]

export interface ServerCursor {
  id: number
  ns: string
  docs: Doc[]
  pos: number
  transform: BatchTransform | undefined
  /** The documents are stored ones sent untransformed, so their stored encoding can be sent. */
  stored: boolean
  lastUsed: number
}

/** MongoDB's default first batch size when the client does not ask for one. */
export const DEFAULT_FIRST_BATCH = 101
/** Leaves room for the reply envelope around the batch array. */
const MAX_BATCH_BYTES = MAX_BSON_OBJECT_BYTES - 64 * 1024
export const CURSOR_IDLE_TIMEOUT_MS = 10 * 60 * 1000

/** Takes up to `limit` documents from `start`, capped so the reply stays under the BSON size limit. */
export function takeBatch(
  docs: Doc[], start: number, limit: number | undefined, transform: BatchTransform | undefined, stored = false,
): { batch: Doc[]; next: number } {
  const end = limit === undefined ? docs.length : Math.min(docs.length, start + limit)
  if (end <= start) return { batch: [], next: start }
  const slice = docs.slice(start, end)
  const batch = transform ? transform(slice) : slice
  if (batch.length > 1) {
    let bytes = 0
    for (let i = 0; i < batch.length; i++) {
      bytes += (stored ? encodedDocument(batch[i]).length : BSON.calculateObjectSize(batch[i])) + 16
      if (bytes > MAX_BATCH_BYTES && i > 0) return { batch: batch.slice(0, i), next: start + i }
    }
  }
  return { batch, next: start + batch.length }
}

export class CursorRegistry {
  private readonly cursors = new Map<number, ServerCursor>()

  open(ns: string, docs: Doc[], pos: number, transform: BatchTransform | undefined, stored = false): number {
    let id: number
    do {
      // Positive and below 2^53 so it survives promotion to a JS number on the way back in.
      id = Math.floor(Math.random() * 2 ** 52) + 1
    } while (this.cursors.has(id))
    this.cursors.set(id, { id, ns, docs, pos, transform, stored, lastUsed: Date.now() })
    return id
  }

  get(id: number): ServerCursor | undefined {
    const c = this.cursors.get(id)
    if (c) c.lastUsed = Date.now()
    return c
  }

  kill(id: number): boolean {
    return this.cursors.delete(id)
  }

  reapIdle(now: number, maxIdleMs = CURSOR_IDLE_TIMEOUT_MS): void {
    for (const [id, c] of this.cursors) if (now - c.lastUsed > maxIdleMs) this.cursors.delete(id)
  }

  get size(): number {
    return this.cursors.size
  }

  clear(): void {
    this.cursors.clear()
  }
}

const ZERO = Long.fromNumber(0)

export function cursorIdToLong(id: number): Long {
  return id === 0 ? ZERO : Long.fromNumber(id)
}

/** Cursor ids come back as numbers (promoted) or, from unusual clients, as Long/bigint. */
export function cursorIdFromWire(v: unknown): number {
  if (typeof v === 'number') return v
  if (typeof v === 'bigint') return Number(v)
  if (v !== null && typeof v === 'object' && 'toNumber' in v && typeof (v as Long).toNumber === 'function') return (v as Long).toNumber()
  return NaN
}
