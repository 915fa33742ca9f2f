// MongoDB wire protocol framing: parsing OP_MSG and legacy OP_QUERY requests, encoding OP_MSG and
// OP_REPLY responses. Every message starts with a 16-byte header:
// int32 messageLength, int32 requestID, int32 responseTo, int32 opCode (all little-endian).
import { BSON } from 'bson'
import { DESERIALIZE_OPTIONS, SERIALIZE_OPTIONS } from './bson-options.ts'
import type { Doc } from './values.ts'

export const OP_REPLY = 1
export const OP_QUERY = 2004
export const OP_COMPRESSED = 2012
export const OP_MSG = 2013

export const HEADER_BYTES = 16
export const MAX_BSON_OBJECT_BYTES = 16 * 1024 * 1024
export const MAX_MESSAGE_BYTES = 48_000_000
export const MAX_WRITE_BATCH_SIZE = 100_000

const FLAG_CHECKSUM_PRESENT = 1 << 0
const FLAG_MORE_TO_COME = 1 << 1
// The low 16 flag bits are "required": a receiver must reject bits it does not know.
const KNOWN_REQUIRED_FLAGS = FLAG_CHECKSUM_PRESENT | FLAG_MORE_TO_COME

/** A message the server cannot make sense of; the connection is closed. */
export class ProtocolError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ProtocolError'
  }
}

export interface MsgRequest {
  kind: 'msg'
  requestId: number
  body: Doc
  /** The client will not read a reply (unacknowledged writes). */
  moreToCome: boolean
}

export interface QueryRequest {
  kind: 'query'
  requestId: number
  fullCollectionName: string
  query: Doc
}

export type Request = MsgRequest | QueryRequest

function readCString(buf: Buffer, pos: number, end: number): { value: string; next: number } {
  const zero = buf.indexOf(0, pos)
  if (zero === -1 || zero >= end) throw new ProtocolError('unterminated cstring')
  return { value: buf.toString('utf8', pos, zero), next: zero + 1 }
}

function readDocument(buf: Buffer, pos: number, end: number): { doc: Doc; next: number } {
  if (end - pos < 5) throw new ProtocolError('truncated BSON document')
  const size = buf.readInt32LE(pos)
  if (size < 5 || pos + size > end || size > MAX_BSON_OBJECT_BYTES + 16 * 1024) {
    throw new ProtocolError(`invalid BSON document size ${size}`)
  }
  try {
    return { doc: BSON.deserialize(buf.subarray(pos, pos + size), DESERIALIZE_OPTIONS), next: pos + size }
  } catch (err) {
    throw new ProtocolError(`invalid BSON: ${(err as Error).message}`)
  }
}

/** Parses one complete message (header included). Throws ProtocolError for anything malformed. */
export function parseMessage(buf: Buffer): Request {
  const length = buf.readInt32LE(0)
  if (length !== buf.length) throw new ProtocolError('message length mismatch')
  const requestId = buf.readInt32LE(4)
  const opCode = buf.readInt32LE(12)
  if (opCode === OP_MSG) return parseOpMsg(buf, requestId)
  if (opCode === OP_QUERY) return parseOpQuery(buf, requestId)
  if (opCode === OP_COMPRESSED) throw new ProtocolError('compression was not negotiated')
  throw new ProtocolError(`unsupported opCode ${opCode}`)
}

function parseOpMsg(buf: Buffer, requestId: number): MsgRequest {
  if (buf.length < HEADER_BYTES + 5) throw new ProtocolError('OP_MSG too short')
  const flags = buf.readUInt32LE(HEADER_BYTES)
  if ((flags & 0xffff & ~KNOWN_REQUIRED_FLAGS) !== 0) throw new ProtocolError(`unknown required OP_MSG flag bits ${flags}`)
  // The optional trailing CRC-32C is not verified: TCP already checksums, and drivers do not send it.
  const end = buf.length - (flags & FLAG_CHECKSUM_PRESENT ? 4 : 0)
  let pos = HEADER_BYTES + 4
  let body: Doc | undefined
  const sequences: Array<[string, Doc[]]> = []
  while (pos < end) {
    const kind = buf[pos++]
    if (kind === 0) {
      if (body) throw new ProtocolError('OP_MSG has more than one body section')
      const r = readDocument(buf, pos, end)
      body = r.doc
      pos = r.next
    } else if (kind === 1) {
      if (end - pos < 4) throw new ProtocolError('truncated document sequence')
      const size = buf.readInt32LE(pos)
      const sectionEnd = pos + size
      if (size < 5 || sectionEnd > end) throw new ProtocolError('invalid document sequence size')
      const id = readCString(buf, pos + 4, sectionEnd)
      const docs: Doc[] = []
      let p = id.next
      while (p < sectionEnd) {
        const r = readDocument(buf, p, sectionEnd)
        docs.push(r.doc)
        p = r.next
      }
      sequences.push([id.value, docs])
      pos = sectionEnd
    } else {
      throw new ProtocolError(`unknown OP_MSG section kind ${kind}`)
    }
  }
  if (!body) throw new ProtocolError('OP_MSG without a body section')
  for (const [id, docs] of sequences) {
    const existing = body[id]
    body[id] = Array.isArray(existing) ? [...existing, ...docs] : docs
  }
  return { kind: 'msg', requestId, body, moreToCome: (flags & FLAG_MORE_TO_COME) !== 0 }
}

function parseOpQuery(buf: Buffer, requestId: number): QueryRequest {
  let pos = HEADER_BYTES + 4 // flags are irrelevant for command queries
  const name = readCString(buf, pos, buf.length)
  pos = name.next + 8 // numberToSkip, numberToReturn
  if (pos > buf.length) throw new ProtocolError('truncated OP_QUERY')
  const { doc } = readDocument(buf, pos, buf.length)
  return { kind: 'query', requestId, fullCollectionName: name.value, query: doc }
}

function header(buf: Buffer, requestId: number, responseTo: number, opCode: number): void {
  buf.writeInt32LE(buf.length, 0)
  buf.writeInt32LE(requestId, 4)
  buf.writeInt32LE(responseTo, 8)
  buf.writeInt32LE(opCode, 12)
}

export function serializeReply(doc: Doc): Buffer {
  const bytes = BSON.serialize(doc, SERIALIZE_OPTIONS)
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

export function encodeOpMsg(requestId: number, responseTo: number, bson: Buffer): Buffer {
  const out = Buffer.allocUnsafe(HEADER_BYTES + 5 + bson.length)
  header(out, requestId, responseTo, OP_MSG)
  out.writeUInt32LE(0, HEADER_BYTES)
  out[HEADER_BYTES + 4] = 0
  bson.copy(out, HEADER_BYTES + 5)
  return out
}

export const OP_REPLY_QUERY_FAILURE = 2

export function encodeOpReply(requestId: number, responseTo: number, bson: Buffer, responseFlags = 0): Buffer {
  const out = Buffer.allocUnsafe(HEADER_BYTES + 20 + bson.length)
  header(out, requestId, responseTo, OP_REPLY)
  out.writeInt32LE(responseFlags, HEADER_BYTES)
  out.writeBigInt64LE(0n, HEADER_BYTES + 4) // cursorID
  out.writeInt32LE(0, HEADER_BYTES + 12) // startingFrom
  out.writeInt32LE(1, HEADER_BYTES + 16) // numberReturned
  bson.copy(out, HEADER_BYTES + 20)
  return out
}

