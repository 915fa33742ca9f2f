// Embedded-server-only tests of the wire protocol and error handling: unsupported commands, legacy
// OP_QUERY handshake, malformed and oversized frames, document sequences, moreToCome, concurrency.
import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import t from 'tap'
import { BSON, MongoClient, MongoServerError, type Document } from 'mongodb'
import { startEmbeddedMongoServer } from '../../src/embedded-mongo/server.ts'
import { MAX_MESSAGE_BYTES } from '../../src/embedded-mongo/wire.ts'

// A minimal raw-socket wire client for what the driver cannot express (legacy OP_QUERY, malformed
// frames, document sequences, moreToCome).
const OP_REPLY = 1
const OP_QUERY = 2004
const OP_MSG = 2013

let requestIds = 1000

function withHeader(body: Buffer, opCode: number, requestId = requestIds++): Buffer {
  const header = Buffer.alloc(16)
  header.writeInt32LE(16 + body.length, 0)
  header.writeInt32LE(requestId, 4)
  header.writeInt32LE(0, 8)
  header.writeInt32LE(opCode, 12)
  return Buffer.concat([header, body])
}

function opMsg(body: Document, opts: { flags?: number; sequences?: Record<string, Document[]>; checksum?: boolean } = {}): Buffer {
  const parts: Buffer[] = []
  const flags = Buffer.alloc(4)
  flags.writeUInt32LE((opts.flags ?? 0) | (opts.checksum ? 1 : 0), 0)
  parts.push(flags, Buffer.from([0]), Buffer.from(BSON.serialize(body)))
  for (const [id, docs] of Object.entries(opts.sequences ?? {})) {
    const payload = Buffer.concat([Buffer.from(id + '\0'), ...docs.map((d) => Buffer.from(BSON.serialize(d)))])
    const size = Buffer.alloc(4)
    size.writeInt32LE(4 + payload.length, 0)
    parts.push(Buffer.from([1]), size, payload)
  }
  if (opts.checksum) parts.push(Buffer.alloc(4)) // value is not checked by the server
  return withHeader(Buffer.concat(parts), OP_MSG)
}

function opQuery(collection: string, query: Document): Buffer {
  const flags = Buffer.alloc(4)
  const name = Buffer.from(collection + '\0')
  const skipReturn = Buffer.alloc(8)
  skipReturn.writeInt32LE(0, 0)
  skipReturn.writeInt32LE(-1, 4)
  return withHeader(Buffer.concat([flags, name, skipReturn, Buffer.from(BSON.serialize(query))]), OP_QUERY)
}

interface Reply {
  opCode: number
  responseTo: number
  flags: number
  doc: Document
}

/** A socket that hands out complete replies in arrival order. */
class RawClient {
  readonly socket: Socket
  private buffer = Buffer.alloc(0)
  private readonly replies: Reply[] = []
  private waiter: (() => void) | undefined
  closed = false

  private constructor(socket: Socket) {
    this.socket = socket
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk])
      while (this.buffer.length >= 4 && this.buffer.length >= this.buffer.readInt32LE(0)) {
        const len = this.buffer.readInt32LE(0)
        this.replies.push(parseReply(this.buffer.subarray(0, len)))
        this.buffer = this.buffer.subarray(len)
      }
      this.waiter?.()
    })
    socket.on('close', () => {
      this.closed = true
      this.waiter?.()
    })
    socket.on('error', () => undefined)
  }

  static async connect(socketPath: string): Promise<RawClient> {
    const socket = connect(socketPath)
    await once(socket, 'connect')
    return new RawClient(socket)
  }

  send(data: Buffer): Promise<void> {
    return new Promise((resolve, reject) => this.socket.write(data, (err) => (err ? reject(err) : resolve())))
  }

  /** Next reply, or undefined if the server closed the connection first. */
  async next(): Promise<Reply | undefined> {
    while (this.replies.length === 0 && !this.closed) {
      await new Promise<void>((resolve) => { this.waiter = resolve })
      this.waiter = undefined
    }
    return this.replies.shift()
  }

  async request(data: Buffer): Promise<Reply | undefined> {
    await this.send(data)
    return this.next()
  }

  /** Resolves once the server has closed this connection. */
  async closedByServer(): Promise<void> {
    if (this.closed) return
    await once(this.socket, 'close')
  }

  destroy(): void {
    this.socket.destroy()
  }
}

function parseReply(buf: Buffer): Reply {
  const opCode = buf.readInt32LE(12)
  const responseTo = buf.readInt32LE(8)
  if (opCode === OP_MSG) {
    return { opCode, responseTo, flags: buf.readUInt32LE(16), doc: BSON.deserialize(buf.subarray(21)) }
  }
  if (opCode === OP_REPLY) {
    return { opCode, responseTo, flags: buf.readInt32LE(16), doc: BSON.deserialize(buf.subarray(36)) }
  }
  throw new Error(`unexpected reply opCode ${opCode}`)
}

const warnings: string[] = []
const server = await startEmbeddedMongoServer({
  storage: 'memory',
  logger: { info: () => undefined, warn: (m) => warnings.push(m), error: (m) => warnings.push(m) },
})
t.teardown(() => server.close())
const client = await MongoClient.connect(server.uri, { serverSelectionTimeoutMS: 5000 })
t.teardown(() => client.close())
const db = client.db('protocol')

t.test('an unsupported command answers CommandNotFound naming it, and the connection keeps working', async (t) => {
  const err = await db.command({ frobnicate: 1 }).catch((e: unknown) => e)
  t.ok(err instanceof MongoServerError)
  const e = err as MongoServerError
  t.equal(e.code, 59)
  t.equal(e.codeName, 'CommandNotFound')
  t.equal(e.message, "no such command: 'frobnicate'")
  t.equal((await db.command({ ping: 1 })).ok, 1)
})

t.test('bad arguments and refused features produce error replies, not dropped sockets', async (t) => {
  await t.rejects(db.command({ find: 'x', filter: 'not an object' }), { code: 14 })
  await t.rejects(db.collection('x').find({ $bogusOperator: 1 }).toArray(), MongoServerError)
  await t.rejects(db.collection('x').find({ a: { $regex: '(' } }).toArray(), MongoServerError, 'invalid regex')
  const out = await db.collection('x').aggregate([{ $match: {} }, { $out: 'y' }]).toArray().catch((e: unknown) => e)
  t.ok(out instanceof MongoServerError)
  t.match((out as MongoServerError).message, /\$out is not supported/)
  await t.rejects(db.createCollection('capped', { capped: true, size: 1024 }), /capped/)
  await t.rejects(db.collection('x').createIndex({ body: 'text' }), /not supported/)
  await t.rejects(db.collection('x').find({ a: 'A' }, { collation: { locale: 'en', strength: 2 } }).toArray(), /collation is not supported/)
  await t.rejects(db.collection('x').updateOne({ a: 1 }, { $set: { b: 1 } }, { collation: { locale: 'fr' } }), /collation is not supported/)
  t.equal((await db.command({ ping: 1 })).ok, 1, 'still connected')
})

t.test('an update that would grow a document past 16 MiB is refused and changes nothing', async (t) => {
  const coll = db.collection('big')
  const nineMiB = 'x'.repeat(9 * 1024 * 1024)
  await coll.insertOne({ _id: 'big' as never, a: nineMiB })
  await t.rejects(coll.updateOne({ _id: 'big' as never }, { $set: { b: nineMiB } }), { code: 10334 })
  const doc = await coll.findOne({ _id: 'big' as never }, { projection: { a: 0 } })
  t.same(doc, { _id: 'big' })
  await coll.drop()
})

t.test('hello reply has the fields the driver relies on', async (t) => {
  const hello = await db.admin().command({ hello: 1, helloOk: true })
  t.equal(hello.isWritablePrimary, true)
  t.equal(hello.helloOk, true)
  t.equal(hello.maxBsonObjectSize, 16 * 1024 * 1024)
  t.equal(hello.maxMessageSizeBytes, 48_000_000)
  t.equal(hello.maxWriteBatchSize, 100_000)
  t.equal(hello.logicalSessionTimeoutMinutes, 30)
  t.equal(hello.minWireVersion, 0)
  t.equal(hello.maxWireVersion, 21)
  t.equal(hello.readOnly, false)
  t.ok(hello.localTime instanceof Date)
  t.type(hello.connectionId, 'number')
  t.notOk('compression' in hello, 'compression is not advertised')
})

t.test('legacy OP_QUERY isMaster on admin.$cmd gets an OP_REPLY', async (t) => {
  const raw = await RawClient.connect(server.socketPath!)
  t.teardown(() => raw.destroy())
  const reply = await raw.request(opQuery('admin.$cmd', { isMaster: 1 }))
  t.equal(reply?.opCode, OP_REPLY)
  t.equal(reply?.doc.ismaster, true)
  t.equal(reply?.doc.maxWireVersion, 21)
  t.equal(reply?.doc.ok, 1)
  const hello = await raw.request(opQuery('admin.$cmd', { $query: { hello: 1 } }))
  t.equal(hello?.doc.isWritablePrimary, true, 'a $query-wrapped hello works too')
  const refused = await raw.request(opQuery('app.$cmd', { find: 'things' }))
  t.equal(refused?.flags, 2, 'other OP_QUERY commands fail with QueryFailure')
  t.equal(refused?.doc.code, 352)
  const msg = await raw.request(opMsg({ ping: 1, $db: 'admin' }))
  t.equal(msg?.opCode, OP_MSG, 'the same connection continues with OP_MSG')
  t.equal(msg?.doc.ok, 1)
})

t.test('OP_MSG document sequences, checksum flag and moreToCome', async (t) => {
  const raw = await RawClient.connect(server.socketPath!)
  t.teardown(() => raw.destroy())
  const inserted = await raw.request(opMsg({ insert: 'seq', $db: 'protocol' }, { sequences: { documents: [{ _id: 1 }, { _id: 2 }] } }))
  t.equal(inserted?.doc.n, 2, 'kind 1 section supplies the documents')
  const withChecksum = await raw.request(opMsg({ count: 'seq', $db: 'protocol' }, { checksum: true }))
  t.equal(withChecksum?.doc.n, 2, 'a trailing checksum is accepted')
  await raw.send(opMsg({ insert: 'seq', documents: [{ _id: 3 }], $db: 'protocol' }, { flags: 2 }))
  const after = await raw.request(opMsg({ count: 'seq', $db: 'protocol' }))
  t.equal(after?.doc.n, 3, 'the moreToCome insert got no reply but ran before the next command')
  const noDb = await raw.request(opMsg({ ping: 1 }))
  t.equal(noDb?.doc.ok, 0, 'a command without $db is an error reply')
})

t.test('a message split across many TCP writes is reassembled', async (t) => {
  const raw = await RawClient.connect(server.socketPath!)
  t.teardown(() => raw.destroy())
  const msg = opMsg({ ping: 1, $db: 'admin' })
  for (let i = 0; i < msg.length; i += 3) await raw.send(msg.subarray(i, i + 3))
  t.equal((await raw.next())?.doc.ok, 1)
  const two = Buffer.concat([opMsg({ ping: 1, $db: 'admin' }), opMsg({ count: 'seq', $db: 'protocol' })])
  await raw.send(two)
  t.equal((await raw.next())?.doc.ok, 1)
  t.equal((await raw.next())?.doc.n, 3, 'two messages in one write are both answered, in order')
})

t.test('malformed or oversized frames close only that socket', async (t) => {
  const cases: Array<[string, Buffer]> = []
  const tooSmall = Buffer.alloc(16)
  tooSmall.writeInt32LE(10, 0)
  cases.push(['length below the header size', tooSmall])
  const tooBig = Buffer.alloc(16)
  tooBig.writeInt32LE(MAX_MESSAGE_BYTES + 1, 0)
  tooBig.writeInt32LE(2013, 12)
  cases.push(['length above maxMessageSizeBytes', tooBig])
  const badBson = opMsg({ ping: 1, $db: 'admin' })
  badBson.writeInt32LE(1000, 21) // inner document claims more bytes than the message has
  cases.push(['BSON document size mismatch', badBson])
  const badOpcode = opMsg({ ping: 1, $db: 'admin' })
  badOpcode.writeInt32LE(9999, 12)
  cases.push(['unknown opCode', badOpcode])
  const badFlags = opMsg({ ping: 1, $db: 'admin' })
  badFlags.writeUInt32LE(1 << 5, 16)
  cases.push(['unknown required flag bit', badFlags])
  const badSection = opMsg({ ping: 1, $db: 'admin' })
  badSection[20] = 7
  cases.push(['unknown section kind', badSection])

  for (const [name, frame] of cases) {
    const raw = await RawClient.connect(server.socketPath!)
    await raw.send(frame).catch(() => undefined)
    await raw.closedByServer()
    t.ok(raw.closed, `${name}: connection closed`)
    t.equal((await db.command({ ping: 1 })).ok, 1, `${name}: other connections unaffected`)
  }
  const fresh = await RawClient.connect(server.socketPath!)
  t.equal((await fresh.request(opMsg({ ping: 1, $db: 'admin' })))?.doc.ok, 1, 'the server still accepts new connections')
  fresh.destroy()
  t.ok(warnings.some((w) => /closing connection/.test(w)), 'closures are logged as warnings')
})

t.test('many concurrent clients and operations', async (t) => {
  const clients = await Promise.all(Array.from({ length: 4 }, () => MongoClient.connect(server.uri, { maxPoolSize: 5 })))
  t.teardown(() => Promise.all(clients.map((c) => c.close())))
  await Promise.all(clients.map((c, ci) => Promise.all(Array.from({ length: 50 }, async (_, i) => {
    const coll = c.db('protocol').collection('concurrent')
    await coll.insertOne({ _id: `${ci}-${i}` as never, ci, i })
    const doc = await coll.findOne({ _id: `${ci}-${i}` as never })
    if (doc?.i !== i) throw new Error('read-your-write failed')
    await coll.updateOne({ _id: `${ci}-${i}` as never }, { $inc: { hits: 1 } })
  }))))
  const coll = db.collection('concurrent')
  t.equal(await coll.countDocuments(), 200)
  t.equal(await coll.countDocuments({ hits: 1 }), 200)
  const counter = db.collection('counter')
  await Promise.all(clients.flatMap((c) => Array.from({ length: 25 }, () =>
    c.db('protocol').collection('counter').updateOne({ _id: 'n' as never }, { $inc: { v: 1 } }, { upsert: true }).catch(() => undefined))))
  const n = await counter.findOne({ _id: 'n' as never })
  t.ok((n?.v as number) >= 99, 'concurrent $inc are not lost (one racing upsert may lose to a duplicate key)')
})

t.test('close() stops the listener and drops connections', async (t) => {
  const other = await startEmbeddedMongoServer({ storage: 'memory' })
  const c = await MongoClient.connect(other.uri, { serverSelectionTimeoutMS: 1000 })
  await c.db('x').collection('y').insertOne({ a: 1 })
  t.ok(other.openConnections() > 0)
  await other.close()
  t.equal(other.openConnections(), 0)
  const socket = connect(other.socketPath!)
  const [err] = (await once(socket, 'error')) as [NodeJS.ErrnoException]
  t.equal(err.code, 'ENOENT', 'the socket (and its directory) are gone')
  await c.close()
  await other.close()
  t.pass('close is idempotent')
})
