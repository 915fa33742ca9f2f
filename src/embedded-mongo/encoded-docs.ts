// Stored documents keep their BSON encoding next to them, so a find without projection sends the
// stored bytes instead of re-encoding a (often multi-kilobyte) document on every read. This is sound
// because stored documents are never mutated (an update stores a new object): the encoding of an
// object is fixed for its lifetime, and a WeakMap lets it go with the document.
import { BSON } from 'bson'
import { SERIALIZE_OPTIONS } from './bson-options.ts'
import type { Doc } from './values.ts'

const encodings = new WeakMap<Doc, Buffer>()

/** The BSON bytes of a stored document, encoded on first use. */
export function encodedDocument(doc: Doc): Buffer {
  let bytes = encodings.get(doc)
  if (!bytes) {
    const raw = BSON.serialize(doc, SERIALIZE_OPTIONS)
    bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)
    encodings.set(doc, bytes)
  }
  return bytes
}

/** Marks a cursor reply whose batch holds stored documents that may be sent as their stored bytes. */
export const STORED_BATCH = Symbol('storedBatch')

export interface CursorReplyDoc extends Doc {
  cursor: { id: unknown; ns: string; firstBatch?: Doc[]; nextBatch?: Doc[] }
  [STORED_BATCH]?: true
}

/**
 * Encodes `{cursor: {firstBatch|nextBatch: [...], id, ns}, ok}` by encoding the envelope with an empty
 * batch and splicing the stored documents' bytes into the array. Produces the same bytes as
 * BSON.serialize of the whole reply.
 */
export function encodeStoredBatchReply(reply: CursorReplyDoc): Buffer {
  const batchKey = reply.cursor.firstBatch ? 'firstBatch' : 'nextBatch'
  const docs = reply.cursor[batchKey] ?? []
  const envelopeRaw = BSON.serialize({ ...reply, cursor: { ...reply.cursor, [batchKey]: [] } }, SERIALIZE_OPTIONS)
  const envelope = Buffer.from(envelopeRaw.buffer, envelopeRaw.byteOffset, envelopeRaw.byteLength)
  // Layout: int32 size, 0x03 "cursor\0", then the cursor document: int32 size, 0x04 "<batchKey>\0", array.
  const cursorAt = 4 + 1 + 'cursor'.length + 1
  const arrayAt = cursorAt + 4 + 1 + batchKey.length + 1
  if (envelope[4] !== 0x03 || envelope.toString('latin1', 5, cursorAt - 1) !== 'cursor' || envelope[cursorAt + 4] !== 0x04 ||
    envelope.toString('latin1', cursorAt + 5, arrayAt - 1) !== batchKey || envelope.readInt32LE(arrayAt) !== 5) {
    throw new Error('unexpected cursor reply layout')
  }
  const bodies = docs.map(encodedDocument)
  let arrayBytes = 5
  for (let i = 0; i < bodies.length; i++) arrayBytes += 2 + String(i).length + bodies[i].length
  const out = Buffer.allocUnsafe(envelope.length - 5 + arrayBytes)
  envelope.copy(out, 0, 0, arrayAt)
  let pos = out.writeInt32LE(arrayBytes, arrayAt)
  for (let i = 0; i < bodies.length; i++) {
    out[pos++] = 0x03
    pos += out.write(String(i), pos, 'latin1')
    out[pos++] = 0
    pos += bodies[i].copy(out, pos)
  }
  out[pos++] = 0
  envelope.copy(out, pos, arrayAt + 5)
  const grown = arrayBytes - 5
  out.writeInt32LE(envelope.readInt32LE(0) + grown, 0)
  out.writeInt32LE(envelope.readInt32LE(cursorAt) + grown, cursorAt)
  return out
}
