// Embedded-server-only: disk storage survives restarts, torn or corrupt journal tails, a killed
// process, and compaction.
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { appendFile, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import t, { type Test } from 'tap'
import { Decimal128, MongoClient, ObjectId } from 'mongodb'
import { startEmbeddedMongoServer, type EmbeddedMongoServer } from '../../src/embedded-mongo/server.ts'
import { DiskStorage } from '../../src/embedded-mongo/storage/disk-storage.ts'

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined }

async function tempDir(t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'embedded-mongo-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

async function open(dataDir: string, extra: { compactJournalBytes?: number; warnings?: string[] } = {}): Promise<{ server: EmbeddedMongoServer; client: MongoClient; close: () => Promise<void> }> {
  const warnings = extra.warnings
  const server = await startEmbeddedMongoServer({
    storage: 'disk',
    dataDir,
    compactJournalBytes: extra.compactJournalBytes,
    logger: { ...quiet, warn: (m) => warnings?.push(m) },
  })
  const client = await MongoClient.connect(server.uri, { serverSelectionTimeoutMS: 5000 })
  return { server, client, close: async () => { await client.close(); await server.close() } }
}

async function journalPath(dir: string): Promise<string> {
  const files = (await readdir(dir)).filter((f) => /^journal-\d+\.bin$/.test(f))
  if (files.length !== 1) throw new Error(`expected one journal, found ${files.join(', ')}`)
  return join(dir, files[0])
}

t.test('documents, indexes and namespace changes survive a restart', async (t) => {
  const dir = await tempDir(t)
  const oid = new ObjectId()
  const when = new Date('2020-02-02T02:02:02.002Z')
  {
    const { client, close } = await open(dir)
    const db = client.db('app')
    const users = db.collection('users')
    await users.createIndex({ email: 1 }, { unique: true })
    await users.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 3600 })
    await users.insertMany([
      { _id: oid, email: 'a@x', when, dec: Decimal128.fromString('1.50'), nested: { list: [1, 'b', { c: true }] } },
      { _id: 'two' as never, email: 'b@x', n: 1 },
      { _id: 'three' as never, email: 'c@x' },
    ])
    await users.updateOne({ _id: 'two' as never }, { $inc: { n: 41 }, $push: { log: 'x' } as never })
    await users.deleteOne({ _id: 'three' as never })
    await db.collection('temp').insertOne({ gone: true })
    await db.collection('temp').drop()
    await db.collection('old_name').insertOne({ moved: true })
    await db.collection('old_name').rename('new_name')
    await client.db('scratch').collection('x').insertOne({ a: 1 })
    await client.db('scratch').dropDatabase()
    await db.collection('idx_dropped').createIndex({ q: 1 })
    await db.collection('idx_dropped').dropIndex('q_1')
    await close()
  }
  {
    const { client, close } = await open(dir)
    t.teardown(close)
    const db = client.db('app')
    const users = db.collection('users')
    const first = await users.findOne({ _id: oid })
    t.ok(first?.when instanceof Date && first.when.getTime() === when.getTime())
    t.equal(first?.dec.toString(), '1.50')
    t.same(first?.nested, { list: [1, 'b', { c: true }] })
    t.same(await users.findOne({ _id: 'two' as never }), { _id: 'two', email: 'b@x', n: 42, log: ['x'] })
    t.equal(await users.findOne({ _id: 'three' as never }), null)
    const indexes = await users.indexes()
    t.same(indexes.map((i) => i.name).sort(), ['_id_', 'email_1', 'expiresAt_1'])
    t.equal(indexes.find((i) => i.name === 'expiresAt_1')?.expireAfterSeconds, 3600)
    await t.rejects(users.insertOne({ email: 'a@x' }), { code: 11000 }, 'the unique index is enforced after restart')
    const names = (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name).sort()
    t.same(names, ['idx_dropped', 'new_name', 'users'])
    t.same((await db.collection('idx_dropped').indexes()).map((i) => i.name), ['_id_'])
    const dbs = (await client.db('admin').admin().listDatabases({ nameOnly: true })).databases.map((d) => d.name)
    t.notOk(dbs.includes('scratch'))
  }
})

const tornTails: Array<[string, (good: Buffer) => Buffer]> = [
  ['a frame header cut short', () => Buffer.from([0x20, 0x00, 0x00])],
  ['a payload shorter than its length', () => {
    const b = Buffer.alloc(18)
    b.writeUInt32LE(1000, 0)
    return b
  }],
  ['a complete frame with a bad checksum', (good) => {
    const copy = Buffer.from(good)
    copy[copy.length - 3] ^= 0xff
    return copy
  }],
  ['zero-filled space after a crash', () => Buffer.alloc(64)],
]

for (const [name, makeTail] of tornTails) {
  t.test(`recovery stops at ${name} and keeps the earlier data`, async (t) => {
    const dir = await tempDir(t)
    {
      const { client, close } = await open(dir)
      const coll = client.db('app').collection('items')
      for (let i = 0; i < 5; i++) await coll.insertOne({ _id: i as never, v: `value-${i}` })
      await close()
    }
    const path = await journalPath(dir)
    const before = await readFile(path)
    // The last good frame is re-used for the bad-checksum case: same length, one flipped byte.
    const tail = makeTail(before.subarray(lastFrameOffset(before)))
    await appendFile(path, tail)

    const warnings: string[] = []
    const { server, client, close } = await open(dir, { warnings })
    t.teardown(close)
    t.equal(server.recovery?.truncatedBytes, tail.length, 'exactly the bad tail is discarded')
    t.ok(warnings.some((w) => /discarding/.test(w)), 'the truncation is logged')
    t.equal((await stat(path)).size, before.length, 'the journal is cut back to the last good frame')
    const coll = client.db('app').collection('items')
    t.same((await coll.find().sort({ _id: 1 }).toArray()).map((d) => d.v), [0, 1, 2, 3, 4].map((i) => `value-${i}`))
    await coll.insertOne({ _id: 5 as never, v: 'after recovery' })
    await close()
    const again = await open(dir)
    t.teardown(again.close)
    t.equal(await again.client.db('app').collection('items').countDocuments(), 6, 'writes after recovery are durable too')
    t.equal(again.server.recovery?.truncatedBytes, 0)
  })
}

// Frames are [u32 length][u32 crc][payload] after an 8-byte magic; walk them to find the last one.
function lastFrameOffset(journal: Buffer): number {
  let pos = 8
  let last = pos
  while (pos < journal.length) {
    last = pos
    pos += 8 + journal.readUInt32LE(pos)
  }
  return last
}

t.test('corruption in the middle of the journal refuses to start and changes nothing', async (t) => {
  const dir = await tempDir(t)
  {
    const { client, close } = await open(dir)
    const coll = client.db('app').collection('items')
    for (let i = 0; i < 4; i++) await coll.insertOne({ _id: i as never })
    await close()
  }
  const path = await journalPath(dir)
  const data = await readFile(path)
  // Damage the payload of the third frame (createCollection, insert 0, insert 1, insert 2, insert 3).
  let pos = 8
  for (let frame = 0; frame < 3; frame++) pos += 8 + data.readUInt32LE(pos)
  data[pos + 12] ^= 0x55
  await writeFile(path, data)
  await t.rejects(open(dir), { name: 'DataDirectoryDamagedError', offset: pos, file: 'journal-0.bin' })
  t.same(await readFile(path), data, 'the journal is left as it was')
})

interface CliProcess { child: ChildProcess; uri: string; exited: Promise<unknown[]> }

/** Starts `npm run embedded-db`'s entry point and waits for the URI line it prints. */
async function startCli(env: Record<string, string>): Promise<CliProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/embedded-mongo/cli.ts'], {
    cwd: process.cwd(),
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const exited = once(child, 'exit')
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  const [uri] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string]
  return { child, uri, exited }
}

// Child processes take a while to boot; both start now and boot while the tests above run.
const crashDir = await mkdtemp(join(tmpdir(), 'embedded-mongo-crash-'))
t.teardown(() => rm(crashDir, { recursive: true, force: true }))
const crashCli = startCli({ EMBEDDED_DB: 'disk', DATA_DIR: crashDir, EMBEDDED_DB_PORT: '0' })
const memoryCli = startCli({ EMBEDDED_DB: 'memory' })
// Keep a failed start from surfacing as an unhandled rejection before its test awaits it.
crashCli.catch(() => undefined)
memoryCli.catch(() => undefined)

t.test('acknowledged writes survive the process being killed, and a stale lock is taken over', async (t) => {
  const { child, uri, exited } = await crashCli
  t.match(uri, /^mongodb:\/\/127\.0\.0\.1:\d+\//, 'the CLI prints its URI')
  const client = await MongoClient.connect(uri, { serverSelectionTimeoutMS: 5000 })
  const coll = client.db('app').collection('events')
  await coll.createIndex({ seq: 1 }, { unique: true })
  await coll.insertMany(Array.from({ length: 100 }, (_, i) => ({ seq: i })))
  await Promise.all(Array.from({ length: 20 }, (_, i) => coll.updateOne({ seq: i }, { $set: { touched: true } })))
  child.kill('SIGKILL')
  const [code, signal] = (await exited) as [number | null, string | null]
  t.equal(signal, 'SIGKILL')
  t.equal(code, null)
  await client.close(true)

  const { client: after, close } = await open(crashDir)
  t.teardown(close)
  const recovered = after.db('app').collection('events')
  t.equal(await recovered.countDocuments(), 100)
  t.equal(await recovered.countDocuments({ touched: true }), 20)
  await t.rejects(recovered.insertOne({ seq: 5 }), { code: 11000 })
})

t.test('the CLI shuts down cleanly on SIGTERM', async (t) => {
  const { child, uri, exited } = await memoryCli
  const client = await MongoClient.connect(uri)
  await client.db('x').command({ ping: 1 })
  child.kill('SIGTERM')
  const [code] = (await exited) as [number | null]
  t.equal(code, 0)
  await client.close(true)
})

t.test('compaction writes a snapshot, starts a new journal and loses nothing', async (t) => {
  const dir = await tempDir(t)
  {
    const { server, client, close } = await open(dir, { compactJournalBytes: 4096 })
    const coll = client.db('app').collection('docs')
    await coll.createIndex({ k: 1 }, { unique: true })
    for (let i = 0; i < 200; i++) await coll.insertOne({ _id: i as never, k: `k${i}`, pad: 'x'.repeat(50) })
    await coll.deleteMany({ _id: { $lt: 50 } as never })
    // Writes racing with an explicit compaction must land in one of the two generations.
    await Promise.all([
      (server.storage as DiskStorage).compactNow(),
      ...Array.from({ length: 20 }, (_, i) => coll.updateOne({ _id: (100 + i) as never }, { $set: { raced: true } })),
    ])
    await coll.insertOne({ _id: 'last' as never, k: 'last' })
    await close()
  }
  const files = (await readdir(dir)).sort()
  t.ok(files.includes('snapshot.bin'), 'a snapshot exists')
  t.equal(files.filter((f) => f.startsWith('journal-')).length, 1, 'older journals are removed')
  t.notOk(files.includes('snapshot.tmp'))
  const { server, client, close } = await open(dir)
  t.teardown(close)
  t.ok((server.recovery?.snapshotOps ?? 0) > 0, 'state came from the snapshot')
  const coll = client.db('app').collection('docs')
  t.equal(await coll.countDocuments(), 151)
  t.equal(await coll.countDocuments({ raced: true }), 20)
  await t.rejects(coll.insertOne({ k: 'k60' }), { code: 11000 }, 'index definitions are part of the snapshot')
})

t.test('a data directory cannot be opened twice, and a damaged snapshot refuses to start', async (t) => {
  const dir = await tempDir(t)
  const first = await open(dir)
  await t.rejects(startEmbeddedMongoServer({ storage: 'disk', dataDir: dir, logger: quiet }), /already open/)
  await first.client.db('a').collection('b').insertOne({ x: 1 })
  await (first.server.storage as DiskStorage).compactNow()
  await first.close()
  const snapshot = join(dir, 'snapshot.bin')
  const data = await readFile(snapshot)
  data[data.length - 5] ^= 0xff
  await writeFile(snapshot, data)
  await t.rejects(startEmbeddedMongoServer({ storage: 'disk', dataDir: dir, logger: quiet }), /corrupt/)
  t.notOk((await readdir(dir)).includes('LOCK'), 'a failed start releases the lock')
})

t.test('disk storage requires a dataDir', async (t) => {
  await t.rejects(startEmbeddedMongoServer({ storage: 'disk' }), /dataDir/)
})
