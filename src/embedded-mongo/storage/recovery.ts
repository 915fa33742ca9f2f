// Start-up's reading of a data directory: what to load, and whether the files agree with each other and
// with the MANIFEST. Everything here only reads; anything that does not add up is refused with one
// DataDirectoryDamagedError before a single byte changes, so the repair command still has it all.
//
// What start-up fixes by itself, because a crash produces it and nothing acknowledged is in it:
//   - a torn tail on the journal (see frames.ts for how it is told apart from damage);
//   - a journal newer than the snapshot that holds no records (a compaction stopped before its rename);
//   - a snapshot one generation ahead of the MANIFEST (a compaction stopped after its rename);
//   - journals older than the snapshot (a compaction stopped before deleting them);
//   - no MANIFEST in a directory an earlier version wrote (it is written now).
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { JournalOp } from '../catalog.ts'
import type { Doc } from '../values.ts'
import { DataDirectoryDamagedError } from './damaged.ts'
import { decodeFrames } from './frames.ts'
import { MANIFEST_FILE, readManifest, type Manifest } from './manifest.ts'
import { parseSnapshot, SNAPSHOT_FILE, type SnapshotHeader } from './snapshot-file.ts'

export const JOURNAL_MAGIC = Buffer.from('EMJRNL01')
export const journalName = (gen: number): string => `journal-${gen}.bin`
const JOURNAL_PATTERN = /^journal-(\d+)\.bin$/

export async function readIfExists(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
}

export async function journalGenerations(dir: string): Promise<number[]> {
  return (await readdir(dir))
    .map((f) => JOURNAL_PATTERN.exec(f))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b)
}

export interface RecoveryPlan {
  /** Nothing was here: a new data directory. */
  fresh: boolean
  generation: number
  snapshot: { header: SnapshotHeader; ops: JournalOp[]; bytes: number } | undefined
  /** Groups of the journal of `generation`, in order (empty when it does not exist yet). */
  journalGroups: Doc[][]
  /** Where that journal's intact data ends, if it has a torn tail to cut there; `journalSize` is its length now. */
  cutAt: number | undefined
  tornProblem: string | undefined
  journalSize: number | undefined
  /** Journals to delete: older than the snapshot, or newer ones holding no records. */
  obsoleteJournals: number[]
  /** Written by a version without a MANIFEST: one is written now. */
  upgrade: boolean
  /** The MANIFEST to write (absent, behind the snapshot, or already right: undefined). */
  manifest: Manifest | undefined
}

export async function planRecovery(dir: string): Promise<RecoveryPlan> {
  const refuse = (file: string, detail: string, offset?: number): never => {
    throw new DataDirectoryDamagedError(dir, file, detail, offset)
  }
  const manifest = await readManifest(dir)
  const snapshotData = await readIfExists(join(dir, SNAPSHOT_FILE))
  const journals = await journalGenerations(dir)
  const plan: RecoveryPlan = {
    fresh: false, generation: 0, snapshot: undefined, journalGroups: [], cutAt: undefined, tornProblem: undefined,
    journalSize: undefined, obsoleteJournals: [], upgrade: false, manifest: undefined,
  }
  if (!manifest && !snapshotData && journals.length === 0) {
    plan.fresh = true
    plan.manifest = { generation: 0, snapshot: null, journal: journalName(0) }
    return plan
  }

  const snapshot = snapshotData ? { ...parseSnapshot(dir, snapshotData), bytes: snapshotData.length } : undefined
  const snapGen = snapshot?.header.generation
  // A compaction that stopped after renaming its snapshot but before recording it.
  let rolledForward = false
  if (manifest) {
    const recorded = manifest.snapshot
    if (snapGen === undefined) {
      if (recorded) refuse(SNAPSHOT_FILE, `missing, but ${MANIFEST_FILE} records a snapshot of generation ${manifest.generation} (${recorded.bytes} bytes)`)
      if (manifest.generation !== 0) refuse(MANIFEST_FILE, `records generation ${manifest.generation} without a snapshot`)
    } else if (snapGen === manifest.generation) {
      if (!recorded || recorded.bytes !== snapshot!.bytes || (recorded.id !== null && recorded.id !== snapshot!.header.id)) {
        refuse(SNAPSHOT_FILE, `is not the snapshot ${MANIFEST_FILE} records (${recorded ? `${recorded.bytes} bytes, id ${recorded.id ?? 'none'}` : 'none'}; found ${snapshot!.bytes} bytes, id ${snapshot!.header.id ?? 'none'}): it was replaced`)
      }
    } else if (snapGen === manifest.generation + 1) {
      rolledForward = true
    } else if (snapGen < manifest.generation) {
      refuse(SNAPSHOT_FILE, `is generation ${snapGen} but ${MANIFEST_FILE} records generation ${manifest.generation}: the generation went backwards (an older copy put back?)`)
    } else {
      refuse(SNAPSHOT_FILE, `is generation ${snapGen} but ${MANIFEST_FILE} records generation ${manifest.generation}`)
    }
  } else if (snapshot?.header.withManifest) {
    refuse(MANIFEST_FILE, `missing, but ${SNAPSHOT_FILE} (generation ${snapGen}) was written with one`)
  }
  const generation = snapGen ?? manifest?.generation ?? 0
  plan.generation = generation
  plan.snapshot = snapshot

  for (const gen of journals) {
    if (gen < generation) {
      plan.obsoleteJournals.push(gen)
    } else if (gen > generation) {
      const data = (await readIfExists(join(dir, journalName(gen)))) ?? Buffer.alloc(0)
      if (data.length > JOURNAL_MAGIC.length) {
        const missing = snapGen === undefined ? `${SNAPSHOT_FILE} is missing` : `${SNAPSHOT_FILE} is generation ${snapGen}`
        refuse(journalName(gen), `holds records that follow a snapshot of generation ${gen}, but ${missing}`)
      }
      plan.obsoleteJournals.push(gen)
    }
  }

  const current = join(dir, journalName(generation))
  const data = journals.includes(generation) ? await readIfExists(current) : undefined
  if (!data) {
    // Known to exist unless a compaction stopped between its rename and creating the journal (only an
    // earlier version did it in that order) or an earlier version wrote the directory.
    if (manifest && !rolledForward) refuse(journalName(generation), `missing, but ${MANIFEST_FILE} records it`)
  } else if (data.length < JOURNAL_MAGIC.length && JOURNAL_MAGIC.subarray(0, data.length).equals(data)) {
    // Torn while being created: nothing in it was ever acknowledged.
    plan.cutAt = 0
    plan.tornProblem = 'torn file header'
    plan.journalSize = data.length
  } else if (!data.subarray(0, JOURNAL_MAGIC.length).equals(JOURNAL_MAGIC)) {
    refuse(journalName(generation), 'bad header', 0)
  } else {
    const decoded = decodeFrames(data, JOURNAL_MAGIC.length)
    plan.journalSize = data.length
    if (decoded.problem && decoded.intactAfter !== undefined) {
      refuse(journalName(generation), `${decoded.problem}, and intact records follow it at byte ${decoded.intactAfter}`, decoded.validEnd)
    }
    plan.journalGroups = decoded.groups
    if (decoded.problem) {
      plan.cutAt = decoded.validEnd
      plan.tornProblem = decoded.problem
    }
  }

  const wanted: Manifest = {
    generation,
    snapshot: snapshot ? { bytes: snapshot.bytes, id: snapshot.header.id } : null,
    journal: journalName(generation),
  }
  plan.upgrade = !manifest
  if (!manifest || rolledForward) plan.manifest = wanted
  return plan
}
