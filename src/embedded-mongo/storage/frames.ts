// Journal and snapshot framing: [u32 payload length][u32 CRC-32 of payload][payload], where the payload
// is one or more concatenated BSON documents forming one atomic group. A frame that is cut short or
// fails its checksum marks the end of the valid data.
import { BSON } from 'bson'
import { DESERIALIZE_OPTIONS } from '../bson-options.ts'
import { crc32 } from '../crc32.ts'
import type { Doc } from '../values.ts'

export const FRAME_HEADER_BYTES = 8
/** Sanity bound on a single frame so a corrupt length cannot make recovery allocate gigabytes. */
export const MAX_FRAME_BYTES = 512 * 1024 * 1024

export function encodeFrame(docs: readonly Doc[]): Buffer {
  const parts = docs.map((d) => BSON.serialize(d))
  const payloadLength = parts.reduce((n, p) => n + p.length, 0)
  const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + payloadLength)
  let pos = FRAME_HEADER_BYTES
  for (const p of parts) {
    frame.set(p, pos)
    pos += p.length
  }
  frame.writeUInt32LE(payloadLength, 0)
  frame.writeUInt32LE(crc32(frame.subarray(FRAME_HEADER_BYTES)), 4)
  return frame
}

export interface DecodedFrames {
  groups: Doc[][]
  /** Bytes from `start` covered by intact frames; anything after is torn or corrupt. */
  validEnd: number
  /** Why decoding stopped before the end of the buffer, if it did. */
  problem?: string
}

function decodePayload(payload: Buffer): Doc[] | null {
  const docs: Doc[] = []
  let pos = 0
  while (pos < payload.length) {
    if (payload.length - pos < 5) return null
    const size = payload.readInt32LE(pos)
    if (size < 5 || pos + size > payload.length) return null
    try {
      docs.push(BSON.deserialize(payload.subarray(pos, pos + size), DESERIALIZE_OPTIONS))
    } catch {
      return null
    }
    pos += size
  }
  return docs.length > 0 ? docs : null
}

export function decodeFrames(buf: Buffer, start: number): DecodedFrames {
  const groups: Doc[][] = []
  let pos = start
  while (pos < buf.length) {
    if (buf.length - pos < FRAME_HEADER_BYTES) return { groups, validEnd: pos, problem: 'truncated frame header' }
    const length = buf.readUInt32LE(pos)
    const checksum = buf.readUInt32LE(pos + 4)
    if (length === 0 || length > MAX_FRAME_BYTES) return { groups, validEnd: pos, problem: `implausible frame length ${length}` }
    const end = pos + FRAME_HEADER_BYTES + length
    if (end > buf.length) return { groups, validEnd: pos, problem: 'truncated frame payload' }
    const payload = buf.subarray(pos + FRAME_HEADER_BYTES, end)
    if (crc32(payload) !== checksum) return { groups, validEnd: pos, problem: 'checksum mismatch' }
    const docs = decodePayload(payload)
    if (!docs) return { groups, validEnd: pos, problem: 'undecodable frame payload' }
    groups.push(docs)
    pos = end
  }
  return { groups, validEnd: pos }
}
