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
// A journal must be the one the MANIFEST records (by the id in its header) and follow the snapshot there is.
// A write frame whose sequence number is not above the snapshot's and every one before it (an old frame
// copied in) is left out with a warning (`ignored`), never applied: it would roll newer values back.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { JournalOp } from '../catalog.ts'
import type { Doc } from '../values.ts'
import { DataDirectoryDamagedError } from './damaged.ts'
import { decodeFrames } from './frames.ts'
import { decodeWrite, JOURNAL_MAGIC, journalGenerations, journalHeaderOf, journalName, staleWrite, type JournalHeader } from './journal-file.ts'
import { MANIFEST_FILE, readManifest, type Manifest } from './manifest.ts'
import { parseSnapshot, SNAPSHOT_FILE, type SnapshotHeader } from './snapshot-file.ts'

export async function readIfExists(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
}

export interface RecoveryPlan {
  /** Nothing was here: a new data directory. */
  fresh: boolean
  generation: number
  snapshot: { header: SnapshotHeader; ops: JournalOp[]; bytes: number } | undefined
  /** Operations of each write to replay from the journal of `generation`, in order (empty when it does not exist yet), and its header. */
  journalGroups: Doc[][]
  /** Write frames of that journal left out because they are older than what precedes them. */
  ignored: Array<{ offset: number; detail: string }>
  /** The highest sequence number in the snapshot and the writes to replay: where new writes continue. */
  lastSeq: number
  journalHeader: JournalHeader | undefined
  /** Where that journal's intact data ends, if it has a torn tail to cut there; `journalSize` is its length now. */
  cutAt: number | undefined
  tornProblem: string | undefined
  journalSize: number | undefined
  /** Journals to delete: older than the snapshot, or newer ones holding no records. */
  obsoleteJournals: number[]
  /** Written by a version without a MANIFEST: one is written now. */
  upgrade: boolean
  /** The MANIFEST as found. */
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
    journalSize: undefined, obsoleteJournals: [], upgrade: false, manifest, journalHeader: undefined, ignored: [], lastSeq: 0,
  }
  if (!manifest && !snapshotData && journals.length === 0) {
    plan.fresh = true
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
  plan.lastSeq = snapshot?.header.seq ?? 0

  for (const gen of journals) {
    if (gen < generation) {
      plan.obsoleteJournals.push(gen)
    } else if (gen > generation) {
      // A compaction creates the next journal (magic and header only) before renaming its snapshot.
      const data = (await readIfExists(join(dir, journalName(gen)))) ?? Buffer.alloc(0)
      const decoded = decodeFrames(data, Math.min(JOURNAL_MAGIC.length, data.length))
      if (decoded.groups.length > (journalHeaderOf(decoded.groups[0]) ? 1 : 0) || decoded.intactAfter !== undefined) {
        const missing = snapGen === undefined ? `${SNAPSHOT_FILE} is missing` : `${SNAPSHOT_FILE} is generation ${snapGen}`
        refuse(journalName(gen), `holds records that follow a snapshot of generation ${gen}, but ${missing}`)
      }
      plan.obsoleteJournals.push(gen)
    }
  }

  const current = join(dir, journalName(generation))
  const data = journals.includes(generation) ? await readIfExists(current) : undefined
  if (!data) {
    // A compaction creates the journal before renaming its snapshot into place, so with a MANIFEST it
    // always exists; without one (an earlier version's directory) a compaction stopped between its
    // rename and creating the journal leaves none, and nothing was written after that snapshot.
    if (manifest) {
      const detail = rolledForward ? `missing, but ${SNAPSHOT_FILE} of generation ${generation} is in place, which is only renamed there once it exists` : `missing, but ${MANIFEST_FILE} records it`
      refuse(journalName(generation), detail)
    }
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
    const header = journalHeaderOf(decoded.groups[0])
    plan.journalHeader = header
    const snapshotSeq = plan.lastSeq
    let sequenced = header?.sequenced === true
    for (let i = header ? 1 : 0; i < decoded.groups.length; i++) {
      const { seq, ops } = decodeWrite(decoded.groups[i]!)
      const stale = staleWrite(seq, plan.lastSeq, sequenced, snapshotSeq)
      if (stale) {
        plan.ignored.push({ offset: decoded.offsets[i]!, detail: stale })
        continue
      }
      if (seq !== undefined) {
        plan.lastSeq = seq
        sequenced = true
      }
      plan.journalGroups.push(ops)
    }
    const name = journalName(generation)
    const snapshotId = snapshot?.header.id ?? null
    if (header && header.generation !== generation) refuse(name, `its header says generation ${header.generation}: it was renamed`, JOURNAL_MAGIC.length)
    if (header && header.snapshotId !== snapshotId) {
      refuse(name, `follows snapshot ${header.snapshotId ?? 'none'}, not the ${SNAPSHOT_FILE} here (${snapshotId ?? 'none'}): one of them was replaced`, JOURNAL_MAGIC.length)
    }
    // After a compaction that stopped before recording it, the MANIFEST does not know this journal yet.
    const recordedId = rolledForward ? null : manifest?.journalId ?? null
    if (recordedId !== null && header?.id !== recordedId) {
      refuse(name, `is not the journal ${MANIFEST_FILE} records (id ${recordedId}; found ${header?.id ?? 'no header'}): it was replaced`, JOURNAL_MAGIC.length)
    }
    if (decoded.problem) {
      plan.cutAt = decoded.validEnd
      plan.tornProblem = decoded.problem
    }
  }

  plan.upgrade = !manifest
  return plan
}
