// journal-<G>.bin: magic, a header frame, then one frame per acknowledged write statement. The header
// names the generation, the snapshot the journal continues and a random id the MANIFEST records, so a
// journal renamed or copied in from elsewhere is noticed. (Journals of earlier versions have no header.)
//
// Each write's frame starts with `{op: 'seq', seq}`: a number that only grows across restarts and
// generations, and that the snapshot records for the last write it holds. Replay applies a frame only if
// its number is above everything applied before it, so a frame copied in from an older journal (or
// twice into this one) cannot roll a newer value back. Journals whose header says `sequenced` have a
// number on every frame; older ones have none (their frames are applied in order, as before).
import { randomUUID } from 'node:crypto'
import { readdir } from 'node:fs/promises'
import type { Doc } from '../values.ts'
import { encodeFrame } from './frames.ts'

export const JOURNAL_MAGIC = Buffer.from('EMJRNL01')
export const journalName = (gen: number): string => `journal-${gen}.bin`
const JOURNAL_PATTERN = /^journal-(\d+)\.bin$/

export interface JournalHeader {
  generation: number
  id: string
  /** The id of the snapshot this journal follows (null: none, generation 0). */
  snapshotId: string | null
  /** Every write frame carries a sequence number (false: a journal of an earlier version). */
  sequenced: boolean
}

/** The bytes a new journal starts with, and its header. */
export function journalStart(generation: number, snapshotId: string | null): { bytes: Buffer; header: JournalHeader } {
  const header: JournalHeader = { generation, id: randomUUID(), snapshotId, sequenced: true }
  return { bytes: Buffer.concat([JOURNAL_MAGIC, encodeFrame([{ op: 'journalHeader', ...header }])]), header }
}

/** The header, if the first decoded group is one. */
export function journalHeaderOf(group: Doc[] | undefined): JournalHeader | undefined {
  const doc = group?.[0]
  if (doc?.op !== 'journalHeader' || typeof doc.id !== 'string') return undefined
  return { generation: Number(doc.generation), id: doc.id, snapshotId: typeof doc.snapshotId === 'string' ? doc.snapshotId : null, sequenced: doc.sequenced === true }
}

/** One write's frame: its sequence number, then its operations. */
export function encodeWrite(seq: number, ops: readonly Doc[]): Buffer {
  return encodeFrame([{ op: 'seq', seq }, ...ops])
}

/** A write frame's sequence number (undefined: written by an earlier version) and its operations. */
export function decodeWrite(group: Doc[]): { seq: number | undefined; ops: Doc[] } {
  const first = group[0]
  if (first?.op === 'seq' && Number.isSafeInteger(Number(first.seq))) return { seq: Number(first.seq), ops: group.slice(1) }
  return { seq: undefined, ops: group }
}

/** Why a write frame must not be applied after the ones before it (sequence `last`), if it must not. */
export function staleWrite(seq: number | undefined, last: number, sequenced: boolean, snapshotSeq: number): string | undefined {
  if (seq === undefined) return sequenced ? 'it has no sequence number, which every record of this journal has' : undefined
  if (seq > last) return undefined
  return `its sequence number ${seq} is not above ${last}, the last one applied before it (the snapshot holds writes up to ${snapshotSeq})`
}

export async function journalGenerations(dir: string): Promise<number[]> {
  return (await readdir(dir))
    .map((f) => JOURNAL_PATTERN.exec(f))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b)
}
