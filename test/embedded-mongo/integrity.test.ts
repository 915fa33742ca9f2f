// Damaged copies of a data directory: what start-up refuses (one line naming the file, the offset and the
// repair command, nothing changed on disk), what it fixes by itself (a torn tail, leftovers of an
// interrupted compaction, a directory from before the MANIFEST), and what the repair command keeps.
import { cp, mkdtemp, readdir, readFile, rename, rm, truncate, writeFile, stat, copyFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { MongoClient } from 'mongodb'
import { startEmbeddedMongoServer, type EmbeddedMongoServer } from '../../src/embedded-mongo/server.ts'
import { DataDirectoryDamagedError, type DiskStorage } from '../../src/embedded-mongo/storage/disk-storage.ts'
import { decodeFrames, encodeFrame } from '../../src/embedded-mongo/storage/frames.ts'
import { repairDataDirectory } from '../../src/embedded-mongo/storage/repair.ts'
import { runToExit } from '../helpers/run-to-exit.ts'

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined }
const root = new URL('../..', import.meta.url).pathname

async function tempDir(t: Test, prefix = 'integrity-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

interface Opened { server: EmbeddedMongoServer; client: MongoClient; close: () => Promise<void> }

async function open(dataDir: string, warnings?: string[]): Promise<Opened> {
  const server = await startEmbeddedMongoServer({ storage: 'disk', dataDir, logger: { ...quiet, warn: (m) => warnings?.push(m) } })
  const client = await MongoClient.connect(server.uri, { serverSelectionTimeoutMS: 5000 })
  return { server, client, close: async () => { await client.close(); await server.close() } }
}

const workflow = (i: number): Record<string, unknown> => ({
  _id: `wf-${i}`, owner_id: 'u1', name: `workflow ${i}`, nodes: [{ id: 'a', image: 'nginx:1.27' }, { id: 'b', image: 'redis:7' }],
})

/** Writes `before` workflows, compacts (if asked), then writes `after` more: one journal frame each. */
async function buildDir(dir: string, before: number, after = 0, compact = false): Promise<void> {
  const { server, client, close } = await open(dir)
  const coll = client.db('app').collection('workflows')
  for (let i = 0; i < before; i++) await coll.insertOne(workflow(i) as never)
  if (compact) await (server.storage as DiskStorage).compactNow()
  for (let i = before; i < before + after; i++) await coll.insertOne(workflow(i) as never)
  await close()
}

async function ids(dir: string): Promise<string[]> {
  const { client, close } = await open(dir)
  try {
    return (await client.db('app').collection('workflows').find({}, { projection: { _id: 1 } }).toArray()).map((d) => String(d._id))
  } finally {
    await close()
  }
}

/** Every file's bytes, to show that a refused start changed nothing. */
async function contents(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  for (const f of (await readdir(dir)).sort()) out[f] = (await readFile(join(dir, f))).toString('base64')
  return out
}

async function journalOf(dir: string): Promise<string> {
  const files = (await readdir(dir)).filter((f) => /^journal-\d+\.bin$/.test(f))
  if (files.length !== 1) throw new Error(`expected one journal, found ${files.join(', ')}`)
  return join(dir, files[0]!)
}

/** Offsets of the frames in a journal (after its 8-byte magic). */
function frameOffsets(data: Buffer): number[] {
  const out: number[] = []
  for (let pos = 8; pos < data.length; pos += 8 + data.readUInt32LE(pos)) out.push(pos)
  return out
}

/** Start-up is refused with one line naming `file` (and `offset`), and nothing in the directory changes. */
async function refused(t: Test, dir: string, file: string, detail: RegExp, offset?: number): Promise<DataDirectoryDamagedError> {
  const before = await contents(dir)
  const err = await startEmbeddedMongoServer({ storage: 'disk', dataDir: dir, logger: quiet }).then(
    async (s) => { await s.close(); throw new Error('started') },
    (e: unknown) => e,
  )
  t.type(err, DataDirectoryDamagedError)
  const damaged = err as DataDirectoryDamagedError
  t.equal(damaged.file, file, `names ${file}`)
  if (offset !== undefined) t.equal(damaged.offset, offset, `names byte ${offset}`)
  t.match(damaged.detail, detail)
  t.notMatch(damaged.message, /\n/, 'one line')
  t.match(damaged.message, `npm run embedded-db -- repair ${dir}`, 'says what to run')
  t.same(await contents(dir), before, 'nothing on disk changed')
  t.comment(damaged.message)
  return damaged
}

// Two base directories, built once and copied for each case: 100 workflows in the journal only, and 60
// in a snapshot (generation 1) plus 40 in journal-1.
const journalOnly = await mkdtemp(join(tmpdir(), 'integrity-base-'))
const withSnapshot = await mkdtemp(join(tmpdir(), 'integrity-base-'))
t.teardown(async () => {
  await rm(journalOnly, { recursive: true, force: true })
  await rm(withSnapshot, { recursive: true, force: true })
})
await buildDir(journalOnly, 100)
await buildDir(withSnapshot, 60, 40, true)

async function copyOf(t: Test, base: string): Promise<string> {
  const dir = join(await tempDir(t), 'data')
  await cp(base, dir, { recursive: true })
  return dir
}

t.test('the base directories hold what was written, with a MANIFEST', async (t) => {
  t.equal((await ids(await copyOf(t, journalOnly))).length, 100)
  const dir = await copyOf(t, withSnapshot)
  t.same((await readdir(dir)).sort(), ['MANIFEST', 'journal-1.bin', 'snapshot.bin'])
  const manifest = JSON.parse(await readFile(join(dir, 'MANIFEST'), 'utf8')) as { generation: number; snapshot: { bytes: number } }
  t.equal(manifest.generation, 1)
  t.equal(manifest.snapshot.bytes, (await stat(join(dir, 'snapshot.bin'))).size)
  t.equal((await ids(dir)).length, 100)
})

t.test('a flipped byte in the middle of the journal: refused, and repair keeps every other write', async (t) => {
  const dir = await copyOf(t, journalOnly)
  const path = await journalOf(dir)
  const data = await readFile(path)
  const frames = frameOffsets(data)
  // Frame 0 is the journal's header, frame 1 creates the collection, frame 2 + i inserts wf-i.
  // Damage the payload of wf-50's insert.
  const hit = frames[52]!
  data[hit + 40] ^= 0x01
  await writeFile(path, data)
  await refused(t, dir, 'journal-0.bin', /checksum mismatch, and intact records follow it at byte \d+/, hit)

  const report = await repairDataDirectory(dir, new Date('2026-01-02T03:04:05Z'))
  t.equal(report.backup, `${dir}.bak-20260102T030405Z`)
  t.same(await readFile(join(report.backup, 'journal-0.bin')), data, 'the damaged original is kept aside')
  t.same(report.damaged.map((d) => [d.file, d.offset, d.bytes]), [['journal-0.bin', hit, frames[53]! - hit]])
  t.equal(report.journalGroups, 100, 'every intact frame, also the 49 after the damage')
  t.equal(report.documents, 99)
  const left = await ids(dir)
  t.equal(left.length, 99)
  t.notOk(left.includes('wf-50'), 'only the damaged write is gone')
  t.ok(left.includes('wf-99'))
  t.comment(`flip at 50 %: ${left.length} of 100 kept by repair`)
  t.same((await readdir(dir)).sort(), ['MANIFEST', `journal-${report.generation}.bin`, 'snapshot.bin'])
})

t.test('a flipped byte at 10 %, 50 % and 95 % of the journal: each refused, each repaired down to one lost write', async (t) => {
  for (const share of [0.1, 0.5, 0.95]) {
    const dir = await copyOf(t, journalOnly)
    const path = await journalOf(dir)
    const data = await readFile(path)
    const frames = frameOffsets(data)
    const at = Math.floor(data.length * share)
    const hit = frames.filter((f) => f <= at).at(-1)!
    data[at] ^= 0x20
    await writeFile(path, data)
    const err = await refused(t, dir, 'journal-0.bin', /intact records follow it/, hit)
    const report = await repairDataDirectory(dir)
    t.equal(report.documents, 99)
    t.comment(`flip at ${share * 100} % (byte ${at}): refused at byte ${err.offset}; repair kept ${report.journalGroups} of ${frames.length - 1} write frames, ${report.documents} of 100 workflows`)
  }
})

t.test('a large torn tail of random bytes is scanned quickly and cut', async (t) => {
  // A torn multi-megabyte frame of binary data: every offset is checked for an intact frame after it.
  let x = 0x2545f491
  const random = Buffer.alloc(4 * 1024 * 1024)
  for (let i = 0; i < random.length; i += 4) {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5
    random.writeInt32LE(x | 0, i)
  }
  const good = Buffer.concat([encodeFrame([{ a: 1 }]), encodeFrame([{ b: 2 }])])
  const torn = Buffer.alloc(8)
  torn.writeUInt32LE(64 * 1024 * 1024, 0)
  const journal = Buffer.concat([Buffer.from('EMJRNL01'), good, torn, random])
  const started = process.hrtime.bigint()
  const decoded = decodeFrames(journal, 8)
  const ms = Number(process.hrtime.bigint() - started) / 1e6
  t.equal(decoded.groups.length, 2)
  t.equal(decoded.validEnd, 8 + good.length)
  t.equal(decoded.intactAfter, undefined, 'no intact frame after it: a torn tail')
  t.ok(ms < 3000, `scanned 4 MiB in ${ms.toFixed(0)} ms`)
})

t.test('a flipped byte in a frame length (so the frame seems to run past the end): refused, not cut', async (t) => {
  const dir = await copyOf(t, journalOnly)
  const path = await journalOf(dir)
  const data = await readFile(path)
  const hit = frameOffsets(data)[10]!
  data[hit + 3] ^= 0x40
  await writeFile(path, data)
  await refused(t, dir, 'journal-0.bin', /implausible frame length|truncated frame payload/, hit)
  const report = await repairDataDirectory(dir)
  t.equal(report.documents, 99)
})

t.test('a flipped byte in the last frame looks like a torn write: cut with a warning', async (t) => {
  const dir = await copyOf(t, journalOnly)
  const path = await journalOf(dir)
  const data = await readFile(path)
  const last = frameOffsets(data).at(-1)!
  data[data.length - 3] ^= 0xff
  await writeFile(path, data)
  const warnings: string[] = []
  const { client, close } = await open(dir, warnings)
  t.equal(await client.db('app').collection('workflows').countDocuments(), 99)
  await close()
  t.match(warnings.join('\n'), new RegExp(`journal-0\\.bin: checksum mismatch at byte ${last} with nothing intact after it`))
  t.equal((await stat(path)).size, last)
})

t.test('a journal cut short mid-frame (a torn tail) is cut back to the last whole frame', async (t) => {
  const dir = await copyOf(t, journalOnly)
  const path = await journalOf(dir)
  const { size } = await stat(path)
  await truncate(path, size - 20)
  const warnings: string[] = []
  const { server, client, close } = await open(dir, warnings)
  t.equal(await client.db('app').collection('workflows').countDocuments(), 99)
  t.ok(server.recovery!.truncatedBytes > 0)
  await close()
  t.equal(warnings.length, 1)
  t.match(warnings[0], /truncated frame payload at byte \d+ with nothing intact after it/)
})

t.test('a flipped byte in the middle of the snapshot: refused, and repair keeps every other snapshot frame', async (t) => {
  const dir = join(await tempDir(t), 'data')
  {
    const { server, client, close } = await open(dir)
    await client.db('app').collection('workflows').insertMany(Array.from({ length: 1000 }, (_, i) => workflow(i)) as never[])
    await (server.storage as DiskStorage).compactNow()
    await close()
  }
  const path = join(dir, 'snapshot.bin')
  const data = await readFile(path)
  data[Math.floor(data.length / 2)] ^= 0x04
  await writeFile(path, data)
  const err = await refused(t, dir, 'snapshot.bin', /corrupt \(checksum mismatch\)/)
  t.ok(err.offset! > 0 && err.offset! < data.length / 2)
  const report = await repairDataDirectory(dir)
  t.equal(report.damaged.length, 1)
  t.equal(report.damaged[0]!.file, 'snapshot.bin')
  t.ok(report.documents >= 800 && report.documents < 1000, `one frame of at most 200 records lost: ${report.documents} kept`)
  t.equal((await ids(dir)).length, report.documents)
  t.comment(`flip in the middle of a 1,000-workflow snapshot: ${report.documents} kept by repair`)
})

t.test('snapshot.bin deleted: refused, and repair keeps what the journal holds', async (t) => {
  const dir = await copyOf(t, withSnapshot)
  await rm(join(dir, 'snapshot.bin'))
  await refused(t, dir, 'snapshot.bin', /missing, but MANIFEST records a snapshot of generation 1/)
  const report = await repairDataDirectory(dir)
  t.match(report.missing.join('\n'), /snapshot\.bin \(generation 1/)
  t.equal(report.documents, 40)
  t.equal((await ids(dir)).length, 40)
})

t.test('the newest journal deleted: refused, and repair keeps the snapshot', async (t) => {
  const dir = await copyOf(t, withSnapshot)
  await rm(join(dir, 'journal-1.bin'))
  await refused(t, dir, 'journal-1.bin', /missing, but MANIFEST records it/)
  const report = await repairDataDirectory(dir)
  t.match(report.missing.join('\n'), /journal-1\.bin/)
  t.equal((await ids(dir)).length, 60)
})

t.test('the snapshot generation going backwards (an older snapshot put back) is refused', async (t) => {
  const dir = await copyOf(t, withSnapshot)
  const older = join(await tempDir(t), 'snapshot-gen1.bin')
  await copyFile(join(dir, 'snapshot.bin'), older)
  {
    const { server, client, close } = await open(dir)
    await client.db('app').collection('workflows').insertOne(workflow(100) as never)
    await (server.storage as DiskStorage).compactNow()
    await close()
  }
  await copyFile(older, join(dir, 'snapshot.bin'))
  await refused(t, dir, 'snapshot.bin', /is generation 1 but MANIFEST records generation 2: the generation went backwards/)
})

t.test('a snapshot of the same generation from another directory is refused as replaced', async (t) => {
  const dir = await copyOf(t, withSnapshot)
  const other = await tempDir(t)
  await buildDir(other, 60, 0, true)
  await copyFile(join(other, 'snapshot.bin'), join(dir, 'snapshot.bin'))
  await refused(t, dir, 'snapshot.bin', /is not the snapshot MANIFEST records .*: it was replaced/)
})

t.test('a journal of the same generation from another directory is refused as replaced', async (t) => {
  const dir = await copyOf(t, journalOnly)
  const other = await tempDir(t)
  await buildDir(other, 100)
  await copyFile(join(other, 'journal-0.bin'), join(dir, 'journal-0.bin'))
  await refused(t, dir, 'journal-0.bin', /is not the journal MANIFEST records \(id \S+; found \S+\): it was replaced/, 8)
})

t.test('MANIFEST deleted next to a snapshot that was written with one: refused', async (t) => {
  const dir = await copyOf(t, withSnapshot)
  await rm(join(dir, 'MANIFEST'))
  await refused(t, dir, 'MANIFEST', /missing, but snapshot\.bin \(generation 1\) was written with one/)
})

t.test('a directory that once held data and now holds only its MANIFEST is refused; an empty one is new', async (t) => {
  const dir = await copyOf(t, journalOnly)
  await rm(join(dir, 'journal-0.bin'))
  await refused(t, dir, 'journal-0.bin', /missing, but MANIFEST records it/)
  const empty = join(await tempDir(t), 'fresh')
  t.same(await ids(empty), [])
  t.same((await readdir(empty)).sort(), ['MANIFEST', 'journal-0.bin'])
  const manifest = JSON.parse(await readFile(join(empty, 'MANIFEST'), 'utf8')) as Record<string, unknown>
  t.match(manifest, { format: 1, generation: 0, snapshot: null, journal: 'journal-0.bin', journalId: String, crc32: Number })
})

t.test('a journal newer than the snapshot: refused if it holds records, removed if it is a compaction\'s empty leftover', async (t) => {
  const dir = await copyOf(t, withSnapshot)
  await copyFile(join(dir, 'journal-1.bin'), join(dir, 'journal-3.bin'))
  await refused(t, dir, 'journal-3.bin', /holds records that follow a snapshot of generation 3, but snapshot\.bin is generation 1/)
  // A compaction stopped between creating the next journal and renaming its snapshot leaves this:
  await writeFile(join(dir, 'journal-3.bin'), 'EMJRNL01')
  t.equal((await ids(dir)).length, 100)
  t.notOk((await readdir(dir)).includes('journal-3.bin'))
})

t.test('a compaction stopped after its rename (snapshot one generation ahead of MANIFEST) completes at start-up', async (t) => {
  const dir = await copyOf(t, withSnapshot)
  const oldManifest = await readFile(join(dir, 'MANIFEST'))
  const oldJournal = await readFile(join(dir, 'journal-1.bin'))
  {
    const { server, close } = await open(dir)
    await (server.storage as DiskStorage).compactNow()
    await close()
  }
  // Put back what the directory held before the MANIFEST was rewritten and the old journal removed.
  await writeFile(join(dir, 'MANIFEST'), oldManifest)
  await writeFile(join(dir, 'journal-1.bin'), oldJournal)
  const beforeStart = await contents(dir)
  t.equal((await ids(dir)).length, 100)
  t.equal((JSON.parse(await readFile(join(dir, 'MANIFEST'), 'utf8')) as { generation: number }).generation, 2)
  t.notOk((await readdir(dir)).includes('journal-1.bin'))

  // The same state with the new journal deleted is not a stopped compaction: that journal exists first.
  const other = join(await tempDir(t), 'data')
  await cp(dir, other, { recursive: true })
  for (const [file, data] of Object.entries(beforeStart)) await writeFile(join(other, file), Buffer.from(data, 'base64'))
  await rm(join(other, 'journal-2.bin'))
  await refused(t, other, 'journal-2.bin', /missing, but snapshot\.bin of generation 2 is in place/)
})

t.test('a directory written before MANIFEST existed opens and gets one', async (t) => {
  const dir = join(await tempDir(t), 'legacy')
  const put = (i: number): Record<string, unknown> => ({ op: 'put', db: 'app', coll: 'workflows', doc: workflow(i) })
  const create = { op: 'createCollection', db: 'app', coll: 'workflows', options: {} }
  // The earlier version's layout: a snapshot header without id, and journal frames after it.
  await cp(journalOnly, dir, { recursive: true })
  await rm(join(dir, 'journal-0.bin'))
  await rm(join(dir, 'MANIFEST'))
  await writeFile(join(dir, 'snapshot.bin'), Buffer.concat([
    Buffer.from('EMSNAP01'),
    encodeFrame([{ op: 'snapshotHeader', generation: 4, createdAt: new Date() }]),
    encodeFrame([create, put(0), put(1)]),
    encodeFrame([{ op: 'snapshotEnd', count: 3 }]),
  ]))
  await writeFile(join(dir, 'journal-4.bin'), Buffer.concat([Buffer.from('EMJRNL01'), encodeFrame([put(2)])]))
  t.same((await ids(dir)).sort(), ['wf-0', 'wf-1', 'wf-2'])
  const manifest = JSON.parse(await readFile(join(dir, 'MANIFEST'), 'utf8')) as { generation: number; snapshot: { id: null } }
  t.equal(manifest.generation, 4)
  t.equal(manifest.snapshot.id, null)
  t.same((await ids(dir)).length, 3, 'and opens again with it')
})

const run = (args: string[], env: Record<string, string>) => runToExit(args, env, root)

t.test('npm start stops with one line naming the damage, and the repair command fixes it', async (t) => {
  const dir = await copyOf(t, journalOnly)
  const path = await journalOf(dir)
  const data = await readFile(path)
  const hit = frameOffsets(data)[20]!
  data[hit + 30] ^= 0x10
  await writeFile(path, data)

  const start = await run(['src/server.ts'], { NODE_ENV: 'development', DATA_DIR: dir, EMBEDDED_DB: 'disk', HOST: '127.0.0.1', PORT: '0' })
  t.equal(start.code, 1)
  t.equal(start.stderr.split('\n').filter(Boolean).length, 1, `one line: ${start.stderr}`)
  t.match(start.stderr, new RegExp(`^Cannot start: data directory ${dir} is damaged: journal-0\\.bin at byte ${hit}: checksum mismatch`))
  t.notMatch(start.stderr, /\n\s+at /, 'no stack trace')
  t.same(await readFile(path), data, 'the journal is untouched')

  const cli = await run(['src/embedded-mongo/cli.ts'], { EMBEDDED_DB: 'disk', DATA_DIR: dir })
  t.equal(cli.code, 1)
  t.match(cli.stderr, /^\[error\] data directory \S+ is damaged: journal-0\.bin at byte \d+/)
  t.equal(cli.stderr.split('\n').filter(Boolean).length, 1)

  const repair = await run(['src/embedded-mongo/cli.ts', 'repair', dir], {})
  t.equal(repair.code, 0, repair.stderr)
  t.match(repair.stdout, new RegExp(`copied ${dir} to ${dir}\\.bak-\\d{8}T\\d{6}Z before changing anything`))
  t.match(repair.stdout, /kept 0 snapshot record\(s\) and 100 journal write\(s\): 99 document\(s\)/)
  t.match(repair.stdout, new RegExp(`could not keep journal-0\\.bin bytes ${hit}–\\d+`))
  t.comment(repair.stdout.trim())
  t.equal((await ids(dir)).length, 99)
})

t.test('the repair command puts the copy where it is told', async (t) => {
  const dir = await copyOf(t, withSnapshot)
  const backup = join(await tempDir(t), 'elsewhere')
  const repair = await run(['src/embedded-mongo/cli.ts', 'repair', dir, backup], {})
  t.equal(repair.code, 0, repair.stderr)
  t.match(repair.stdout, `copied ${dir} to ${backup} before changing anything`)
  t.same((await readdir(backup)).sort(), ['MANIFEST', 'journal-1.bin', 'snapshot.bin'])
  t.equal((await ids(dir)).length, 100)
  const again = await run(['src/embedded-mongo/cli.ts', 'repair', dir, backup], {})
  t.equal(again.code, 1, 'an existing copy is never overwritten')
  t.match(again.stderr, new RegExp(`^\\[error\\] repair failed: ${backup} already exists`))
})

t.test('repair refuses a directory a running server holds', async (t) => {
  const dir = await copyOf(t, journalOnly)
  const { close } = await open(dir)
  await t.rejects(repairDataDirectory(dir), /already open in this process/)
  await close()
  t.notOk((await readdir(join(dir, '..'))).some((f) => f.includes('.bak-')), 'no copy was made')
})

t.test('repair of a healthy directory keeps everything, and running it twice is harmless', async (t) => {
  const dir = await copyOf(t, withSnapshot)
  const first = await repairDataDirectory(dir, new Date('2026-01-01T00:00:00Z'))
  t.same([first.damaged, first.missing, first.documents, first.generation], [[], [], 100, 2])
  const second = await repairDataDirectory(dir, new Date('2026-01-01T00:00:01Z'))
  t.same([second.damaged, second.missing, second.documents, second.generation], [[], [], 100, 3])
  t.equal((await ids(dir)).length, 100)
})
