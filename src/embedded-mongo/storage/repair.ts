// `npm run embedded-db -- repair DATA_DIR`: salvages a data directory start-up refused. It copies the
// directory aside first (DATA_DIR.bak-<timestamp>), keeps every intact frame of the snapshot and the
// journals (also those after damage), and rewrites the directory as a fresh snapshot, an empty journal
// and a MANIFEST, in a new generation above every one seen, so nothing older can be mistaken for it.
// Interrupted, it leaves a directory start-up refuses (or the repaired one): running it again is safe.
import { chmod, cp, open, rename, rm, stat } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { Catalog, type JournalOp } from '../catalog.ts'
import { lockDataDirectory, LOCK_FILE } from './dir-lock.ts'
import { DIR_MODE, FILE_MODE, fsyncDir, writeAll } from './files.ts'
import { salvageFrames, type DamagedRange } from './frames.ts'
import { readManifest, writeManifest, MANIFEST_FILE, MANIFEST_TMP, type Manifest } from './manifest.ts'
import { decodeWrite, JOURNAL_MAGIC, journalGenerations, journalHeaderOf, journalName, journalStart, staleWrite } from './journal-file.ts'
import { readIfExists } from './recovery.ts'
import { salvageSnapshot, SNAPSHOT_FILE, SNAPSHOT_TMP, writeSnapshotTmp } from './snapshot-file.ts'

export interface RepairReport {
  dir: string
  backup: string
  generation: number
  /** Operations kept from the snapshot, and journal frames (write statements) kept. */
  snapshotOps: number
  journalGroups: number
  /** Byte ranges that held no intact frame, per file: what could not be kept. */
  damaged: Array<DamagedRange & { file: string }>
  /** Files the directory should have held but did not, and why they matter. */
  missing: string[]
  /** Notes on what was found (unreadable manifest, journals older than the snapshot that were skipped). */
  notes: string[]
  documents: number
}

function timestamp(now: Date): string {
  return now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')
}

/** `backupTo`: where the copy goes (default: next to the directory, `DATA_DIR.bak-<UTC timestamp>`). */
export async function repairDataDirectory(dataDir: string, now = new Date(), backupTo?: string): Promise<RepairReport> {
  const dir = resolve(dataDir)
  if (!(await stat(dir).catch(() => undefined))?.isDirectory()) throw new Error(`${dir} is not a directory`)
  const unlock = await lockDataDirectory(dir)
  try {
    const backup = resolve(backupTo ?? `${dir}.bak-${timestamp(now)}`)
    if (await stat(backup).catch(() => undefined)) throw new Error(`${backup} already exists: name another place for the copy`)
    await cp(dir, backup, { recursive: true, errorOnExist: true, force: false, filter: (src) => src !== join(dir, LOCK_FILE) })
    await chmod(backup, DIR_MODE)
    const report: RepairReport = { dir, backup, generation: 0, snapshotOps: 0, journalGroups: 0, damaged: [], missing: [], notes: [], documents: 0 }

    let manifest: Manifest | undefined
    try {
      manifest = await readManifest(dir)
    } catch {
      report.notes.push(`${MANIFEST_FILE} was unreadable and is rewritten`)
    }
    // Replayed into a catalog that journals nowhere: the result is written out as one snapshot.
    const catalog = new Catalog({ log: () => undefined })
    const replay = (op: JournalOp): boolean => {
      try {
        catalog.replay(op)
        return true
      } catch (err) {
        report.notes.push(`an operation (${op.op} on ${op.db}) could not be applied: ${(err as Error).message}`)
        return false
      }
    }

    const snapshotData = await readIfExists(join(dir, SNAPSHOT_FILE))
    let snapGen: number | undefined
    let snapSeq = 0
    if (snapshotData) {
      const salvaged = salvageSnapshot(snapshotData)
      snapGen = salvaged.header?.generation
      snapSeq = salvaged.header?.seq ?? 0
      for (const op of salvaged.ops) if (replay(op)) report.snapshotOps++
      for (const d of salvaged.damaged) report.damaged.push({ file: SNAPSHOT_FILE, ...d })
      if (!salvaged.header) report.notes.push(`${SNAPSHOT_FILE}'s header was lost: its generation is unknown, so every journal is replayed`)
    } else if (manifest?.snapshot) {
      report.missing.push(`${SNAPSHOT_FILE} (generation ${manifest.generation}, ${manifest.snapshot.bytes} bytes): the state it held is lost; journals only hold the changes after it`)
    }
    if (manifest && snapGen !== undefined && snapGen < manifest.generation) {
      report.notes.push(`${SNAPSHOT_FILE} is generation ${snapGen}, older than the generation ${manifest.generation} ${MANIFEST_FILE} recorded`)
    }

    const journals = await journalGenerations(dir)
    const base = snapGen ?? -1
    // Sequence numbers only grow across journals: a frame not above those before it is an old copy.
    let lastSeq = snapSeq
    for (const gen of journals) {
      if (gen < base) {
        report.notes.push(`${journalName(gen)} is older than the snapshot (whose state already holds it) and was not replayed`)
        continue
      }
      const data = (await readIfExists(join(dir, journalName(gen)))) ?? Buffer.alloc(0)
      const start = data.subarray(0, JOURNAL_MAGIC.length).equals(JOURNAL_MAGIC) ? JOURNAL_MAGIC.length : 0
      if (start === 0 && data.length > 0) report.damaged.push({ file: journalName(gen), offset: 0, bytes: 0, problem: 'bad file header' })
      const { groups, damaged } = salvageFrames(data, start)
      let sequenced = false
      for (const { docs, offset } of groups) {
        const header = journalHeaderOf(docs)
        if (header) {
          sequenced = header.sequenced
          continue
        }
        const { seq, ops } = decodeWrite(docs)
        const stale = staleWrite(seq, lastSeq, sequenced, snapSeq)
        if (stale) {
          report.notes.push(`${journalName(gen)}: the record at byte ${offset} was left out: ${stale}`)
          continue
        }
        if (seq !== undefined) {
          lastSeq = seq
          sequenced = true
        }
        let applied = true
        for (const op of ops) applied = replay(op as unknown as JournalOp) && applied
        if (applied) report.journalGroups++
      }
      for (const d of damaged) report.damaged.push({ file: journalName(gen), ...d })
    }
    // The journal that held the writes after the snapshot (absent: they are lost, if there were any).
    const latest = snapGen ?? manifest?.generation
    if (latest !== undefined && !journals.some((g) => g >= latest)) {
      report.missing.push(`${journalName(latest)}: any writes made after snapshot generation ${latest} are lost`)
    }

    // Above every generation seen, so no file from before the repair can pass for the new state.
    const generation = Math.max(manifest?.generation ?? 0, snapGen ?? 0, ...journals) + 1
    report.generation = generation
    report.documents = catalog.allCollections().reduce((n, c) => n + c.docs.size, 0)
    const { bytes, id } = await writeSnapshotTmp(dir, generation, lastSeq, catalog.snapshotOps())
    const start = journalStart(generation, id)
    const journal = await open(join(dir, journalName(generation)), 'w', FILE_MODE)
    try {
      await writeAll(journal, start.bytes)
      await journal.sync()
    } finally {
      await journal.close()
    }
    await rename(join(dir, SNAPSHOT_TMP), join(dir, SNAPSHOT_FILE))
    await fsyncDir(dir)
    await writeManifest(dir, { generation, snapshot: { bytes, id }, journal: journalName(generation), journalId: start.header.id })
    for (const gen of journals) await rm(join(dir, journalName(gen)), { force: true })
    await rm(join(dir, MANIFEST_TMP), { force: true })
    await fsyncDir(dir)
    return report
  } finally {
    await unlock()
  }
}

/** The report as lines for the terminal. */
export function describeRepair(r: RepairReport): string[] {
  const lines = [
    `copied ${r.dir} to ${r.backup} before changing anything`,
    `kept ${r.snapshotOps} snapshot record(s) and ${r.journalGroups} journal write(s): ${r.documents} document(s) now in generation ${r.generation}`,
  ]
  if (r.damaged.length === 0 && r.missing.length === 0) lines.push('nothing had to be left out')
  for (const d of r.damaged) lines.push(`could not keep ${d.file} bytes ${d.offset}–${d.offset + d.bytes} (${d.bytes} bytes: ${d.problem})`)
  for (const m of r.missing) lines.push(`missing: ${m}`)
  for (const n of r.notes) lines.push(`note: ${n}`)
  return lines
}
