// Short of space for a snapshot, but not for the journal: compaction fails, is logged once and backs off
// (journal growth or time), writes keep succeeding, and only a journal append that fails with ENOSPC
// refuses a write (OutOfDiskSpace; the service answers 507 {error}). The disk is a size-limited stub at
// the storage's write seams (journal appends and snapshot writes); everything else is the real code. The
// last case uses a real small tmpfs instead, where this machine lets the test mount one.
import { execFile } from 'node:child_process'
import type { FileHandle } from 'node:fs/promises'
import { mkdir, mkdtemp, readdir, rm, rmdir, stat, statfs, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t, { type Test } from 'tap'
import { MongoClient } from 'mongodb'
import { Catalog } from '../../src/embedded-mongo/catalog.ts'
import { startEmbeddedMongoServer } from '../../src/embedded-mongo/server.ts'
import { DiskStorage, writeAt, type JournalWriter, type SnapshotWriter } from '../../src/embedded-mongo/storage/disk-storage.ts'
import { writeAll } from '../../src/embedded-mongo/storage/files.ts'
import { encodeKey } from '../../src/embedded-mongo/values.ts'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'

function enospc(): NodeJS.ErrnoException {
  return Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' })
}

/**
 * A disk with `free` bytes left (unlimited until set). Journal appends use space; a snapshot being written
 * needs all of its bytes at once (a failed one is deleted, giving its space back). A write that does not
 * fit writes what fits and fails with ENOSPC, as a filling disk does.
 */
function smallDisk() {
  const inSnapshot = new WeakMap<FileHandle, number>()
  const disk = {
    free: Infinity,
    /** Snapshot files started (one per compaction attempt). */
    snapshotsStarted: 0,
    journalWriter: (async (fh, data, position) => {
      if (data.length > disk.free) {
        await fh.write(data, 0, disk.free, position)
        throw enospc()
      }
      await writeAt(fh, data, position)
      disk.free -= data.length
    }) as JournalWriter,
    snapshotWriter: (async (fh, data) => {
      if (!inSnapshot.has(fh)) disk.snapshotsStarted++
      const used = inSnapshot.get(fh) ?? 0
      if (used + data.length > disk.free) {
        await fh.write(data, 0, Math.max(0, disk.free - used))
        throw enospc()
      }
      await writeAll(fh, data)
      inSnapshot.set(fh, used + data.length)
    }) as SnapshotWriter,
  }
  return disk
}

async function tempDir(t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'embedded-mongo-space-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

const COMPACT_AT = 4096
const pad = (i: number): string => `${i}`.padEnd(1000, '.')

t.test('no room for a snapshot: compaction is tried a bounded number of times, logged once, and writes go on until the journal is full', async (t) => {
  const dir = await tempDir(t)
  const disk = smallDisk()
  const errors: string[] = []
  const server = await startEmbeddedMongoServer({
    storage: 'disk', dataDir: dir, compactJournalBytes: COMPACT_AT, journalWriter: disk.journalWriter, snapshotWriter: disk.snapshotWriter,
    logger: { info: () => undefined, warn: () => undefined, error: (m) => errors.push(m) },
  })
  const client = await MongoClient.connect(server.uri, { serverSelectionTimeoutMS: 5000 })
  t.teardown(async () => { await client.close(); await server.close() })
  const docs = client.db('app').collection<{ _id: number; pad: string; n?: number }>('docs')
  await docs.insertMany(Array.from({ length: 40 }, (_, i) => ({ _id: i, pad: pad(i) })))
  await (server.storage as DiskStorage).compactNow()
  const snapshotBytes = (await stat(join(dir, 'snapshot.bin'))).size
  const started = disk.snapshotsStarted

  // Room for the journal to grow past the snapshot's size (when compaction starts) and 24 KiB more:
  // from then on a snapshot (~snapshotBytes) never fits, while ~20 more writes of ~1 KiB do.
  disk.free = snapshotBytes + 24 * 1024
  let acknowledged = 0
  let refused: unknown
  for (let i = 0; i < 500 && !refused; i++) {
    try {
      await docs.updateOne({ _id: i % 40 }, { $set: { pad: pad(1000 + i), n: i } })
      acknowledged++
    } catch (err) {
      refused = err
    }
  }
  const attempts = disk.snapshotsStarted - started
  t.ok(acknowledged > snapshotBytes / 1100, `${acknowledged} updates acknowledged: every write the journal had room for`)
  t.ok(attempts >= 1, 'compaction was tried')
  // Backoff: at the snapshot's size, then after 4 KiB and 8 KiB more; the next needs 16 KiB beyond that.
  t.ok(attempts <= 3, `compaction tried ${attempts} times over ${acknowledged} writes, not once per write`)
  const compactionErrors = errors.filter((e) => /compaction failed/.test(e))
  t.equal(compactionErrors.length, 1, 'logged once')
  t.match(compactionErrors[0], /^embedded-mongo: compaction failed \(ENOSPC\): the disk holding .* has less free space than a snapshot needs \(the last one was \d+ bytes\)\. Writes go on in the journal/)
  t.match(refused, { code: 14031, codeName: 'OutOfDiskSpace' }, 'refused only once the journal itself could not grow')
  t.match(errors.join('\n'), /journal write failed \(ENOSPC\)/)
  t.same(await docs.findOne({ _id: (acknowledged - 1) % 40 }, { projection: { _id: 0, n: 1 } }), { n: acknowledged - 1 }, 'the last acknowledged write is there')
})

t.test('after a failed compaction, the next attempt also comes after a delay, without the journal growing much; success is logged', async (t) => {
  const dir = await tempDir(t)
  const disk = smallDisk()
  disk.free = 0 // no snapshot fits; the journal (plain writes here) always does
  let clock = 0
  const logs: string[] = []
  const log = (level: string) => (m: string): void => { logs.push(`${level} ${m}`) }
  const storage = new DiskStorage({
    dir, compactJournalBytes: COMPACT_AT, compactionRetryMs: 60_000, now: () => clock, snapshotWriter: disk.snapshotWriter,
    logger: { info: log('info'), warn: log('warn'), error: log('error') },
  })
  const catalog = new Catalog(storage)
  await storage.open(catalog)
  t.teardown(() => storage.close())
  const coll = catalog.ensureCollection('app', 'c').coll
  let n = 0
  // A compaction a write starts is queued behind that write's append, and the next write's append behind
  // it: so once a write is durable, any compaction started before it has finished.
  const write = async (): Promise<void> => {
    n++
    catalog.write(coll, [{ idKey: encodeKey(n), after: { _id: n, pad: 'x'.repeat(100) } }])
    await storage.waitDurable(storage.loggedSeq)
  }
  while (storage.compactions.failures === 0 && n < 200) await write()
  await write()
  t.equal(storage.compactions.attempts, 1, 'the journal passed its threshold: one attempt, failed')

  for (let i = 0; i < 5; i++) await write()
  t.equal(storage.compactions.attempts, 1, 'not tried again on the next writes')

  clock += 60_001
  await write()
  await write()
  t.equal(storage.compactions.attempts, 2, 'tried again once the delay passed')
  t.equal(storage.compactions.failures, 2)
  t.equal(logs.filter((l) => /compaction failed/.test(l)).length, 1, 'the second failure is not logged again')

  disk.free = Infinity
  clock += 60_001
  await write()
  await write()
  t.equal(storage.compactions.attempts, 3)
  t.equal(storage.compactions.failures, 2, 'succeeded once there was room')
  t.match(logs.filter((l) => /compaction (failed|succeeded)/.test(l)), [
    /^error embedded-mongo: compaction failed \(ENOSPC\): the disk holding /,
    /^info embedded-mongo: compaction succeeded after 2 failed attempt\(s\)$/,
  ])
  t.ok(logs.some((l) => /compacted storage into snapshot generation 1/.test(l)))
})

t.test('through the service: writes succeed while only compaction fails; a journal append with ENOSPC is 507 {error}', async (t) => {
  const dir = await tempDir(t)
  const disk = smallDisk()
  disk.free = 0 // no snapshot fits from the start
  const journalFull = { on: false }
  let appends = 0
  const journalWriter: JournalWriter = async (fh, data, position) => {
    appends++
    if (journalFull.on) {
      await fh.write(data, 0, Math.ceil(data.length / 2), position)
      throw enospc()
    }
    await writeAt(fh, data, position)
  }
  const errors: string[] = []
  const server = await startEmbeddedMongoServer({
    storage: 'disk', dataDir: dir, compactJournalBytes: COMPACT_AT, journalWriter, snapshotWriter: disk.snapshotWriter,
    logger: { info: () => undefined, warn: () => undefined, error: (m) => errors.push(m) },
  })
  const client = await MongoClient.connect(server.uri, { serverSelectionTimeoutMS: 5000 })
  const database = { uri: server.uri, dbName: 'app', client, db: client.db('app'), close: async () => { await client.close(); await server.close() } }
  const { app, logs } = await startTestApp(t, {}, { database })
  t.teardown(database.close)
  const alice = await registerUser(app)
  let id = ''
  for (let i = 0; i < 20; i++) {
    const created = await app.inject({ method: 'POST', url: '/v1/api/workflows', headers: alice.headers, payload: { name: `wf-${i}`, description: 'd'.repeat(500) } })
    t.equal(created.statusCode, 201, `workflow ${i} created while compaction cannot run`)
    id = created.json().id as string
  }
  const attempts = (server.storage as DiskStorage).compactions.attempts
  // Backoff: retries once the journal has grown by 4, 8, 16, … KiB more than at the last failure.
  const journalBytes = (await stat(join(dir, 'journal-0.bin'))).size
  const bound = 1 + Math.ceil(Math.log2(journalBytes / COMPACT_AT + 1))
  t.ok(attempts >= 1 && attempts <= bound, `compaction tried ${attempts} times (at most ${bound}) over ${appends} journal appends, ${journalBytes} bytes`)
  t.equal(errors.filter((e) => /compaction failed/.test(e)).length, 1, 'one compaction error in the log')

  journalFull.on = true
  const refused = await app.inject({ method: 'PUT', url: `/v1/api/workflows/${id}`, headers: alice.headers, payload: { description: 'refused' } })
  t.equal(refused.statusCode, 507)
  t.same(refused.json(), { error: "the database's disk is full" })
  t.match(logs.join(''), /the database refused a write/)
  journalFull.on = false
  const read = await app.inject({ url: `/v1/api/workflows/${id}`, headers: alice.headers })
  t.equal(read.json().description, 'd'.repeat(500), 'the refused save is not visible')
})

const run = promisify(execFile)

/** A small tmpfs (real ENOSPC, no stub), or why there cannot be one here. */
async function smallFilesystem(bytes: number): Promise<string | { mnt: string; unmount: () => Promise<void> }> {
  if (process.platform !== 'linux') return 'mounting a tmpfs needs Linux'
  const mnt = await mkdtemp(join(tmpdir(), 'embedded-mongo-space-tmpfs-'))
  try {
    await run('mount', ['-t', 'tmpfs', '-o', `size=${bytes},mode=0700`, 'tmpfs', mnt])
  } catch (err) {
    await rmdir(mnt)
    return `cannot mount a tmpfs here (${String((err as { stderr?: string }).stderr ?? (err as Error).message).trim()}); the stubbed disk above covers the logic`
  }
  return { mnt, unmount: async () => { await run('umount', [mnt]); await rmdir(mnt) } }
}

const tmpfs = await smallFilesystem(2 * 1024 * 1024)
if (typeof tmpfs !== 'string') t.teardown(tmpfs.unmount)

t.test('a real filesystem with room for the journal but not for a snapshot', { skip: typeof tmpfs === 'string' ? tmpfs : false }, async (t) => {
  if (typeof tmpfs === 'string') return
  const dir = join(tmpfs.mnt, 'data')
  await mkdir(dir)
  const errors: string[] = []
  const server = await startEmbeddedMongoServer({
    storage: 'disk', dataDir: dir, compactJournalBytes: COMPACT_AT,
    logger: { info: () => undefined, warn: () => undefined, error: (m) => errors.push(m) },
  })
  const client = await MongoClient.connect(server.uri, { serverSelectionTimeoutMS: 5000 })
  t.teardown(async () => { await client.close(); await server.close() })
  const docs = client.db('app').collection<{ _id: number; pad: string; n?: number }>('docs')
  await docs.insertMany(Array.from({ length: 100 }, (_, i) => ({ _id: i, pad: pad(i) })))
  await (server.storage as DiskStorage).compactNow()
  const snapshotBytes = (await stat(join(dir, 'snapshot.bin'))).size
  // Leave the journal room to pass the snapshot's size, then 48 KiB: no snapshot fits after that.
  const { bavail, bsize } = await statfs(tmpfs.mnt)
  await writeFile(join(tmpfs.mnt, 'filler'), Buffer.alloc(Number(bavail) * Number(bsize) - (snapshotBytes + 48 * 1024)))
  let acknowledged = 0
  let refused: unknown
  for (let i = 0; i < 1000 && !refused; i++) {
    try {
      await docs.updateOne({ _id: i % 100 }, { $set: { pad: pad(1000 + i), n: i } })
      acknowledged++
    } catch (err) {
      refused = err
    }
  }
  const compactionErrors = errors.filter((e) => /compaction failed/.test(e))
  t.equal(compactionErrors.length, 1, `one compaction error logged over ${acknowledged} writes`)
  t.match(compactionErrors[0], /compaction failed \(ENOSPC\)/)
  const attempts = (server.storage as DiskStorage).compactions.attempts
  // The journal being written: a compaction that found room before the filler did starts a newer one.
  const journal = (await readdir(dir)).filter((n) => /^journal-\d+\.bin$/.test(n)).sort((a, b) => Number(a.match(/\d+/)![0]) - Number(b.match(/\d+/)![0])).at(-1)!
  const bound = 1 + Math.ceil(Math.log2((await stat(join(dir, journal))).size / COMPACT_AT + 1))
  t.ok(attempts >= 1 && attempts <= bound, `compaction tried ${attempts} times (at most ${bound})`)
  t.match(refused, { code: 14031 }, 'a write is refused once the journal cannot grow')
  t.ok(acknowledged > snapshotBytes / 1100, `${acknowledged} writes acknowledged before that`)
})
