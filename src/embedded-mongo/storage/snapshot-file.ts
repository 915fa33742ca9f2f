// snapshot.bin: magic, a header frame, the state as frames of replayable operations, an end frame.
// It only ever appears through an atomic rename of a complete, fsynced file, so any damage inside it is
// media damage and start-up refuses it. The header names the generation, a random id (which the
// manifest records, so a snapshot from elsewhere is noticed) and that a manifest goes with it.
import { randomUUID } from 'node:crypto'
import { open, type FileHandle } from 'node:fs/promises'
import { join } from 'node:path'
import { setImmediate as yieldToEventLoop } from 'node:timers/promises'
import type { JournalOp } from '../catalog.ts'
import type { Doc } from '../values.ts'
import { DataDirectoryDamagedError } from './damaged.ts'
import { FILE_MODE, writeAll } from './files.ts'
import { decodeFrames, encodeFrame, salvageFrames, type DamagedRange } from './frames.ts'

export const SNAPSHOT_FILE = 'snapshot.bin'
export const SNAPSHOT_TMP = 'snapshot.tmp'
const SNAPSHOT_MAGIC = Buffer.from('EMSNAP01')
// Small frames: damage costs the repair command one frame's records, not a megabyte of them.
const CHUNK_BYTES = 64 * 1024
const CHUNK_OPS = 200

export interface SnapshotHeader {
  generation: number
  /** Absent in snapshots written before the manifest existed. */
  id: string | null
  /** Written by a version that keeps a MANIFEST next to it: a missing manifest is then damage. */
  withManifest: boolean
  /** The sequence number of the last write the snapshot holds (journal-file.ts); 0 in older snapshots. */
  seq: number
}

/** How the snapshot's bytes reach its file; replaceable only so tests can make the disk fill up. */
export type SnapshotWriter = (fh: FileHandle, data: Buffer) => Promise<void>

/** Writes the snapshot to SNAPSHOT_TMP and fsyncs it; the caller renames it into place. */
export async function writeSnapshotTmp(dir: string, generation: number, seq: number, ops: Iterable<JournalOp>, write: SnapshotWriter = writeAll): Promise<{ bytes: number; id: string }> {
  const id = randomUUID()
  const snap = await open(join(dir, SNAPSHOT_TMP), 'w', FILE_MODE)
  let bytes = 0
  const put = async (data: Buffer): Promise<void> => {
    await write(snap, data)
    bytes += data.length
  }
  try {
    await put(SNAPSHOT_MAGIC)
    await put(encodeFrame([{ op: 'snapshotHeader', generation, id, manifest: true, seq, createdAt: new Date() }]))
    let chunk: Doc[] = []
    let chunkBytes = 0
    let count = 0
    for (const op of ops) {
      chunk.push(op as unknown as Doc)
      count++
      chunkBytes += op.op === 'put' ? 256 : 64 // rough; only decides frame boundaries
      if (chunkBytes >= CHUNK_BYTES || chunk.length >= CHUNK_OPS) {
        await put(encodeFrame(chunk))
        chunk = []
        chunkBytes = 0
        // Compaction runs beside live traffic: let requests in between chunks.
        await yieldToEventLoop()
      }
    }
    if (chunk.length > 0) await put(encodeFrame(chunk))
    await put(encodeFrame([{ op: 'snapshotEnd', count }]))
    await snap.sync()
  } finally {
    await snap.close()
  }
  return { bytes, id }
}

function headerOf(doc: Doc | undefined): SnapshotHeader | undefined {
  if (doc?.op !== 'snapshotHeader' || !Number.isSafeInteger(Number(doc.generation))) return undefined
  const seq = Number(doc.seq ?? 0)
  return { generation: Number(doc.generation), id: typeof doc.id === 'string' ? doc.id : null, withManifest: doc.manifest === true, seq: Number.isSafeInteger(seq) && seq > 0 ? seq : 0 }
}

/** The snapshot's header and operations; any damage refuses start-up. */
export function parseSnapshot(dir: string, data: Buffer): { header: SnapshotHeader; ops: JournalOp[] } {
  if (!data.subarray(0, SNAPSHOT_MAGIC.length).equals(SNAPSHOT_MAGIC)) {
    throw new DataDirectoryDamagedError(dir, SNAPSHOT_FILE, 'not a snapshot file (bad header)', 0)
  }
  const decoded = decodeFrames(data, SNAPSHOT_MAGIC.length)
  if (decoded.problem) throw new DataDirectoryDamagedError(dir, SNAPSHOT_FILE, `corrupt (${decoded.problem})`, decoded.validEnd)
  const header = headerOf(decoded.groups[0]?.[0])
  const end = decoded.groups[decoded.groups.length - 1]?.[0]
  if (!header || end?.op !== 'snapshotEnd') {
    throw new DataDirectoryDamagedError(dir, SNAPSHOT_FILE, 'corrupt (missing header or end marker)', header ? data.length : SNAPSHOT_MAGIC.length)
  }
  return { header, ops: decoded.groups.slice(1, -1).flat() as unknown as JournalOp[] }
}

export interface SalvagedSnapshot {
  header: SnapshotHeader | undefined
  ops: JournalOp[]
  damaged: DamagedRange[]
  complete: boolean
}

/** Whatever intact frames a damaged snapshot still holds (for the repair command). */
export function salvageSnapshot(data: Buffer): SalvagedSnapshot {
  const start = data.subarray(0, SNAPSHOT_MAGIC.length).equals(SNAPSHOT_MAGIC) ? SNAPSHOT_MAGIC.length : 0
  const { groups, damaged } = salvageFrames(data, start)
  if (start === 0) damaged.unshift({ offset: 0, bytes: 0, problem: 'bad file header' })
  const header = headerOf(groups[0]?.docs[0])
  const ops: JournalOp[] = []
  let ended = false
  for (const { docs } of groups) {
    for (const doc of docs) {
      if (doc.op === 'snapshotHeader') continue
      if (doc.op === 'snapshotEnd') { ended = true; continue }
      ops.push(doc as unknown as JournalOp)
    }
  }
  return { header, ops, damaged, complete: damaged.length === 0 && header !== undefined && ended }
}
