// journal-<G>.bin: magic, a header frame, then one frame per acknowledged write statement. The header
// names the generation, the snapshot the journal continues and a random id the MANIFEST records, so a
// journal renamed or copied in from elsewhere is noticed. (Journals of earlier versions have no header.)
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
}

/** The bytes a new journal starts with, and its header. */
export function journalStart(generation: number, snapshotId: string | null): { bytes: Buffer; header: JournalHeader } {
  const header: JournalHeader = { generation, id: randomUUID(), snapshotId }
  return { bytes: Buffer.concat([JOURNAL_MAGIC, encodeFrame([{ op: 'journalHeader', ...header }])]), header }
}

/** The header, if the first decoded group is one. */
export function journalHeaderOf(group: Doc[] | undefined): JournalHeader | undefined {
  const doc = group?.[0]
  if (doc?.op !== 'journalHeader' || typeof doc.id !== 'string') return undefined
  return { generation: Number(doc.generation), id: doc.id, snapshotId: typeof doc.snapshotId === 'string' ? doc.snapshotId : null }
}

export async function journalGenerations(dir: string): Promise<number[]> {
  return (await readdir(dir))
    .map((f) => JOURNAL_PATTERN.exec(f))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b)
}
