// Embedded-server-only: a write the journal cannot take (a full disk) is refused with MongoDB's
// OutOfDiskSpace error and undone, reads never see it, the journal stays clean, and writing resumes by
// itself once space returns. Most cases inject the failure through the journal writer seam; the last
// one fills a real (tmpfs) filesystem where this machine lets the test mount one.
import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, readdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t, { type Test } from 'tap'
import { MongoClient, MongoServerError } from 'mongodb'
import { Catalog } from '../../src/embedded-mongo/catalog.ts'
import { startEmbeddedMongoServer, type EmbeddedMongoServer } from '../../src/embedded-mongo/server.ts'
import { DiskStorage, writeAt, type JournalWriter } from '../../src/embedded-mongo/storage/disk-storage.ts'
import { decodeFrames } from '../../src/embedded-mongo/storage/frames.ts'
import { encodeKey } from '../../src/embedded-mongo/values.ts'

const run = promisify(execFile)

function enospc(): NodeJS.ErrnoException {
  return Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' })
}

/** A journal writer that, while `full`, writes half of what it is given (as a filling disk does) and fails. */
function fillingDisk(error: () => NodeJS.ErrnoException = enospc) {
  const disk = {
    full: false,
    refused: 0,
    writer: (async (fh, data, position) => {
      if (!disk.full) return writeAt(fh, data, position)
      disk.refused++
      await fh.write(data, 0, Math.ceil(data.length / 2), position)
      throw error()
    }) as JournalWriter,
  }
  return disk
}

async function tempDir(t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'embedded-mongo-full-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

interface Opened { server: EmbeddedMongoServer; client: MongoClient; errors: string[]; close: () => Promise<void> }

async function open(dataDir: string, journalWriter?: JournalWriter): Promise<Opened> {
  const errors: string[] = []
  const server = await startEmbeddedMongoServer({
    storage: 'disk',
    dataDir,
    journalWriter,
    logger: { info: () => undefined, warn: () => undefined, error: (m) => errors.push(m) },
  })
  const client = await MongoClient.connect(server.uri, { serverSelectionTimeoutMS: 5000 })
  let closed = false
  const close = async () => {
    if (closed) return
    closed = true
    await client.close()
    await server.close()
  }
  return { server, client, errors, close }
}

async function journalProblems(dir: string): Promise<Array<{ file: string; problem?: string; validEnd: number; length: number }>> {
  const files = (await readdir(dir)).filter((f) => /^journal-\d+\.bin$/.test(f))
  const out = []
  for (const file of files) {
    const data = await readFile(join(dir, file))
    const decoded = decodeFrames(data, 8)
    out.push({ file, problem: decoded.problem, validEnd: decoded.validEnd, length: data.length })
  }
  return out
}

const outOfDiskSpace = { name: 'MongoServerError', code: 14031, codeName: 'OutOfDiskSpace', errmsg: "the database's disk is full" }

t.test('refused insert, update and delete are undone, unique indexes included, and writing resumes', async (t) => {
  const dir = await tempDir(t)
  const disk = fillingDisk()
  const { client, close, errors } = await open(dir, disk.writer)
  t.teardown(close)
  const users = client.db('app').collection<{ _id: string; email: string; n?: number }>('users')
  await users.createIndex({ email: 1 }, { unique: true })
  await users.insertMany([{ _id: 'a', email: 'a@x', n: 1 }, { _id: 'b', email: 'b@x', n: 1 }])

  disk.full = true
  await t.rejects(users.insertOne({ _id: 'c', email: 'c@x' }), outOfDiskSpace)
  await t.rejects(users.updateOne({ _id: 'a' }, { $set: { email: 'z@x' }, $inc: { n: 1 } }), outOfDiskSpace)
  await t.rejects(users.deleteOne({ _id: 'b' }), outOfDiskSpace)
  await t.rejects(users.findOneAndUpdate({ _id: 'b' }, { $set: { email: 'y@x' } }), outOfDiskSpace)
  await t.rejects(users.insertMany([{ _id: 'd', email: 'd@x' }, { _id: 'e', email: 'e@x' }]), { code: 14031 })
  t.equal(disk.refused, 5, 'each write reached the disk and was refused there')

  // Reads work throughout and show only what was acknowledged, through the _id map and the index.
  t.same(await users.find().sort({ _id: 1 }).toArray(), [{ _id: 'a', email: 'a@x', n: 1 }, { _id: 'b', email: 'b@x', n: 1 }])
  t.same(await users.findOne({ email: 'a@x' }), { _id: 'a', email: 'a@x', n: 1 })
  t.equal(await users.findOne({ email: 'z@x' }), null)
  t.equal(await users.findOne({ email: 'c@x' }), null)
  t.equal(await users.countDocuments(), 2)
  t.match(errors.join('\n'), /journal write failed \(ENOSPC\)/)

  disk.full = false
  // The unique index holds exactly the acknowledged keys: the refused ones are free, the old ones taken.
  await users.insertOne({ _id: 'c2', email: 'c@x' })
  await users.insertOne({ _id: 'z2', email: 'z@x' })
  await t.rejects(users.insertOne({ _id: 'a2', email: 'a@x' }), { code: 11000 })
  await users.updateOne({ _id: 'b' }, { $set: { n: 2 } })
  t.same(await users.find().sort({ _id: 1 }).toArray(), [
    { _id: 'a', email: 'a@x', n: 1 }, { _id: 'b', email: 'b@x', n: 2 }, { _id: 'c2', email: 'c@x' }, { _id: 'z2', email: 'z@x' },
  ])

  await close()
  t.same((await journalProblems(dir)).map((j) => j.problem), [undefined], 'no partial frame is left in the journal')
  const again = await open(dir)
  t.teardown(again.close)
  t.equal(again.server.recovery?.truncatedBytes, 0)
  const reopened = again.client.db('app').collection<{ _id: string; email: string; n?: number }>('users')
  t.same(await reopened.find().sort({ _id: 1 }).toArray(), [
    { _id: 'a', email: 'a@x', n: 1 }, { _id: 'b', email: 'b@x', n: 2 }, { _id: 'c2', email: 'c@x' }, { _id: 'z2', email: 'z@x' },
  ], 'after a restart: every acknowledged write, none of the refused ones')
  await t.rejects(reopened.insertOne({ _id: 'b3', email: 'b@x' }), { code: 11000 })
})

t.test('refused namespace and index changes are undone', async (t) => {
  const dir = await tempDir(t)
  const disk = fillingDisk()
  const { client, close } = await open(dir, disk.writer)
  t.teardown(close)
  const db = client.db('app')
  await db.collection('keep').insertOne({ _id: 1 as never, k: 'v' })
  await db.collection('keep').createIndex({ k: 1 }, { unique: true })
  await db.collection('other').insertOne({ _id: 1 as never })

  disk.full = true
  await t.rejects(db.collection('keep').drop(), { code: 14031 })
  await t.rejects(db.collection('keep').dropIndex('k_1'), { code: 14031 })
  await t.rejects(db.collection('keep').createIndex({ other: 1 }), { code: 14031 })
  await t.rejects(db.collection('keep').rename('renamed'), { code: 14031 })
  await t.rejects(db.collection('other').rename('keep', { dropTarget: true }), { code: 14031 })
  await t.rejects(db.createCollection('fresh'), { code: 14031 })
  await t.rejects(db.collection('implicit').insertOne({ x: 1 }), { code: 14031 })
  await t.rejects(db.dropDatabase(), { code: 14031 })

  const names = (await db.listCollections().toArray()).map((c) => c.name).sort()
  t.same(names, ['keep', 'other'])
  t.same((await db.collection('keep').indexes()).map((i) => i.name), ['_id_', 'k_1'], 'index list and its order unchanged')
  t.same(await db.collection('keep').find().toArray(), [{ _id: 1, k: 'v' }])
  t.same(await db.collection('other').find().toArray(), [{ _id: 1 }])

  disk.full = false
  await t.rejects(db.collection('keep').insertOne({ _id: 2 as never, k: 'v' }), { code: 11000 }, 'the unique index still enforces')
  await db.collection('keep').rename('renamed')
  t.same(await db.collection('renamed').find().toArray(), [{ _id: 1, k: 'v' }])
})

t.test('groups logged while a failing append is in flight are undone too, newest first', async (t) => {
  const dir = await tempDir(t)
  let release!: () => void
  const gate = new Promise<void>((resolve) => { release = resolve })
  let fail = false
  const writer: JournalWriter = async (fh, data, position) => {
    if (!fail) return writeAt(fh, data, position)
    await gate
    await fh.write(data, 0, 3, position)
    throw enospc()
  }
  const storage = new DiskStorage({ dir, journalWriter: writer })
  const catalog = new Catalog(storage)
  await storage.open(catalog)
  t.teardown(() => storage.close())
  const coll = catalog.ensureCollection('app', 'c').coll
  catalog.createIndex(coll, { v: 2, key: { u: 1 }, name: 'u_1', unique: true })
  catalog.write(coll, [{ idKey: encodeKey(1), after: { _id: 1, u: 'one' } }])
  await storage.waitDurable(storage.loggedSeq)

  fail = true
  catalog.write(coll, [{ idKey: encodeKey(2), after: { _id: 2, u: 'two' } }])
  const first = storage.waitDurable(storage.loggedSeq) // starts the append, which waits at the gate
  // Built on the first one while its append runs: must not outlive it.
  catalog.write(coll, [{ idKey: encodeKey(2), before: { _id: 2, u: 'two' }, after: { _id: 2, u: 'two', more: true } }])
  catalog.write(coll, [{ idKey: encodeKey(1), before: { _id: 1, u: 'one' } }])
  const second = storage.waitDurable(storage.loggedSeq)
  t.equal(coll.docs.size, 1, 'visible while in flight, as with readConcern local')
  release()
  await t.rejects(first, { code: 14031, message: "the database's disk is full" })
  await t.rejects(second, { code: 14031 })
  t.same([...coll.docs.values()], [{ _id: 1, u: 'one' }])
  const index = coll.indexes.get('u_1')!
  t.same([...index.entries.keys()], [encodeKey('one')], 'index entries are those of the acknowledged document only')

  fail = false
  catalog.write(coll, [{ idKey: encodeKey(3), after: { _id: 3, u: 'two' } }])
  await storage.waitDurable(storage.loggedSeq)
  await storage.close()
  const problems = await journalProblems(dir)
  t.same(problems.map((p) => p.problem), [undefined])

  const storage2 = new DiskStorage({ dir })
  const catalog2 = new Catalog(storage2)
  await storage2.open(catalog2)
  t.teardown(() => storage2.close())
  t.same([...catalog2.getCollection('app', 'c')!.docs.values()], [{ _id: 1, u: 'one' }, { _id: 3, u: 'two' }])
})

t.test('other I/O failures are refused with FileStreamFailed and a plain message', async (t) => {
  const dir = await tempDir(t)
  const disk = fillingDisk(() => Object.assign(new Error(`EIO: i/o error, write '${dir}/journal-0.bin'`), { code: 'EIO' }))
  const { client, close } = await open(dir, disk.writer)
  t.teardown(close)
  const coll = client.db('app').collection('c')
  disk.full = true
  const err = await coll.insertOne({ a: 1 }).catch((e: unknown) => e)
  t.ok(err instanceof MongoServerError)
  t.match(err, { code: 39, codeName: 'FileStreamFailed', errmsg: 'the database could not write to its disk (EIO)' })
  t.notMatch((err as Error).message, dir, 'no path from the operating system reaches the client')
  disk.full = false
  await coll.insertOne({ a: 2 })
  t.same(await coll.find({}, { projection: { _id: 0 } }).toArray(), [{ a: 2 }])
})

/** Mounts a small tmpfs, or answers why it cannot (not Linux, or no permission to mount). */
async function smallFilesystem(bytes: number): Promise<{ mnt: string; unmount: () => Promise<void> } | string> {
  if (process.platform !== 'linux') return 'mounting a small tmpfs needs Linux'
  const mnt = await mkdtemp(join(tmpdir(), 'embedded-mongo-tmpfs-'))
  try {
    await run('mount', ['-t', 'tmpfs', '-o', `size=${bytes},mode=0700`, 'tmpfs', mnt])
  } catch (err) {
    await rmdir(mnt)
    return `cannot mount a tmpfs here (${String((err as { stderr?: string }).stderr ?? (err as Error).message).trim()}); the injected failures above cover the logic`
  }
  return { mnt, unmount: async () => { await run('umount', [mnt]); await rmdir(mnt) } }
}

const fs = await smallFilesystem(1024 * 1024)
if (typeof fs !== 'string') t.teardown(fs.unmount)

t.test('a real full filesystem: refused, undone, and working again once space is freed', { skip: typeof fs === 'string' ? fs : false }, async (t) => {
  if (typeof fs === 'string') return
  const { mnt } = fs
  const dir = join(mnt, 'data')
  await mkdir(dir)
  const filler = join(mnt, 'filler')
  await writeFile(filler, Buffer.alloc(256 * 1024))
  const { client, close, errors } = await open(dir)
  t.teardown(close)
  const coll = client.db('app').collection<{ _id: number; pad: string }>('c')
  await coll.createIndex({ pad: 1 })
  const pad = (i: number) => `${i}`.padEnd(16 * 1024, 'x')
  let acknowledged = 0
  let refused: unknown
  for (let i = 0; i < 200 && !refused; i++) {
    try {
      await coll.insertOne({ _id: i, pad: pad(i) })
      acknowledged++
    } catch (err) {
      refused = err
    }
  }
  t.ok(acknowledged > 10, `${acknowledged} inserts fit before the disk filled`)
  t.match(refused, outOfDiskSpace)
  t.equal(await coll.countDocuments(), acknowledged, 'the refused insert is not visible')
  t.equal(await coll.findOne({ _id: acknowledged }), null)
  t.equal(await coll.findOne({ pad: pad(acknowledged) }), null, 'nor in the index')
  await t.rejects(coll.updateMany({}, { $set: { pad: 'y'.repeat(40 * 1024) } }), { code: 14031 })
  t.equal(await coll.countDocuments({ pad: pad(0) }), 1, 'the refused update left the documents as they were')
  t.match(errors.join('\n'), /ENOSPC/)

  await rm(filler)
  await coll.insertOne({ _id: 1000, pad: 'after' })
  await close()
  t.same((await journalProblems(dir)).map((j) => j.problem), [undefined], 'no partial frame left in the journal')
  const again = await open(dir)
  t.teardown(again.close)
  const reopened = again.client.db('app').collection<{ _id: number; pad: string }>('c')
  t.equal(await reopened.countDocuments(), acknowledged + 1)
  t.equal(await reopened.findOne({ _id: acknowledged }), null)
  t.ok(await reopened.findOne({ _id: 1000 }))
})
