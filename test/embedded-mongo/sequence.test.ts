// Journal frames carry a sequence number that only grows, and the snapshot records the last one it holds:
// an older frame appended to the journal (copied from an earlier journal, or twice into this one) is
// ignored with a warning at start-up instead of rolling a newer value back.
import { appendFile, mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { MongoClient } from 'mongodb'
import { startEmbeddedMongoServer, type EmbeddedMongoServer } from '../../src/embedded-mongo/server.ts'
import type { DiskStorage } from '../../src/embedded-mongo/storage/disk-storage.ts'
import { decodeFrames } from '../../src/embedded-mongo/storage/frames.ts'
import { repairDataDirectory } from '../../src/embedded-mongo/storage/repair.ts'

async function tempDir(t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'embedded-mongo-seq-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

interface Opened { server: EmbeddedMongoServer; client: MongoClient; warnings: string[]; close: () => Promise<void> }

async function open(dataDir: string): Promise<Opened> {
  const warnings: string[] = []
  const server = await startEmbeddedMongoServer({
    storage: 'disk', dataDir, logger: { info: () => undefined, warn: (m) => warnings.push(m), error: () => undefined },
  })
  const client = await MongoClient.connect(server.uri, { serverSelectionTimeoutMS: 5000 })
  return { server, client, warnings, close: async () => { await client.close(); await server.close() } }
}

async function journalFile(dir: string): Promise<string> {
  const files = (await readdir(dir)).filter((f) => /^journal-\d+\.bin$/.test(f))
  if (files.length !== 1) throw new Error(`expected one journal, found ${files.join(', ')}`)
  return join(dir, files[0]!)
}

/** The bytes of the journal frame that stores the document `{_id: 'k', v}` (frames: [u32 length][u32 crc][payload]). */
function frameStoring(journal: Buffer, v: number): Buffer {
  for (let pos = 8; pos < journal.length;) {
    const frame = journal.subarray(pos, pos + 8 + journal.readUInt32LE(pos))
    const [docs] = decodeFrames(Buffer.concat([Buffer.alloc(8), frame]), 8).groups
    if (docs?.some((d) => d.op === 'put' && (d.doc as { v?: number })?.v === v)) return frame
    pos += frame.length
  }
  throw new Error(`no frame stores v=${v}`)
}

const value = async (o: Opened): Promise<unknown> => (await o.client.db('app').collection('kv').findOne({ _id: 'k' as never }))?.v

/**
 * Writes v=1 then v=2, snapshots, and appends to the new journal a copy of the old journal's frame that
 * stored v=1; returns the new journal's path and the byte offset the copy starts at.
 */
async function appendFrameOlderThanSnapshot(dir: string): Promise<{ journal: string; at: number }> {
  let oldJournal: Buffer
  {
    const o = await open(dir)
    const kv = o.client.db('app').collection('kv')
    await kv.insertOne({ _id: 'k' as never, v: 1 })
    await kv.updateOne({ _id: 'k' as never }, { $set: { v: 2 } })
    oldJournal = await readFile(await journalFile(dir))
    await (o.server.storage as DiskStorage).compactNow()
    await o.close()
  }
  const journal = await journalFile(dir)
  const at = (await readFile(journal)).length
  await appendFile(journal, frameStoring(oldJournal, 1))
  return { journal, at }
}

t.test('a frame older than the snapshot, appended to the journal, is ignored with a warning', async (t) => {
  const dir = await tempDir(t)
  const { journal, at } = await appendFrameOlderThanSnapshot(dir)
  t.equal(journal, join(dir, 'journal-1.bin'), 'the snapshot was written and a new journal started')

  const o = await open(dir)
  t.teardown(o.close)
  t.equal(await value(o), 2, 'the newer value stands')
  t.equal(o.server.recovery?.ignoredGroups, 1)
  t.match(o.warnings, [new RegExp(`^embedded-mongo: journal-1\\.bin: ignored the record at byte ${at}, not applied: its sequence number \\d+ is not above \\d+`)])
})

t.test('a frame copied twice into the same journal is ignored, and writes after it still count', async (t) => {
  const dir = await tempDir(t)
  {
    const o = await open(dir)
    const kv = o.client.db('app').collection('kv')
    await kv.insertOne({ _id: 'k' as never, v: 3 })
    await kv.updateOne({ _id: 'k' as never }, { $set: { v: 4 } })
    await o.close()
  }
  const journal = await journalFile(dir)
  await appendFile(journal, frameStoring(await readFile(journal), 3))
  {
    const o = await open(dir)
    t.equal(await value(o), 4, 'the later write stands')
    t.equal(o.warnings.length, 1, 'one warning')
    // Written after the ignored frame: its number must be above everything before it to count.
    await o.client.db('app').collection('kv').updateOne({ _id: 'k' as never }, { $set: { v: 5 } })
    await o.close()
  }
  const o = await open(dir)
  t.teardown(o.close)
  t.equal(await value(o), 5, 'a write made after the restart survives the next one')
  t.equal(o.server.recovery?.ignoredGroups, 1, 'the copied frame is still the only one ignored')
})

t.test('repair leaves an old frame out too', async (t) => {
  const dir = await tempDir(t)
  await appendFrameOlderThanSnapshot(dir)
  const backup = join(await tempDir(t), 'backup')
  const report = await repairDataDirectory(dir, new Date(), backup)
  t.match(report.notes, [/^journal-1\.bin: the record at byte \d+ was left out: its sequence number/])
  const o = await open(dir)
  t.teardown(o.close)
  t.equal(await value(o), 2)
  t.same(o.warnings, [], 'the repaired directory starts clean')
})
