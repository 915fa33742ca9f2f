// Durable storage in one directory:
//   snapshot.bin      full state as of generation G (written to a temp file, fsynced, renamed)
//   journal-<N>.bin   operation groups appended after the snapshot of generation N, fsynced before acks
//   LOCK              pid of the owning process, so two servers never share a journal
// Recovery loads the snapshot of generation G, replays journals with N >= G in order, and cuts the
// last journal at the first torn or corrupt frame. Compaction writes snapshot G+1 from the in-memory
// state and starts journal G+1; since stored documents are never mutated in place, capturing the state
// is just collecting references, and serialising it can happen in the background.
import { chmod, open, readFile, readdir, rename, rm, mkdir, type FileHandle } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { setImmediate as yieldToEventLoop } from 'node:timers/promises'
import type { Catalog, JournalOp } from '../catalog.ts'
import type { Doc } from '../values.ts'
import { decodeFrames, encodeFrame } from './frames.ts'
import type { Storage } from './storage.ts'

const JOURNAL_MAGIC = Buffer.from('EMJRNL01')
const SNAPSHOT_MAGIC = Buffer.from('EMSNAP01')
const SNAPSHOT_FILE = 'snapshot.bin'
const SNAPSHOT_TMP = 'snapshot.tmp'
const LOCK_FILE = 'LOCK'
const SNAPSHOT_CHUNK_BYTES = 1024 * 1024
// The files hold password hashes and sealed credentials: only the owner may read them.
const FILE_MODE = 0o600
const DIR_MODE = 0o700

/** Another live process holds the data directory. */
export class DataDirectoryInUseError extends Error {
  constructor(readonly dir: string, readonly pid: number) {
    super(`data directory ${dir} is in use by process ${pid}`)
    this.name = 'DataDirectoryInUseError'
  }
}

export interface DiskStorageLogger {
  info(msg: string): void
  warn(msg: string): void
  error(msg: string): void
}

export interface DiskStorageOptions {
  dir: string
  /** Compact once the journal exceeds this many bytes (and is larger than the last snapshot). */
  compactJournalBytes?: number
  logger?: DiskStorageLogger
}

export interface RecoveryReport {
  generation: number
  snapshotOps: number
  journalGroups: number
  /** Bytes cut from the end of a journal because they were torn or corrupt. */
  truncatedBytes: number
}

const journalName = (gen: number): string => `journal-${gen}.bin`

// Directories this process holds. A LOCK naming our own pid that is not in here was left by an earlier
// process that had the same pid (common in containers, where the server may always be pid 1).
const openDirs = new Set<string>()

async function fsyncDir(dir: string): Promise<void> {
  // Makes renames and file creation durable on POSIX; not possible (nor needed) everywhere.
  let fh: FileHandle | undefined
  try {
    fh = await open(dir, 'r')
    await fh.sync()
  } catch {
    // best effort
  } finally {
    await fh?.close().catch(() => undefined)
  }
}

async function writeAll(fh: FileHandle, data: Buffer): Promise<void> {
  let off = 0
  while (off < data.length) {
    const { bytesWritten } = await fh.write(data, off, data.length - off)
    off += bytesWritten
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

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
  private failure: Error | undefined
  private closed = false
  private lockHeld = false
  loggedSeq = 0

  constructor(opts: DiskStorageOptions) {
    this.dir = resolve(opts.dir)
    this.compactJournalBytes = opts.compactJournalBytes ?? 32 * 1024 * 1024
    this.logger = opts.logger
  }

  log(ops: JournalOp[]): void {
    if (this.closed) throw new Error('storage is closed')
    if (this.failure) throw new Error(`journal unavailable after an earlier write failure: ${this.failure.message}`)
    this.pending.push(encodeFrame(ops as unknown as Doc[]))
    this.loggedSeq++
  }

  async waitDurable(seq: number): Promise<void> {
    while (this.durableSeq < seq) {
      if (this.failure) throw this.failure
      await this.scheduleFlush()
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
    if (this.pending.length === 0 || !this.fh) return
    const data = Buffer.concat(this.pending)
    const seq = this.loggedSeq
    this.pending = []
    try {
      await writeAll(this.fh, data)
      await this.fh.datasync()
    } catch (err) {
      // A partial append may have left a torn frame; writing more after it would hide acknowledged
      // records behind it at recovery, so the journal is closed for writing from here on.
      this.failure = err instanceof Error ? err : new Error(String(err))
      this.logger?.error(`embedded-mongo: journal write failed: ${this.failure.message}`)
      throw this.failure
    }
    this.journalBytes += data.length
    this.durableSeq = seq
    this.maybeCompact()
  }

  private maybeCompact(): void {
    if (this.compactionQueued || this.closed) return
    if (this.journalBytes < this.compactJournalBytes || this.journalBytes < this.snapshotBytes) return
    this.compactionQueued = true
    this.enqueue(() => this.compact())
      .catch((err: unknown) => this.logger?.error(`embedded-mongo: compaction failed: ${(err as Error).message}`))
      .finally(() => { this.compactionQueued = false })
  }

  /** Writes a snapshot now (tests and shutdown hooks); normally compaction is triggered by journal size. */
  compactNow(): Promise<void> {
    return this.enqueue(() => this.compact())
  }

  /** Writes a snapshot of the current state and starts a fresh journal. Runs inside the file queue. */
  private async compact(): Promise<void> {
    const catalog = this.catalog
    if (!catalog || !this.fh || this.failure) return
    // Capture: the ops reference immutable stored documents, and everything logged before this point is
    // in `pending` and goes to the old journal, so the snapshot equals old journal + old snapshot.
    const ops = [...catalog.snapshotOps()]
    const oldPending = this.pending
    const seq = this.loggedSeq
    this.pending = []
    const newGen = this.generation + 1

    if (oldPending.length > 0) {
      await writeAll(this.fh, Buffer.concat(oldPending))
      await this.fh.datasync()
      this.durableSeq = seq
    }

    const tmpPath = join(this.dir, SNAPSHOT_TMP)
    const snap = await open(tmpPath, 'w', FILE_MODE)
    let bytes = 0
    try {
      await writeAll(snap, SNAPSHOT_MAGIC)
      const header = encodeFrame([{ op: 'snapshotHeader', generation: newGen, createdAt: new Date() }])
      await writeAll(snap, header)
      bytes += SNAPSHOT_MAGIC.length + header.length
      let chunk: Doc[] = []
      let chunkBytes = 0
      for (const op of ops) {
        chunk.push(op as unknown as Doc)
        chunkBytes += op.op === 'put' ? 256 : 64 // rough; only decides frame boundaries
        if (chunkBytes >= SNAPSHOT_CHUNK_BYTES || chunk.length >= 2000) {
          const frame = encodeFrame(chunk)
          await writeAll(snap, frame)
          bytes += frame.length
          chunk = []
          chunkBytes = 0
          await yieldToEventLoop()
        }
      }
      if (chunk.length > 0) {
        const frame = encodeFrame(chunk)
        await writeAll(snap, frame)
        bytes += frame.length
      }
      const end = encodeFrame([{ op: 'snapshotEnd', count: ops.length }])
      await writeAll(snap, end)
      bytes += end.length
      await snap.sync()
    } finally {
      await snap.close()
    }
    await rename(tmpPath, join(this.dir, SNAPSHOT_FILE))
    await fsyncDir(this.dir)

    const next = await open(join(this.dir, journalName(newGen)), 'w', FILE_MODE)
    await writeAll(next, JOURNAL_MAGIC)
    await next.sync()
    await fsyncDir(this.dir)
    const old = this.fh
    this.fh = next
    const oldGen = this.generation
    this.generation = newGen
    this.journalBytes = JOURNAL_MAGIC.length
    this.snapshotBytes = bytes
    await old.close()
    await rm(join(this.dir, journalName(oldGen)), { force: true })
    this.logger?.info(`embedded-mongo: compacted storage into snapshot generation ${newGen} (${ops.length} records)`)
  }

  /** Takes the directory lock and loads snapshot + journals into the catalog. */
  async open(catalog: Catalog): Promise<RecoveryReport> {
    this.catalog = catalog
    await mkdir(this.dir, { recursive: true, mode: DIR_MODE })
    // A directory made earlier (or by hand) may be wider; a mount point we do not own cannot be changed.
    await chmod(this.dir, DIR_MODE).catch((err: Error) => this.logger?.warn(`embedded-mongo: could not restrict ${this.dir} to its owner: ${err.message}`))
    await this.acquireLock()
    try {
      return await this.recover(catalog)
    } catch (err) {
      await this.releaseLock()
      throw err
    }
  }

  private async acquireLock(): Promise<void> {
    const lockPath = join(this.dir, LOCK_FILE)
    if (openDirs.has(this.dir)) throw new Error(`embedded-mongo: data directory ${this.dir} is already open in this process`)
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fh = await open(lockPath, 'wx', FILE_MODE)
        openDirs.add(this.dir)
        this.lockHeld = true
        await fh.writeFile(String(process.pid))
        await fh.close()
        return
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      }
      if (openDirs.has(this.dir)) throw new Error(`embedded-mongo: data directory ${this.dir} is already open in this process`)
      const owner = Number((await readFile(lockPath, 'utf8').catch(() => '')).trim())
      if (Number.isInteger(owner) && owner > 0 && isAlive(owner) && owner !== process.pid) {
        throw new DataDirectoryInUseError(this.dir, owner)
      }
      // The owner is gone (crash or kill): the lock is stale.
      await rm(lockPath, { force: true })
    }
    throw new Error(`embedded-mongo: could not lock data directory ${this.dir}`)
  }

  private async releaseLock(): Promise<void> {
    if (!this.lockHeld) return
    this.lockHeld = false
    openDirs.delete(this.dir)
    await rm(join(this.dir, LOCK_FILE), { force: true })
  }

  private async recover(catalog: Catalog): Promise<RecoveryReport> {
    await rm(join(this.dir, SNAPSHOT_TMP), { force: true })
    const report: RecoveryReport = { generation: 0, snapshotOps: 0, journalGroups: 0, truncatedBytes: 0 }

    const snapshot = await readFile(join(this.dir, SNAPSHOT_FILE)).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined
      throw err
    })
    if (snapshot) {
      // The snapshot only ever appears through an atomic rename of a complete, fsynced file, so damage
      // here is media corruption: refuse to start rather than silently lose data.
      if (!snapshot.subarray(0, SNAPSHOT_MAGIC.length).equals(SNAPSHOT_MAGIC)) {
        throw new Error(`embedded-mongo: ${SNAPSHOT_FILE} is not a snapshot file`)
      }
      const decoded = decodeFrames(snapshot, SNAPSHOT_MAGIC.length)
      const header = decoded.groups[0]?.[0]
      const end = decoded.groups[decoded.groups.length - 1]?.[0]
      if (decoded.problem || header?.op !== 'snapshotHeader' || end?.op !== 'snapshotEnd') {
        throw new Error(`embedded-mongo: ${SNAPSHOT_FILE} is corrupt (${decoded.problem ?? 'missing header or end marker'})`)
      }
      report.generation = Number(header.generation)
      for (const group of decoded.groups.slice(1, -1)) {
        for (const op of group) {
          catalog.replay(op as unknown as JournalOp)
          report.snapshotOps++
        }
      }
      this.snapshotBytes = snapshot.length
    }
    this.generation = report.generation

    const journals = (await readdir(this.dir))
      .map((f) => /^journal-(\d+)\.bin$/.exec(f))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b)
    for (const gen of journals) {
      if (gen < report.generation) await rm(join(this.dir, journalName(gen)), { force: true })
    }
    const live = journals.filter((g) => g >= report.generation)
    for (const [i, gen] of live.entries()) {
      const path = join(this.dir, journalName(gen))
      const data = await readFile(path)
      const isLast = i === live.length - 1
      let validEnd: number
      if (data.length < JOURNAL_MAGIC.length || !data.subarray(0, JOURNAL_MAGIC.length).equals(JOURNAL_MAGIC)) {
        if (!isLast || data.length >= JOURNAL_MAGIC.length) {
          throw new Error(`embedded-mongo: ${journalName(gen)} has a bad header`)
        }
        validEnd = 0 // torn while being created: nothing in it was ever acknowledged
      } else {
        const decoded = decodeFrames(data, JOURNAL_MAGIC.length)
        for (const group of decoded.groups) {
          for (const op of group) catalog.replay(op as unknown as JournalOp)
          report.journalGroups++
        }
        validEnd = decoded.validEnd
        if (decoded.problem) {
          const lost = data.length - validEnd
          report.truncatedBytes += lost
          this.logger?.warn(`embedded-mongo: ${journalName(gen)}: ${decoded.problem} at byte ${validEnd}; discarding the last ${lost} bytes`)
        }
      }
      if (validEnd < data.length) {
        const fh = await open(path, 'r+')
        await fh.truncate(validEnd)
        await fh.sync()
        await fh.close()
      }
      this.generation = gen
    }

    const path = join(this.dir, journalName(this.generation))
    const fh = await open(path, 'a+', FILE_MODE)
    const { size } = await fh.stat()
    if (size === 0) {
      await writeAll(fh, JOURNAL_MAGIC)
      await fh.sync()
      await fsyncDir(this.dir)
    }
    this.fh = fh
    this.journalBytes = Math.max(size, JOURNAL_MAGIC.length)
    this.maybeCompact()
    return report
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
