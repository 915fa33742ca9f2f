// `npm run bench:db`: driver-level throughput of the embedded MongoDB server over a real TCP socket.
//
// 10,000 insertOne and 10,000 findOne-by-_id through the official driver, each awaited before the
// next (concurrency 1, one client). Inserts and finds alternate one by one and each is timed on its
// own, so background load on the machine affects both alike; each find looks up a random
// already-inserted _id. Client and server share this one Node thread, so the figures are round-trip
// bound: driver encode + socket + server + reply decode.
//   insert: insertOne({ _id: ObjectId, n, name, tags, createdAt })
//   find:   findOne({ _id })
// Also reported:
//   - the server's CPU time per command (decode + handler + encode, not the fsync wait), from its stats;
//   - a driver-only baseline: the same loop against a stub that answers every command with a fixed
//     reply, which shows how much of any insert/find difference is the driver's own work.
// Memory storage always; disk storage too (fsync before each insert is acknowledged) unless BENCH_DISK=0.
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { BSON, Long, MongoClient, ObjectId } from 'mongodb'
import { startEmbeddedMongoServer, type EmbeddedMongoOptions } from '../src/embedded-mongo/server.ts'
import { encodeOpMsg, parseMessage, serializeReply } from '../src/embedded-mongo/wire.ts'

const OPS = Number(process.env.BENCH_OPS ?? 10_000)
const WARMUP = 500

interface Timings { insertMs: number; findMs: number }

async function alternate(uri: string, ops: number): Promise<Timings> {
  const client = await MongoClient.connect(uri)
  try {
    // Warm up JIT and the connection on a separate collection so the measured one starts empty.
    const warm = client.db('bench').collection('warmup')
    for (let i = 0; i < WARMUP; i++) {
      await warm.insertOne({ i })
      await warm.findOne({ i })
    }
    const coll = client.db('bench').collection('items')
    const ids = Array.from({ length: ops }, () => new ObjectId())
    let insertMs = 0
    let findMs = 0
    for (let i = 0; i < ops; i++) {
      const doc = { _id: ids[i], n: i, name: `item-${i}`, tags: ['a', 'b', String(i % 10)], createdAt: new Date() }
      const target = ids[Math.floor(Math.random() * (i + 1))]
      let start = performance.now()
      await coll.insertOne(doc)
      insertMs += performance.now() - start
      start = performance.now()
      const found = await coll.findOne({ _id: target })
      findMs += performance.now() - start
      if (!found) throw new Error(`document ${String(target)} not found`)
    }
    return { insertMs, findMs }
  } finally {
    await client.close()
  }
}

async function embedded(opts: EmbeddedMongoOptions): Promise<Timings & { serverInsertUs: number; serverFindUs: number }> {
  const server = await startEmbeddedMongoServer(opts)
  try {
    const t = await alternate(server.uri, OPS)
    const perOp = (name: string): number => {
      const e = server.stats.commandTimings.get(name)
      return e ? (e.totalMs / e.count) * 1000 : NaN
    }
    return { ...t, serverInsertUs: perOp('insert'), serverFindUs: perOp('find') }
  } finally {
    await server.close()
  }
}

/** A stub that answers instantly with canned replies: what the driver alone costs per operation. */
async function driverBaseline(): Promise<Timings> {
  const stored = { _id: new ObjectId(), n: 1, name: 'item-1', tags: ['a', 'b', '1'], createdAt: new Date() }
  const replies: Record<string, Buffer> = {
    hello: serializeReply({
      isWritablePrimary: true, helloOk: true, maxBsonObjectSize: 16 * 1024 * 1024, maxMessageSizeBytes: 48_000_000,
      maxWriteBatchSize: 100_000, localTime: new Date(), logicalSessionTimeoutMinutes: 30, connectionId: 1,
      minWireVersion: 0, maxWireVersion: 21, readOnly: false, ok: 1,
    }),
    insert: serializeReply({ n: 1, ok: 1 }),
    find: serializeReply({ cursor: { firstBatch: [stored], id: Long.ZERO, ns: 'bench.items' }, ok: 1 }),
    other: serializeReply({ ok: 1 }),
  }
  replies.isMaster = replies.ismaster = replies.hello
  const stub = createServer((socket) => {
    socket.setNoDelay(true)
    let pending = Buffer.alloc(0)
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk])
      while (pending.length >= 4 && pending.length >= pending.readInt32LE(0)) {
        const length = pending.readInt32LE(0)
        const req = parseMessage(pending.subarray(0, length))
        pending = pending.subarray(length)
        const body = req.kind === 'msg' ? req.body : req.query
        socket.write(encodeOpMsg(1, req.requestId, replies[Object.keys(body)[0]] ?? replies.other))
      }
    })
    socket.on('error', () => undefined)
  })
  await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve))
  try {
    const { port } = stub.address() as AddressInfo
    // The stub "finds" one fixed document, so a lookup always succeeds.
    return await alternate(`mongodb://127.0.0.1:${port}/?directConnection=true`, OPS)
  } finally {
    stub.close()
  }
}

const perSecond = (ms: number, ops = OPS): string => Math.round(ops / (ms / 1000)).toLocaleString('en-US').padStart(7)

function report(label: string, t: Timings & Partial<{ serverInsertUs: number; serverFindUs: number }>): void {
  console.log(label)
  const server = (us: number | undefined): string => (us === undefined ? '' : `   server CPU ${us.toFixed(1)} µs/op`)
  console.log(`  insertOne       ${perSecond(t.insertMs)} ops/s  (${OPS} ops in ${t.insertMs.toFixed(0)} ms)${server(t.serverInsertUs)}`)
  console.log(`  findOne by _id  ${perSecond(t.findMs)} ops/s  (${OPS} ops in ${t.findMs.toFixed(0)} ms)${server(t.serverFindUs)}`)
  console.log(`  find/insert throughput ratio: ${(t.insertMs / t.findMs).toFixed(2)}`)
}

/**
 * The read shapes of the workflow API, on ~5 KB documents (a 12-node canvas each): findOne by `_id`,
 * findOne by `{_id, owner_id}` (GET /workflows/:id) and a 20-document sorted find through the
 * `{owner_id, updated_at}` index (GET /workflows). Server CPU is the server's own time per find command.
 */
const LIST_PROJECTION = {
  _id: 1, owner_id: 1, name: 1, description: 1, status: 1, created_at: 1, updated_at: 1,
  node_count: { $size: { $ifNull: ['$nodes', []] } },
  edge_count: { $size: { $ifNull: ['$edges', []] } },
  node_types: { $setUnion: [{ $ifNull: ['$nodes.type', []] }, []] },
}

async function readShapes(ops: number): Promise<void> {
  const server = await startEmbeddedMongoServer({ storage: 'memory' })
  const client = await MongoClient.connect(server.uri)
  try {
    const coll = client.db('bench').collection('workflows')
    const owners = Array.from({ length: 10 }, () => new ObjectId().toHexString())
    const node = (i: number): Record<string, unknown> => ({
      id: `node-${i}`, type: 'deployment', position: { x: i * 40, y: i * 25 },
      data: { label: `service ${i}`, image: `registry.example.com/team/service-${i}:1.2.${i}`, replicas: 2, env: { LOG_LEVEL: 'info', PORT: '8080' }, notes: 'x'.repeat(200) },
    })
    const docs = Array.from({ length: 500 }, (_, i) => ({
      _id: new ObjectId().toHexString(), owner_id: owners[i % owners.length], name: `workflow ${i}`, description: 'd'.repeat(80),
      status: 'draft', nodes: Array.from({ length: 12 }, (_, n) => node(n)),
      edges: Array.from({ length: 11 }, (_, n) => ({ id: `e${n}`, source: `node-${n}`, target: `node-${n + 1}` })),
      created_at: new Date(Date.now() - i * 1000), updated_at: new Date(Date.now() - i * 1000),
    }))
    await coll.insertMany(docs as never[])
    await coll.createIndex({ owner_id: 1, updated_at: -1 })
    const shapes: Array<[string, () => Promise<unknown>]> = [
      ['findOne {_id}', () => coll.findOne({ _id: docs[Math.floor(Math.random() * docs.length)]._id as never })],
      ['findOne {_id, owner_id}', () => { const d = docs[Math.floor(Math.random() * docs.length)]; return coll.findOne({ _id: d._id as never, owner_id: d.owner_id }) }],
      ['find {owner_id} sort updated_at limit 20', () => coll.find({ owner_id: owners[Math.floor(Math.random() * owners.length)] }).sort({ updated_at: -1 }).limit(20).toArray()],
      // GET /workflows: the list projection computes a graph summary in the database.
      ['same, summary projection (node_count, …)', () => coll.find({ owner_id: owners[Math.floor(Math.random() * owners.length)] }, { projection: LIST_PROJECTION }).sort({ updated_at: -1 }).limit(20).toArray()],
    ]
    console.log(`read shapes: ${ops} ops each, memory storage, ${docs.length} documents of ~${Math.round(BSON.calculateObjectSize(docs[0]) / 1024)} KB`)
    const only = process.env.BENCH_READ_SHAPE
    for (const [label, op] of shapes) {
      if (only && !label.includes(only)) continue
      // Warm-up reads every document once: the first read after a write pays the document's encoding.
      for (let i = 0; i < 300; i++) await op()
      for (const d of docs) await coll.findOne({ _id: d._id as never })
      const before = { ...(server.stats.commandTimings.get('find') ?? { count: 0, totalMs: 0 }) }
      const start = performance.now()
      for (let i = 0; i < ops; i++) await op()
      const ms = performance.now() - start
      const after = server.stats.commandTimings.get('find') ?? { count: 0, totalMs: 0 }
      const serverUs = ((after.totalMs - before.totalMs) / (after.count - before.count)) * 1000
      console.log(`  ${label.padEnd(44)} ${perSecond(ms, ops)} ops/s   server CPU ${serverUs.toFixed(1)} µs/op`)
    }
  } finally {
    await client.close()
    await server.close()
  }
}

if (process.env.BENCH_READS_ONLY === '1') {
  await readShapes(Number(process.env.BENCH_READ_OPS ?? 5000))
  process.exit(0)
}

console.log(`embedded-mongo bench: ${OPS} insertOne + ${OPS} findOne by _id, alternating, sequential (concurrency 1), one client, Node ${process.version}`)
const memory = await embedded({ storage: 'memory' })
report('memory storage', memory)
const baseline = await driverBaseline()
report('driver-only baseline (stub server with canned replies)', baseline)

let disk: Awaited<ReturnType<typeof embedded>> | undefined
if (process.env.BENCH_READS !== '0') await readShapes(Number(process.env.BENCH_READ_OPS ?? 5000))

if (process.env.BENCH_DISK !== '0') {
  const dir = await mkdtemp(join(tmpdir(), 'embedded-mongo-bench-'))
  try {
    disk = await embedded({ storage: 'disk', dataDir: dir })
    report('disk storage (journal fsync before each insert is acknowledged)', disk)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

// Verdict. With disk storage an insert waits for fsync, so finds must be clearly faster end to end.
// With memory storage the server does little for either, and the driver's find path (cursor object,
// implicit-session bookkeeping) costs more than its insert path; the stub baseline measures exactly
// that. There the server must not make finds relatively slower than the driver alone does (10%
// allowance for measurement noise). The server CPU figures are printed for inspection only: they are
// a few tens of microseconds and easily disturbed by GC and by other load on the machine.
const ratio = (t: Timings): number => t.insertMs / t.findMs
const problems: string[] = []
if (ratio(memory) < ratio(baseline) * 0.9) {
  problems.push(`memory: find/insert ratio ${ratio(memory).toFixed(2)} is well below the driver-only ${ratio(baseline).toFixed(2)}`)
}
if (disk && ratio(disk) < 1) problems.push('disk: finds slower than inserts end to end')
console.log(`find/insert ratio: memory ${ratio(memory).toFixed(2)}, driver-only baseline ${ratio(baseline).toFixed(2)}${disk ? `, disk ${ratio(disk).toFixed(2)}` : ''}`)
if (problems.length > 0) {
  console.error(`FAIL: ${problems.join('; ')}`)
  process.exitCode = 1
}
