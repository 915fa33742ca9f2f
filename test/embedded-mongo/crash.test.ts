// kill -9 of a server process while the real driver writes concurrently, during ordinary appends and
// during compactions: after a restart every acknowledged write is there.
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { watch } from 'node:fs'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import t, { type Test } from 'tap'
import { MongoClient } from 'mongodb'
import { startEmbeddedMongoServer } from '../../src/embedded-mongo/server.ts'

const script = new URL('./crash-server.ts', import.meta.url).pathname
const tsx = import.meta.resolve('tsx')
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined }

async function tempDir(t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'crash-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

interface Child { child: ChildProcess; uri: string; exited: Promise<unknown[]>; stderr: () => string }

async function startChild(t: Test, dir: string, compactJournalBytes: number): Promise<Child> {
  const child = spawn(process.execPath, ['--import', tsx, script, dir, String(compactJournalBytes)], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr!.on('data', (d) => { stderr += d })
  const exited = once(child, 'exit')
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  const line = once(createInterface({ input: child.stdout! }), 'line') as Promise<[string]>
  const [uri] = await Promise.race([line, exited.then(() => { throw new Error(`the server exited: ${stderr}`) })])
  return { child, uri, exited, stderr: () => stderr }
}

interface Tally {
  /** _ids whose insert was acknowledged, and those sent without an answer before the kill. */
  acked: Set<string>
  unanswered: Set<string>
  /** Acknowledged and attempted $inc per writer on its counter document. */
  incAcked: number[]
  incTried: number[]
}

/** `writers` loops, each inserting documents and (every fourth) rewriting its counter document, until
 *  a write fails (the server is gone). `onAck` runs after each acknowledged insert. */
function writeConcurrently(client: MongoClient, prefix: string, writers: number, blobBytes: number, onAck: (tally: Tally) => void): { tally: Tally; done: Promise<unknown> } {
  const tally: Tally = { acked: new Set(), unanswered: new Set(), incAcked: Array(writers).fill(0), incTried: Array(writers).fill(0) }
  const coll = client.db('app').collection<{ _id: string }>('events')
  const counters = client.db('app').collection<{ _id: string; n?: number }>('counters')
  const blob = 'x'.repeat(blobBytes)
  const loops = Array.from({ length: writers }, async (_, w) => {
    for (let i = 0; ; i++) {
      const id = `${prefix}-w${w}-${i}`
      tally.unanswered.add(id)
      try {
        await coll.insertOne({ _id: id, w, i } as never)
      } catch {
        return
      }
      tally.unanswered.delete(id)
      tally.acked.add(id)
      onAck(tally)
      if (i % 4 === 0) {
        tally.incTried[w]!++
        try {
          // The blob grows the journal without growing the state, so compactions come often.
          await counters.updateOne({ _id: `${prefix}-w${w}` }, { $inc: { n: 1 }, $set: { blob } }, { upsert: true })
        } catch {
          return
        }
        tally.incAcked[w]!++
      }
    }
  })
  return { tally, done: Promise.all(loops) }
}

/** Opens the directory in this process and checks every acknowledged write of `prefix` is there. */
async function verify(t: Test, dir: string, prefix: string, tally: Tally): Promise<{ found: number; landedUnanswered: number }> {
  const server = await startEmbeddedMongoServer({ storage: 'disk', dataDir: dir, logger: quiet })
  const client = await MongoClient.connect(server.uri)
  try {
    const coll = client.db('app').collection<{ _id: string }>('events')
    const found = new Set((await coll.find({ _id: { $regex: `^${prefix}-` } }, { projection: { _id: 1 } }).toArray()).map((d) => d._id))
    const lost = [...tally.acked].filter((id) => !found.has(id))
    t.same(lost, [], `every acknowledged insert of ${prefix} is there`)
    const unexpected = [...found].filter((id) => !tally.acked.has(id) && !tally.unanswered.has(id))
    t.same(unexpected, [], 'nothing that was never sent')
    const counters = client.db('app').collection<{ _id: string; n: number }>('counters')
    for (let w = 0; w < tally.incAcked.length; w++) {
      const n = (await counters.findOne({ _id: `${prefix}-w${w}` }))?.n ?? 0
      if (n < tally.incAcked[w]! || n > tally.incTried[w]!) t.fail(`counter ${w}: ${n} outside ${tally.incAcked[w]}..${tally.incTried[w]}`)
    }
    t.pass('every counter holds at least its acknowledged increments')
    return { found: found.size, landedUnanswered: [...tally.unanswered].filter((id) => found.has(id)).length }
  } finally {
    await client.close()
    await server.close()
  }
}

const driverOptions = { serverSelectionTimeoutMS: 2000, retryWrites: false, maxPoolSize: 16 }

t.test('kill -9 during concurrent writes: every acknowledged write survives', async (t) => {
  const dir = await tempDir(t)
  let total = 0
  for (let cycle = 0; cycle < 2; cycle++) {
    const { child, uri, exited } = await startChild(t, dir, 32 * 1024 * 1024)
    const client = await MongoClient.connect(uri, driverOptions)
    const target = 200 + cycle * 100
    const { tally, done } = writeConcurrently(client, `c${cycle}`, 12, 100, (tally) => {
      if (tally.acked.size === target) child.kill('SIGKILL')
    })
    const [, signal] = (await exited) as [number | null, string | null]
    t.equal(signal, 'SIGKILL')
    await done
    await client.close(true)
    const { found, landedUnanswered } = await verify(t, dir, `c${cycle}`, tally)
    total += tally.acked.size
    t.comment(`cycle ${cycle}: ${tally.acked.size} acknowledged, ${tally.unanswered.size} in flight at the kill (${landedUnanswered} of them landed), ${found} found, 0 lost`)
  }
  t.comment(`${total} acknowledged inserts over 2 kill -9 cycles, none lost`)
})

t.test('kill -9 during a compaction: every acknowledged write survives', async (t) => {
  const dir = await tempDir(t)
  // A state of a few MB makes a compaction take long enough to be killed inside; the small threshold
  // starts one as soon as the journal outgrows the snapshot.
  {
    const server = await startEmbeddedMongoServer({ storage: 'disk', dataDir: dir, logger: quiet })
    const client = await MongoClient.connect(server.uri)
    const coll = client.db('app').collection('base')
    for (let b = 0; b < 4; b++) await coll.insertMany(Array.from({ length: 500 }, (_, i) => ({ b, i, pad: 'y'.repeat(1000) })))
    await client.close()
    await server.close()
  }
  let midCompaction = 0
  let total = 0
  for (let cycle = 0; cycle < 4 && midCompaction < 1; cycle++) {
    const { child, uri, exited } = await startChild(t, dir, 256 * 1024)
    const client = await MongoClient.connect(uri, driverOptions)
    let acked = 0
    // The compaction's temporary snapshot appearing is the moment to kill (once some writes are in).
    const watcher = watch(dir, (_event, file) => {
      if (file === 'snapshot.tmp' && acked > 20) child.kill('SIGKILL')
    })
    const { tally, done } = writeConcurrently(client, `k${cycle}`, 12, 64 * 1024, (tally) => { acked = tally.acked.size })
    await exited
    watcher.close()
    await done
    await client.close(true)
    const files = await readdir(dir)
    const inside = files.includes('snapshot.tmp')
    if (inside) midCompaction++
    const { found } = await verify(t, dir, `k${cycle}`, tally)
    total += tally.acked.size
    t.comment(`cycle ${cycle}: killed ${inside ? 'inside a compaction (snapshot.tmp present)' : 'after a compaction finished'}; files ${files.sort().join(' ')}; ${tally.acked.size} acknowledged, ${found} found, 0 lost`)
  }
  t.ok(midCompaction >= 1, `at least one kill landed inside a compaction (${midCompaction})`)
  t.comment(`${total} acknowledged inserts, ${midCompaction} kills inside a compaction, none lost`)
  const server = await startEmbeddedMongoServer({ storage: 'disk', dataDir: dir, logger: quiet })
  const client = await MongoClient.connect(server.uri)
  t.equal(await client.db('app').collection('base').countDocuments(), 2000, 'the state from before every compaction is intact')
  await client.close()
  await server.close()
})
