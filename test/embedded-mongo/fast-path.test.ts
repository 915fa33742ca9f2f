// Embedded-server-only: the read fast paths. Plain equality filters (`{_id, owner_id}`) are checked
// without compiling a mingo query, and finds send stored documents as their cached BSON. Both must give
// exactly the answers of the general path, which these tests compare against.
import t from 'tap'
import fc from 'fast-check'
import { runs as scaledRuns } from '../helpers/seed.ts'
import { BSON, Double, Int32, Long, MongoClient, ObjectId, type Document } from 'mongodb'
import { encodeStoredBatchReply, STORED_BATCH, type CursorReplyDoc } from '../../src/embedded-mongo/encoded-docs.ts'
import { matchesEqualities, plainEqualities } from '../../src/embedded-mongo/equality-match.ts'
import { fastProjector } from '../../src/embedded-mongo/fast-projection.ts'
import { compileFilter, mingoOptions, Query } from '../../src/embedded-mongo/mingo-context.ts'
import { makeProjector } from '../../src/embedded-mongo/query-exec.ts'
import { startEmbeddedMongoServer } from '../../src/embedded-mongo/server.ts'
import { DESERIALIZE_OPTIONS } from '../../src/embedded-mongo/bson-options.ts'
import type { Doc } from '../../src/embedded-mongo/values.ts'

const server = await startEmbeddedMongoServer({ storage: 'memory' })
t.teardown(() => server.close())
const client = await MongoClient.connect(server.uri)
t.teardown(() => client.close())
const db = client.db('fastpath')

// A small pool of values so random documents and queries collide often, with the type pairs that
// MongoDB's equality treats specially: 5 vs 5.0 vs -0/0, an ObjectId vs its hex string, Dates, null.
const oid = new ObjectId('64b7f0c2a1b2c3d4e5f60718')
const scalarValue = fc.constantFrom<unknown>(
  0, -0, 5, 5.5, -1, 'a', 'b', '', '5', oid.toHexString(), oid, new ObjectId('64b7f0c2a1b2c3d4e5f60719'),
  true, false, null, new Date(0), new Date(5), Number.NaN,
)
const storedValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: scalarValue },
  { weight: 2, arbitrary: fc.array(scalarValue, { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.array(fc.array(scalarValue, { maxLength: 2 }), { maxLength: 2 }) },
  { weight: 1, arbitrary: fc.record({ x: scalarValue }) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(undefined, new Long(5), new Int32(5), new Double(5), /a/, { $x: 1 }) },
)
const FIELDS = ['_id', 'a', 'b', 'owner_id'] as const
const storedDoc = fc.record(
  { a: storedValue, b: storedValue, owner_id: storedValue },
  { requiredKeys: [] },
).map((d) => ({ _id: 1, ...d }) as Doc)
const query = fc.uniqueArray(fc.constantFrom(...FIELDS), { minLength: 1, maxLength: 3 })
  .chain((fields) => fc.tuple(...fields.map((f) => scalarValue.map((v) => [f, v] as const))))
  .map((pairs) => Object.fromEntries(pairs) as Doc)

t.test('the direct equality check agrees with mingo wherever it decides, over random documents and queries', async (t) => {
  let decided = 0
  let runs = 0
  fc.assert(fc.property(storedDoc, query, (doc, q) => {
    runs++
    const eqs = plainEqualities(q)
    if (!eqs) return true
    const fast = matchesEqualities(doc, eqs)
    if (fast === undefined) return true
    decided++
    return fast === compileFilter(q).test(doc)
  }), { numRuns: scaledRuns(5000) })
  // The check must actually decide most cases, or the fast path would be a no-op.
  t.ok(decided > runs / 2, `decided ${decided} of ${runs} cases`)
})

t.test('plain equality filters only: operators, dotted paths, documents and arrays are not taken', async (t) => {
  t.ok(plainEqualities({ _id: oid, owner_id: 'u1' }))
  t.ok(plainEqualities({ a: null, b: new Date(0), c: true, d: 5 }))
  for (const q of [{}, { a: { $gt: 1 } }, { 'a.b': 1 }, { $or: [{ a: 1 }] }, { a: { x: 1 } }, { a: [1] }, { a: /x/ }, { a: new Long(5) }, { a: Number.NaN }]) {
    t.equal(plainEqualities(q as Doc), undefined, JSON.stringify(q))
  }
})

// Through the server: a filter wrapped in `$and` takes the general (mingo) path, the bare filter the
// fast one; both must find the same documents.
const edge = db.collection('edge')

async function both(filter: Document): Promise<{ fast: unknown[]; general: unknown[] }> {
  const ids = async (f: Document): Promise<unknown[]> => (await edge.find(f).sort({ _id: 1 }).toArray()).map((d) => d._id)
  return { fast: await ids(filter), general: await ids({ $and: [filter] }) }
}

t.test('MongoDB equality edge cases give the same documents on the fast and the general path', async (t) => {
  await edge.insertMany([
    { _id: 1 as never, owner_id: 'u1', n: new Int32(5) },
    { _id: 2 as never, owner_id: 'u1', n: new Double(5) },
    { _id: 3 as never, owner_id: 'u1', n: Long.fromNumber(5) },
    { _id: 4 as never, owner_id: oid.toHexString(), n: 5.5 },
    { _id: 5 as never, owner_id: oid, n: null },
    { _id: 6 as never, owner_id: ['u1', 'u2'], n: [5, 6] },
    { _id: 7 as never, owner_id: [['u1']] },
    { _id: 8 as never, owner_id: 'u2', n: [] },
    { _id: 9 as never, owner_id: 'u2', n: [null] },
    { _id: 10 as never, owner_id: { id: 'u1' }, n: -0 },
  ])
  await edge.createIndex({ owner_id: 1 })
  const cases: Array<[string, Document, unknown[]]> = [
    ['numbers of different BSON types compare equal', { n: 5 }, [1, 2, 3, 6]],
    ['int, long and double 5 by _id and value', { _id: 3, n: new Double(5) }, [3]],
    ['a hex string does not equal the ObjectId', { owner_id: oid.toHexString() }, [4]],
    ['an ObjectId does not equal its hex string', { owner_id: oid }, [5]],
    ['arrays match any element', { owner_id: 'u1' }, [1, 2, 3, 6]],
    ['arrays match one level deep only', { _id: 7, owner_id: 'u1' }, []],
    ['null matches missing and null (and arrays holding null)', { n: null }, [5, 7, 9]],
    ['an embedded document does not equal a scalar', { _id: 10, owner_id: 'u1' }, []],
    ['-0 equals 0', { n: 0 }, [10]],
    ['_id with an owner that differs', { _id: 1, owner_id: 'u2' }, []],
    ['_id with its owner', { _id: 6, owner_id: 'u2' }, [6]],
  ]
  for (const [name, filter, expected] of cases) {
    const { fast, general } = await both(filter)
    t.same(fast, expected, `${name} (fast path)`)
    t.same(general, expected, `${name} (general path)`)
  }
})

t.test('random queries over random documents: the fast path returns what the general path returns', async (t) => {
  const coll = db.collection('random')
  const docs = fc.sample(storedDoc, { numRuns: 60, seed: 42 }).map((d, i) => {
    // undefined cannot be stored; the driver would drop it anyway.
    const clean = Object.fromEntries(Object.entries(d).filter(([, v]) => v !== undefined))
    return { ...clean, _id: i }
  })
  await coll.insertMany(docs as never[])
  await coll.createIndex({ a: 1 })
  let nonEmpty = 0
  await fc.assert(fc.asyncProperty(query, async (q) => {
    if (Number.isNaN(q._id)) delete q._id
    if (Object.keys(q).length === 0) return true
    const ids = async (f: Document): Promise<unknown[]> => (await coll.find(f).sort({ _id: 1 }).toArray()).map((d) => d._id)
    const fast = await ids(q)
    if (fast.length > 0) nonEmpty++
    t.same(fast, await ids({ $and: [q] }), JSON.stringify(q))
  }), { numRuns: scaledRuns(150) })
  t.ok(nonEmpty > 10, `${nonEmpty} queries matched something`)
})

t.test('the fast path is taken: no filter is compiled and only the candidate is examined', async (t) => {
  const wf = db.collection('workflows')
  const ids = Array.from({ length: 50 }, () => new ObjectId())
  await wf.insertMany(ids.map((_id, i) => ({ _id, owner_id: `u${i % 5}`, email: `w${i}@x`, name: `wf ${i}` })))
  await wf.createIndex({ email: 1 }, { unique: true })
  const cost = async (fn: () => Promise<unknown>): Promise<{ compiled: number; examined: number }> => {
    const before = { compiled: server.stats.filtersCompiled, examined: server.stats.docsExamined }
    await fn()
    return { compiled: server.stats.filtersCompiled - before.compiled, examined: server.stats.docsExamined - before.examined }
  }
  t.same(await cost(() => wf.findOne({ _id: ids[7], owner_id: 'u2' })), { compiled: 0, examined: 1 }, '{_id, owner_id}')
  t.same(await cost(() => wf.findOne({ _id: ids[7], owner_id: 'u3' })), { compiled: 0, examined: 1 }, '{_id, other owner}')
  t.same(await cost(() => wf.findOne({ email: 'w9@x' })), { compiled: 0, examined: 1 }, 'unique indexed field')
  t.same(await cost(() => wf.findOne({ email: 'w9@x', owner_id: 'u4' })), { compiled: 0, examined: 1 }, 'indexed field with another condition')
  t.same(await cost(() => wf.updateOne({ _id: ids[8], owner_id: 'u3' }, { $set: { name: 'renamed' } })), { compiled: 0, examined: 1 }, 'update by {_id, owner_id}')
  t.equal((await wf.findOne({ _id: ids[8], owner_id: 'u3' }))?.name, 'renamed', 'the read after the update sees it')
  t.same(await cost(() => wf.findOne({ _id: ids[7], name: { $ne: 'x' } })), { compiled: 1, examined: 1 }, 'an operator takes the general path')
  t.same(await cost(() => wf.findOne({ _id: ids[7], 'a.b': 1 })), { compiled: 1, examined: 1 }, 'a dotted path takes the general path')
})

t.test('finds send stored documents byte-for-byte as a full re-encode would', async (t) => {
  fc.assert(fc.property(fc.array(storedDoc, { maxLength: 5 }), fc.boolean(), (docs, first) => {
    const stored = docs.map((d, i) => BSON.deserialize(BSON.serialize({ ...d, _id: i }), DESERIALIZE_OPTIONS))
    const cursor = first ? { firstBatch: stored, id: Long.fromNumber(12345), ns: 'db.c' } : { nextBatch: stored, id: Long.ZERO, ns: 'db.c' }
    const reply: CursorReplyDoc = { cursor, ok: 1, [STORED_BATCH]: true }
    return Buffer.from(BSON.serialize(reply, { ignoreUndefined: true })).equals(encodeStoredBatchReply(reply))
  }), { numRuns: scaledRuns(300) })
  t.pass('300 random replies encoded identically')
})

t.test('stored encodings follow updates and cursors: getMore batches, replacements and deletes', async (t) => {
  const coll = db.collection('batches')
  await coll.insertMany(Array.from({ length: 7 }, (_, i) => ({ _id: i as never, body: 'x'.repeat(1000 * i), v: 1 })))
  const read = async (): Promise<Document[]> => coll.find({}, { batchSize: 2 }).sort({ _id: 1 }).toArray()
  t.same((await read()).map((d) => [d._id, d.body.length, d.v]), Array.from({ length: 7 }, (_, i) => [i, 1000 * i, 1]))
  await coll.updateMany({ _id: { $in: [1, 4] } as never }, { $set: { v: 2 } })
  await coll.replaceOne({ _id: 5 as never }, { body: 'short', v: 3 })
  await coll.deleteOne({ _id: 6 as never })
  t.same((await read()).map((d) => [d._id, d.v]), [[0, 1], [1, 2], [2, 1], [3, 1], [4, 2], [5, 3]])
  t.same(await coll.findOne({ _id: 5 as never }), { _id: 5, body: 'short', v: 3 })
  t.same(await coll.findOne({ _id: 4 as never }, { projection: { v: 1 } }), { _id: 4, v: 2 }, 'a projection still applies')
})

t.test('the direct projection gives the fields and values mingo\'s projection gives, over random documents and projections', async (t) => {
  const value = fc.oneof(storedValue, fc.array(fc.record({ type: scalarValue, id: scalarValue }, { requiredKeys: [] }), { maxLength: 3 }))
  const doc = fc.record({ _id: fc.integer(), a: value, b: value, nodes: value, c: value }, { requiredKeys: ['_id'] })
  const computed = fc.constantFrom<unknown>(
    { $size: { $ifNull: ['$nodes', []] } },
    { $setUnion: [{ $ifNull: ['$nodes.type', []] }, []] },
    { $ifNull: ['$a', 'none'] },
    { $concat: ['x', 'y'] },
    { $toString: '$_id' },
  )
  const projection = fc.uniqueArray(fc.constantFrom('_id', 'a', 'b', 'c', 'missing', 'count', 'types'), { minLength: 1, maxLength: 5 })
    .chain((fields) => fc.tuple(...fields.map((f) => fc.oneof(fc.constant<unknown>(1), fc.constant<unknown>(true), computed, fc.constant<unknown>(0)).map((v) => [f, v] as const))))
    .map((pairs) => Object.fromEntries(pairs) as Doc)
  let fastTaken = 0
  fc.assert(fc.property(fc.array(doc, { minLength: 1, maxLength: 3 }), projection, (docs, spec) => {
    const stored = docs.map((d) => BSON.deserialize(BSON.serialize(d, { ignoreUndefined: true }), DESERIALIZE_OPTIONS))
    let expected: Doc[]
    try {
      expected = new Query({}, mingoOptions()).find(stored, spec).all() as Doc[]
    } catch {
      return true // mixing inclusion and exclusion: mingo refuses, and so does the fast path's caller
    }
    if (fastProjector(spec)) fastTaken++
    const actual = makeProjector({}, spec)?.(stored) ?? stored
    // Same fields and values; the order is MongoDB's (document order, then computed fields), not mingo's.
    const sorted = (d: Doc): Doc => Object.fromEntries(Object.entries(d).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    const bytes = (ds: Doc[]): Buffer => Buffer.from(BSON.serialize({ ds: ds.map(sorted) }, { ignoreUndefined: true }))
    return bytes(actual).equals(bytes(expected))
  }), { numRuns: scaledRuns(3000) })
  t.ok(fastTaken > 500, `the direct projection was taken ${fastTaken} times`)
})

t.test('countDocuments\' pipeline is answered by counting the matched documents, as mingo\'s $group answers it', async (t) => {
  const coll = db.collection('counts')
  const docs = fc.sample(storedDoc, { numRuns: 80, seed: 7 }).map((d, i) => ({ ...Object.fromEntries(Object.entries(d).filter(([, v]) => v !== undefined)), _id: i }))
  await coll.insertMany(docs as never[])
  // Compound, so {owner_id} equalities go through its first field's entries (arrays in one key only: no parallel arrays).
  await coll.createIndex({ owner_id: 1, _id: -1 })
  const shortcuts = () => server.stats.countShortcuts
  // `$sum: {$literal: 1}` is the same count in a shape the shortcut does not take.
  const general = async (pipeline: Document[], field = 'n', id: unknown = 1) =>
    coll.aggregate([...pipeline, { $group: { _id: id, [field]: { $sum: { $literal: 1 } } } }]).toArray()
  let taken = 0
  let nonZero = 0
  // Random equalities mostly match nothing; an empty filter now and then gives skip and limit something to cut.
  const countQuery = fc.oneof({ weight: 3, arbitrary: query }, { weight: 1, arbitrary: fc.constant<Doc>({}) })
  await fc.assert(fc.asyncProperty(countQuery, fc.option(fc.nat(3)), fc.option(fc.integer({ min: 1, max: 90 })), async (q, skip, limit) => {
    q = { ...q }
    if (Number.isNaN(q._id)) delete q._id
    const before = shortcuts()
    const counted = await coll.countDocuments(q, { ...(skip !== null && { skip }), ...(limit !== null && { limit }) })
    taken += shortcuts() - before
    const stages = [{ $match: q }, ...(skip ? [{ $skip: skip }] : []), ...(limit ? [{ $limit: limit }] : [])]
    const expected = (await general(stages))[0]?.n ?? 0
    if (expected > 0) nonZero++
    t.equal(counted, expected, JSON.stringify({ q, skip, limit }))
  }), { numRuns: scaledRuns(150) })
  t.equal(taken, 150, 'every countDocuments took the shortcut')
  t.ok(nonZero > 20, `${nonZero} counts were not zero`)
  for (const id of [1, null, 'all', true, 2.5]) {
    const before = shortcuts()
    const raw = await coll.aggregate([{ $match: { owner_id: 'a' } }, { $group: { _id: id, total: { $sum: 1 } } }]).toArray()
    t.equal(shortcuts() - before, 1, `group _id ${JSON.stringify(id)} is taken`)
    t.same(raw, await general([{ $match: { owner_id: 'a' } }], 'total', id), `group _id ${JSON.stringify(id)}`)
  }
  t.same(await coll.aggregate([{ $match: { owner_id: 'no such' } }, { $group: { _id: 1, n: { $sum: 1 } } }]).toArray(), [], 'nothing matched: no group')
})

t.test('pipelines that only resemble a count run through mingo', async (t) => {
  const coll = db.collection('counts')
  const notTaken: Document[][] = [
    [{ $match: {} }, { $group: { _id: 1, n: { $sum: 2 } } }],
    [{ $match: {} }, { $group: { _id: '$owner_id', n: { $sum: 1 } } }],
    [{ $match: {} }, { $group: { _id: 1, n: { $sum: 1 }, m: { $sum: 1 } } }],
    [{ $match: {} }, { $limit: 3 }, { $skip: 1 }, { $group: { _id: 1, n: { $sum: 1 } } }],
    [{ $match: {} }, { $skip: 1.5 }, { $group: { _id: 1, n: { $sum: 1 } } }],
    // MongoDB refuses a $limit of 0; whatever the general path answers, the shortcut does not decide it.
    [{ $match: {} }, { $limit: 0 }, { $group: { _id: 1, n: { $sum: 1 } } }],
    [{ $group: { _id: 1, n: { $sum: 1 } } }],
    [{ $match: {} }, { $group: { _id: { $literal: 1 }, n: { $sum: 1 } } }],
    [{ $match: {} }, { $sort: { _id: 1 } }, { $group: { _id: 1, n: { $sum: 1 } } }],
  ]
  for (const pipeline of notTaken) {
    const before = server.stats.countShortcuts
    await coll.aggregate(pipeline).toArray().catch(() => [])
    t.equal(server.stats.countShortcuts, before, JSON.stringify(pipeline))
  }
  const before = server.stats.countShortcuts
  t.same(await coll.aggregate([{ $match: {} }, { $group: { _id: 1, n: { $sum: 1 } } }]).toArray(), [{ _id: 1, n: 80 }], 'an empty $match counts everything')
  t.equal(server.stats.countShortcuts - before, 1)
})
