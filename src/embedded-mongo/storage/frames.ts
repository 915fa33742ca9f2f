// Journal and snapshot framing: [u32 payload length][u32 CRC-32 of payload][payload], where the payload
// is one or more concatenated BSON documents forming one atomic group.
//
// Telling a torn tail from damage: an append interrupted by a crash can only leave garbage *after* the
// last intact frame, never an intact frame after garbage. So decoding stops at the first frame that is
// not intact and then looks for any intact frame further on (`intactAfter`). None: the rest is a torn
// tail (also when it is a complete-looking frame with a bad checksum: a power cut can persist the length
// but not all of the payload's sectors). One found: the bad bytes sit in the middle of acknowledged data,
// and start-up refuses. (A power cut that persisted the pages of one unsynced batch out of order can
// also look like this; refusing is still right, since only the repair command can tell, and it keeps
// every intact frame.)
import { BSON } from 'bson'
import { DESERIALIZE_OPTIONS } from '../bson-options.ts'
import { crc32 } from '../crc32.ts'
import type { Doc } from '../values.ts'

export const FRAME_HEADER_BYTES = 8
/** Sanity bound on a single frame so a corrupt length cannot make recovery allocate gigabytes. */
export const MAX_FRAME_BYTES = 512 * 1024 * 1024
/** The smallest payload: one empty BSON document. */
const MIN_PAYLOAD_BYTES = 5

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
  /** Where each group's frame starts. */
  offsets: number[]
  /** Bytes from `start` covered by intact frames; anything after is torn or corrupt. */
  validEnd: number
  /** Why decoding stopped before the end of the buffer, if it did. */
  problem?: string
  /** Offset of the first intact frame after `validEnd`, if there is one: then the data is damaged, not torn. */
  intactAfter?: number
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

type FrameRead = { docs: Doc[]; end: number } | { problem: string }

/** The frame starting at `pos`, or why there is no intact frame there. */
export function readFrame(buf: Buffer, pos: number): FrameRead {
  if (buf.length - pos < FRAME_HEADER_BYTES) return { problem: 'truncated frame header' }
  const length = buf.readUInt32LE(pos)
  if (length < MIN_PAYLOAD_BYTES || length > MAX_FRAME_BYTES) return { problem: `implausible frame length ${length}` }
  const end = pos + FRAME_HEADER_BYTES + length
  if (end > buf.length) return { problem: 'truncated frame payload' }
  const payload = buf.subarray(pos + FRAME_HEADER_BYTES, end)
  if (crc32(payload) !== buf.readUInt32LE(pos + 4)) return { problem: 'checksum mismatch' }
  const docs = decodePayload(payload)
  return docs ? { docs, end } : { problem: 'undecodable frame payload' }
}

/** The offset of the first intact frame starting after `from`, if any. Cheap on garbage: a checksum is
 *  only computed where a whole frame would fit and its payload looks like BSON (a first document size
 *  within the payload, a final zero byte); without that filter a large torn tail of random bytes would
 *  cost time cubic in its size. */
export function findIntactFrame(buf: Buffer, from: number): number | undefined {
  for (let pos = from; pos + FRAME_HEADER_BYTES + MIN_PAYLOAD_BYTES <= buf.length; pos++) {
    const length = buf.readUInt32LE(pos)
    const end = pos + FRAME_HEADER_BYTES + length
    if (length < MIN_PAYLOAD_BYTES || length > MAX_FRAME_BYTES || end > buf.length || buf[end - 1] !== 0) continue
    const firstDoc = buf.readInt32LE(pos + FRAME_HEADER_BYTES)
    if (firstDoc < MIN_PAYLOAD_BYTES || firstDoc > length) continue
    if ('docs' in readFrame(buf, pos)) return pos
  }
  return undefined
}

export function decodeFrames(buf: Buffer, start: number): DecodedFrames {
  const groups: Doc[][] = []
  const offsets: number[] = []
  let pos = start
  while (pos < buf.length) {
    const frame = readFrame(buf, pos)
    if ('problem' in frame) {
      return { groups, offsets, validEnd: pos, problem: frame.problem, intactAfter: findIntactFrame(buf, pos + 1) }
    }
    groups.push(frame.docs)
    offsets.push(pos)
    pos = frame.end
  }
  return { groups, offsets, validEnd: pos }
}

export interface DamagedRange {
  offset: number
  bytes: number
  problem: string
}

export interface SalvagedFrames {
  groups: Array<{ offset: number; docs: Doc[] }>
  /** Byte ranges that are not part of any intact frame. */
  damaged: DamagedRange[]
}

/** Every intact frame, also those after damage (for the repair command). */
export function salvageFrames(buf: Buffer, start: number): SalvagedFrames {
  const groups: SalvagedFrames['groups'] = []
  const damaged: DamagedRange[] = []
  let pos = start
  while (pos < buf.length) {
    const frame = readFrame(buf, pos)
    if ('docs' in frame) {
      groups.push({ offset: pos, docs: frame.docs })
      pos = frame.end
      continue
    }
    const next = findIntactFrame(buf, pos + 1) ?? buf.length
    damaged.push({ offset: pos, bytes: next - pos, problem: frame.problem })
    pos = next
  }
  return { groups, damaged }
}
