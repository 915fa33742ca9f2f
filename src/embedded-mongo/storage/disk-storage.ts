// Durable storage in one directory:
//   snapshot.bin      full state as of generation G (written to a temp file, fsynced, renamed)
//   journal-<G>.bin   operation groups appended after the snapshot of generation G, fsynced before acks
//   MANIFEST          the directory's record of G and of the snapshot (manifest.ts)
//   LOCK              pid of the owning process, so two servers never share a journal
// Recovery (recovery.ts) checks that these agree, loads the snapshot and replays the journal, cutting
// only a torn tail. Compaction writes snapshot G+1 from the in-memory state and starts journal G+1;
// since stored documents are never mutated in place, capturing the state is just collecting
// references, and serialising it can happen in the background.
//
// Short of space: a snapshot needs about as much free space as the state it holds, while the journal
// only needs room for the next write. So a compaction that fails (ENOSPC, or anything else) is not
// retried on every write: it is logged once, and tried again only once the journal has grown by a
// further `compactJournalBytes` (doubling with each failure in a row, up to 16 times) or
// `compactionRetryMs` has passed. Writes go on meanwhile; they are refused (OutOfDiskSpace, which the
// service answers with 507) only when the journal itself cannot take them.
import { chmod, open, rename, rm, mkdir, type FileHandle } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import type { Catalog, JournalOp, Revert } from '../catalog.ts'
import { storageWriteError } from '../errors.ts'
import type { Doc } from '../values.ts'
import { lockDataDirectory } from './dir-lock.ts'
import { DIR_MODE, FILE_MODE, fsyncDir, writeAll } from './files.ts'
import { MANIFEST_TMP, writeManifest, type Manifest } from './manifest.ts'
import { encodeWrite, journalName, journalStart } from './journal-file.ts'
import { planRecovery, type RecoveryPlan } from './recovery.ts'
import { SNAPSHOT_FILE, SNAPSHOT_TMP, writeSnapshotTmp, type SnapshotWriter } from './snapshot-file.ts'
import type { Storage } from './storage.ts'

export { DataDirectoryInUseError } from './dir-lock.ts'
export type { SnapshotWriter } from './snapshot-file.ts'
export { DataDirectoryDamagedError } from './damaged.ts'

export interface DiskStorageLogger {
  info(msg: string): void
  warn(msg: string): void
  error(msg: string): void
}

/** Writes a batch of journal frames at `position`; replaceable only so tests can make the disk fill up. */
export type JournalWriter = (fh: FileHandle, data: Buffer, position: number) => Promise<void>

export interface DiskStorageOptions {
  dir: string
  /** Test seam: how journal appends reach the file (default: positioned writes until all is written). */
  journalWriter?: JournalWriter
  /** Test seam: how a snapshot's bytes reach its file (default: writes until all is written). */
  snapshotWriter?: SnapshotWriter
  /** Compact once the journal exceeds this many bytes (and is larger than the last snapshot). */
  compactJournalBytes?: number
  /** After a failed compaction, try again after this long even if the journal has not grown enough. */
  compactionRetryMs?: number
  /** Test seam: the clock for `compactionRetryMs`. */
  now?: () => number
  logger?: DiskStorageLogger
}

export interface RecoveryReport {
  generation: number
  snapshotOps: number
  journalGroups: number
  /** Bytes cut from the end of a journal because they were torn or corrupt. */
  truncatedBytes: number
  /** Journal frames left out because their sequence number was not above what preceded them. */
  ignoredGroups: number
}

export const COMPACTION_RETRY_MS = 10 * 60_000
const MAX_BACKOFF_DOUBLINGS = 4
/** How many ignored journal frames are logged one by one before the rest are only counted. */
const IGNORED_LOGGED = 5

// Positioned, so a journal truncated after a failed append is continued at its end whatever mode it was
// opened in ('a+' appends anyway; 'w' would otherwise leave a hole of zeros at the old file position).
export const writeAt: JournalWriter = async (fh, data, position) => {
  let off = 0
  while (off < data.length) {
    const { bytesWritten } = await fh.write(data, off, data.length - off, position + off)
    off += bytesWritten
  }
}

// Groups undone after a failed append, kept a little while so their waiters learn why.
const LOST_RANGES_KEPT = 64

export class DiskStorage implements Storage {
  private readonly dir: string
  private readonly compactJournalBytes: number
  private readonly logger: DiskStorageLogger | undefined
  private catalog: Catalog | undefined
  private fh: FileHandle | undefined
  private generation = 0
  private journalBytes = 0
  private snapshotBytes = 0
  private pending: Buffer[] = []
  private durableSeq = 0
  private chain: Promise<void> = Promise.resolve()
  private queuedFlush: Promise<void> | undefined
  private compactionQueued = false
  /** Set while the journal may end in a partial frame; cleared once it is cut back to `journalBytes`. */
  private failure: Error | undefined
  /** How to undo each logged group that is not durable yet, oldest first. */
  private unsettled: Array<{ seq: number; revert: Revert }> = []
  /** Groups that were undone because the journal could not take them, and what their writers are told. */
  private lost: Array<{ from: number; to: number; error: Error }> = []
  private readonly writeJournal: JournalWriter
  private readonly writeSnapshot: SnapshotWriter | undefined
  private readonly compactionRetryMs: number
  private readonly now: () => number
  /** After a failed compaction: when to try again (journal size or time, whichever comes first). */
  private compactionRetry: { atBytes: number; at: number; failures: number; code: string } | undefined
  /** Compactions started and failed since open (started by journal size or by compactNow). */
  readonly compactions = { attempts: 0, failures: 0 }
  /** The sequence number of the last write recovered at open; write n of this process is seqBase + n. */
  private seqBase = 0
  private closed = false
  private unlock: (() => Promise<void>) | undefined
  /** The snapshot the MANIFEST should record, and the generation it was last written for. */
  private snapshotRecord: Manifest['snapshot'] = null
  private journalId: string | null = null
  private manifestGeneration = 0
  loggedSeq = 0

  constructor(opts: DiskStorageOptions) {
    this.dir = resolve(opts.dir)
    this.compactJournalBytes = opts.compactJournalBytes ?? 32 * 1024 * 1024
    this.logger = opts.logger
    this.writeJournal = opts.journalWriter ?? writeAt
    this.writeSnapshot = opts.snapshotWriter
    this.compactionRetryMs = opts.compactionRetryMs ?? COMPACTION_RETRY_MS
    this.now = opts.now ?? Date.now
  }

  log(ops: JournalOp[], revert: Revert): void {
    if (this.closed) throw new Error('storage is closed')
    this.loggedSeq++
    this.pending.push(encodeWrite(this.seqBase + this.loggedSeq, ops as unknown as Doc[]))
    this.unsettled.push({ seq: this.loggedSeq, revert })
  }

  async waitDurable(seq: number): Promise<void> {
    for (;;) {
      // Checked before durability: later groups may become durable after this one was undone.
      const lost = this.lost.find((l) => seq >= l.from && seq <= l.to)
      if (lost) throw lost.error
      if (this.durableSeq >= seq) return
      if (!this.fh) throw new Error('storage is closed')
      await this.scheduleFlush().catch(() => undefined)
    }
  }

  /** Serialises all file work; a task's failure is reported to its caller only. */
  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = this.chain.then(task)
    this.chain = run.then(() => undefined, () => undefined)
    return run
  }

  // Concurrent writers share one queued flush, so their records go out in one write + fsync.
  private scheduleFlush(): Promise<void> {
    if (!this.queuedFlush) {
      this.queuedFlush = this.enqueue(async () => {
        this.queuedFlush = undefined
        await this.flushPending()
      })
    }
    return this.queuedFlush
  }

  private async flushPending(): Promise<void> {
    await this.writePending()
    this.maybeCompact()
  }

  /**
   * Appends every logged group at the durable end of the journal and syncs it. Takes `pending` before its
   * first await unless the journal tail needs repair first (compaction relies on that: it never runs then).
   */
  private async writePending(): Promise<void> {
    const fh = this.fh
    if (this.pending.length === 0 || !fh) return
    try {
      if (this.failure) await this.repairTail(fh)
      const data = Buffer.concat(this.pending)
      const seq = this.loggedSeq
      this.pending = []
      await this.writeJournal(fh, data, this.journalBytes)
      await fh.datasync()
      this.journalBytes += data.length
      this.durableSeq = seq
    } catch (err) {
      throw await this.journalFailed(fh, err)
    }
    let settled = 0
    while (settled < this.unsettled.length && this.unsettled[settled]!.seq <= this.durableSeq) settled++
    this.unsettled.splice(0, settled)
  }

  /**
   * A failed append: nothing after the last durable group may stay visible, so every group that is not
   * durable (also those logged while the append ran, which may build on it) is undone newest first and its
   * writer told why. Then the partial frame is cut off, so a later append never follows garbage, and
   * writing resumes; if the cut fails too, the next append tries it again first.
   */
  private async journalFailed(fh: FileHandle, err: unknown): Promise<Error> {
    const error = storageWriteError(err)
    const from = this.durableSeq + 1
    const to = this.loggedSeq
    for (let i = this.unsettled.length - 1; i >= 0; i--) {
      try {
        this.unsettled[i]!.revert()
      } catch (revertErr) {
        this.logger?.error(`embedded-mongo: could not undo a write that was not made durable: ${(revertErr as Error).message}`)
      }
    }
    this.unsettled = []
    this.pending = []
    if (to >= from) {
      this.lost.push({ from, to, error })
      if (this.lost.length > LOST_RANGES_KEPT) this.lost.shift()
    }
    this.failure = error
    const code = (err as NodeJS.ErrnoException).code ?? 'unknown'
    this.logger?.error(`embedded-mongo: journal write failed (${code}): ${to - from + 1} write(s) undone and refused: ${error.message}`)
    await this.repairTail(fh).catch((cutErr: unknown) => {
      this.logger?.error(`embedded-mongo: could not cut the journal back after a failed write (${(cutErr as NodeJS.ErrnoException).code ?? 'unknown'}); the next write tries again`)
    })
    return error
  }

  private async repairTail(fh: FileHandle): Promise<void> {
    await fh.truncate(this.journalBytes)
    await fh.datasync()
    this.failure = undefined
  }

  private maybeCompact(): void {
    if (this.compactionQueued || this.closed) return
    if (this.journalBytes < this.compactJournalBytes || this.journalBytes < this.snapshotBytes) return
    const retry = this.compactionRetry
    if (retry && this.journalBytes < retry.atBytes && this.now() < retry.at) return
    this.compactionQueued = true
    this.enqueue(() => this.compact())
      .catch(() => undefined) // logged by compactionFailed
      .finally(() => { this.compactionQueued = false })
  }

  /** Writes a snapshot now (tests and shutdown hooks); normally compaction is triggered by journal size. */
  compactNow(): Promise<void> {
    return this.enqueue(() => this.compact())
  }

  /** Backs off and says so, once per streak of failures with the same cause (not once per write). */
  private compactionFailed(err: unknown): void {
    this.compactions.failures++
    const code = (err as NodeJS.ErrnoException).code ?? 'unknown'
    const previous = this.compactionRetry
    const failures = (previous?.failures ?? 0) + 1
    const growth = this.compactJournalBytes * 2 ** Math.min(failures - 1, MAX_BACKOFF_DOUBLINGS)
    this.compactionRetry = { atBytes: this.journalBytes + growth, at: this.now() + this.compactionRetryMs, failures, code }
    if (previous && previous.code === code) return
    const why = code === 'ENOSPC' || code === 'EDQUOT'
      ? `the disk holding ${this.dir} has less free space than a snapshot needs (the last one was ${this.snapshotBytes} bytes)`
      : `${(err as Error).message}`
    this.logger?.error(`embedded-mongo: compaction failed (${code}): ${why}. Writes go on in the journal (now ${this.journalBytes} bytes) and are refused only if it cannot grow; compaction is tried again once the journal has grown by ${growth} bytes or in ${Math.round(this.compactionRetryMs / 1000)} s, and further failures like this one are not logged until one succeeds`)
  }

  private compactionSucceeded(): void {
    const retry = this.compactionRetry
    if (!retry) return
    this.compactionRetry = undefined
    this.logger?.info(`embedded-mongo: compaction succeeded after ${retry.failures} failed attempt(s)`)
  }

  /** Writes a snapshot of the current state and starts a fresh journal. Runs inside the file queue. */
  private async compact(): Promise<void> {
    if (!this.catalog || !this.fh || this.failure) return
    this.compactions.attempts++
    try {
      await this.compactOnce(this.catalog)
    } catch (err) {
      this.compactionFailed(err)
      throw err
    }
    this.compactionSucceeded()
  }

  private async compactOnce(catalog: Catalog): Promise<void> {
    // Start-up accepts a snapshot at most one generation ahead of the MANIFEST, so one left behind by an
    // earlier failed compaction is brought up to date before another snapshot may replace this one.
    if (this.manifestGeneration !== this.generation) await this.recordManifest()
    // Capture: the ops reference immutable stored documents, and everything logged before this point is
    // in `pending` and goes to the old journal, so the snapshot equals old journal + old snapshot.
    const ops = [...catalog.snapshotOps()]
    const seq = this.seqBase + this.loggedSeq
    const newGen = this.generation + 1
    // Everything the snapshot captured goes to the old journal first (undone and refused if it cannot).
    await this.writePending()

    const tmpPath = join(this.dir, SNAPSHOT_TMP)
    const newJournal = join(this.dir, journalName(newGen))
    let next: FileHandle | undefined
    let snapshot: { bytes: number; id: string }
    let start: ReturnType<typeof journalStart>
    try {
      snapshot = await writeSnapshotTmp(this.dir, newGen, seq, ops, this.writeSnapshot)
      start = journalStart(newGen, snapshot.id)
      // The journal exists before its snapshot is renamed into place: until the rename, start-up removes
      // it as a leftover (it holds no records); after it, nothing can fail before writes go there.
      next = await open(newJournal, 'w', FILE_MODE)
      await writeAll(next, start.bytes)
      await next.sync()
      await fsyncDir(this.dir)
      await rename(tmpPath, join(this.dir, SNAPSHOT_FILE))
    } catch (err) {
      await next?.close().catch(() => undefined)
      await rm(newJournal, { force: true }).catch(() => undefined)
      await rm(tmpPath, { force: true }).catch(() => undefined)
      throw err
    }
    const old = this.fh
    this.fh = next
    const oldGen = this.generation
    this.generation = newGen
    this.journalBytes = start.bytes.length
    this.journalId = start.header.id
    this.snapshotBytes = snapshot.bytes
    this.snapshotRecord = { bytes: snapshot.bytes, id: snapshot.id }
    await fsyncDir(this.dir)
    await old?.close()
    // If this fails, start-up still accepts the directory (snapshot = MANIFEST + 1) and the next
    // compaction tries again first; the old journal stays until then and is removed at start-up.
    await this.recordManifest()
    await rm(join(this.dir, journalName(oldGen)), { force: true })
    this.logger?.info(`embedded-mongo: compacted storage into snapshot generation ${newGen} (${ops.length} records)`)
  }

  private currentManifest(): Manifest {
    return { generation: this.generation, snapshot: this.snapshotRecord, journal: journalName(this.generation), journalId: this.journalId }
  }

  private async recordManifest(): Promise<void> {
    await writeManifest(this.dir, this.currentManifest())
    this.manifestGeneration = this.generation
  }

  /** Takes the directory lock and loads snapshot + journals into the catalog. */
  async open(catalog: Catalog): Promise<RecoveryReport> {
    this.catalog = catalog
    await mkdir(this.dir, { recursive: true, mode: DIR_MODE })
    // A directory made earlier (or by hand) may be wider; a mount point we do not own cannot be changed.
    await chmod(this.dir, DIR_MODE).catch((err: Error) => this.logger?.warn(`embedded-mongo: could not restrict ${this.dir} to its owner: ${err.message}`))
    this.unlock = await lockDataDirectory(this.dir)
    try {
      return await this.recover(catalog)
    } catch (err) {
      await this.releaseLock()
      throw err
    }
  }

  private async releaseLock(): Promise<void> {
    await this.unlock?.()
    this.unlock = undefined
  }

  private async recover(catalog: Catalog): Promise<RecoveryReport> {
    // Only reads, and refuses (DataDirectoryDamagedError) before anything below changes a file.
    const plan = await planRecovery(this.dir)
    const report: RecoveryReport = { generation: plan.generation, snapshotOps: 0, journalGroups: 0, truncatedBytes: 0, ignoredGroups: plan.ignored.length }
    if (plan.snapshot) {
      for (const op of plan.snapshot.ops) {
        catalog.replay(op)
        report.snapshotOps++
      }
      this.snapshotBytes = plan.snapshot.bytes
      this.snapshotRecord = { bytes: plan.snapshot.bytes, id: plan.snapshot.header.id }
    }
    for (const group of plan.journalGroups) {
      for (const op of group) catalog.replay(op as unknown as JournalOp)
      report.journalGroups++
    }
    this.generation = plan.generation
    this.seqBase = plan.lastSeq
    this.warnIgnored(plan.ignored)

    await rm(join(this.dir, SNAPSHOT_TMP), { force: true })
    await rm(join(this.dir, MANIFEST_TMP), { force: true })
    for (const gen of plan.obsoleteJournals) await rm(join(this.dir, journalName(gen)), { force: true })
    const path = join(this.dir, journalName(this.generation))
    if (plan.cutAt !== undefined) {
      const lost = (plan.journalSize ?? plan.cutAt) - plan.cutAt
      report.truncatedBytes = lost
      this.logger?.warn(`embedded-mongo: ${journalName(this.generation)}: ${plan.tornProblem} at byte ${plan.cutAt} with nothing intact after it (a write cut short by a crash); discarding the last ${lost} bytes`)
      const torn = await open(path, 'r+')
      await torn.truncate(plan.cutAt)
      await torn.sync()
      await torn.close()
    }

    const fh = await open(path, 'a+', FILE_MODE)
    let { size } = await fh.stat()
    let header = plan.journalHeader
    if (!header && plan.journalGroups.length === 0 && plan.ignored.length === 0) {
      // New, or holding nothing yet: (re)started with a header, so that the MANIFEST can name it.
      const start = journalStart(this.generation, this.snapshotRecord?.id ?? null)
      await fh.truncate(0)
      await writeAll(fh, start.bytes)
      await fh.sync()
      await fsyncDir(this.dir)
      size = start.bytes.length
      header = start.header
    }
    this.fh = fh
    this.journalBytes = size
    this.journalId = header?.id ?? null
    const manifest = this.currentManifest()
    if (JSON.stringify(plan.manifest) !== JSON.stringify(manifest)) {
      if (plan.upgrade && !plan.fresh) this.logger?.info(`embedded-mongo: ${this.dir} was written by an earlier version: recording its contents in a MANIFEST`)
      await writeManifest(this.dir, manifest)
    }
    this.manifestGeneration = this.generation
    this.maybeCompact()
    return report
  }

  private warnIgnored(ignored: RecoveryPlan['ignored']): void {
    const name = journalName(this.generation)
    for (const { offset, detail } of ignored.slice(0, IGNORED_LOGGED)) {
      this.logger?.warn(`embedded-mongo: ${name}: ignored the record at byte ${offset}, not applied: ${detail} (an older record copied into the journal?)`)
    }
    if (ignored.length > IGNORED_LOGGED) this.logger?.warn(`embedded-mongo: ${name}: ${ignored.length - IGNORED_LOGGED} more such records ignored`)
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    try {
      await this.enqueue(() => this.flushPending())
    } finally {
      await this.chain
      await this.fh?.close().catch(() => undefined)
      this.fh = undefined
      await this.releaseLock()
    }
  }
}
