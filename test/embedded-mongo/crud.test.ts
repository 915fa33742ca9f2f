// Driver-level conformance: CRUD, value round trips, queries, sort/skip/limit/projection and cursors.
// Runs against the embedded server by default and unchanged against a real MongoDB (MONGODB_URI).
import t from 'tap'
import { Binary, Decimal128, Double, Long, MongoClient, ObjectId, UUID, type CommandStartedEvent } from 'mongodb'
import { startTestDatabase } from '../helpers/database.ts'

const { db, uri, dbName } = await startTestDatabase(t)

t.test('insertOne generates an ObjectId _id and findOne returns the document', async (t) => {
  const coll = db.collection('crud_basic')
  const res = await coll.insertOne({ name: 'alice', age: 30 })
  t.ok(res.insertedId instanceof ObjectId)
  const found = await coll.findOne({ _id: res.insertedId })
  t.same(found, { _id: res.insertedId, name: 'alice', age: 30 })
  t.equal(Object.keys(found!)[0], '_id', '_id is the first field')
  t.equal(await coll.findOne({ _id: new ObjectId() }), null)
})

t.test('_id is moved to the front when supplied later in the document', async (t) => {
  const coll = db.collection('crud_id_order')
  await coll.insertOne({ a: 1, _id: 'x' } as never)
  const doc = await coll.findOne({ _id: 'x' as never })
  t.same(Object.keys(doc!), ['_id', 'a'])
})

t.test('BSON values round-trip through the server', async (t) => {
  const coll = db.collection('crud_types')
  const oid = new ObjectId()
  const when = new Date('2024-05-06T07:08:09.123Z')
  const uuid = new UUID()
  const big = Long.fromString('9007199254740993')
  await coll.insertOne({
    _id: 'types',
    oid,
    when,
    int: 42,
    negative: -7,
    double: 1.5,
    wholeDouble: new Double(2),
    long: Long.fromNumber(5),
    big,
    dec: Decimal128.fromString('12.3400'),
    bin: new Binary(Buffer.from([1, 2, 3])),
    uuid,
    bool: false,
    nil: null,
    nested: { arr: [1, 'two', { three: 3 }], deep: { deeper: { x: 'y' } } },
    regex: /ab+c/i,
    empty: {},
    emptyArr: [],
  } as never)
  const doc = (await coll.findOne({ _id: 'types' as never }))!
  t.ok(doc.oid instanceof ObjectId && doc.oid.equals(oid), 'ObjectId')
  t.ok(doc.when instanceof Date && doc.when.getTime() === when.getTime(), 'Date')
  t.equal(doc.int, 42)
  t.equal(doc.negative, -7)
  t.equal(doc.double, 1.5)
  t.equal(doc.wholeDouble, 2, 'a whole double reads back as the same number')
  t.equal(doc.long, 5, 'a Long in the safe range reads back as the same number (promoteLongs)')
  t.equal(String(doc.big), '9007199254740993', 'a Long beyond 2^53 keeps its exact value')
  t.equal(doc.dec.toString(), '12.3400', 'Decimal128 keeps its digits')
  t.same([...doc.bin.buffer], [1, 2, 3], 'Binary bytes')
  t.equal(doc.uuid.toHexString(), uuid.toHexString(), 'UUID')
  t.equal(doc.bool, false)
  t.equal(doc.nil, null)
  t.same(doc.nested, { arr: [1, 'two', { three: 3 }], deep: { deeper: { x: 'y' } } })
  t.ok(doc.regex instanceof RegExp && doc.regex.source === 'ab+c' && doc.regex.flags === 'i', 'RegExp')
  t.same(doc.empty, {})
  t.same(doc.emptyArr, [])
  t.ok(await coll.findOne({ when }), 'query by Date equality')
  t.ok(await coll.findOne({ oid }), 'query by ObjectId equality')
  t.ok(await coll.findOne({ long: 5 }), 'numbers compare across int/long/double')
})

t.test('filters: comparison, logical, element, array and nested paths', async (t) => {
  const coll = db.collection('crud_filters')
  await coll.insertMany([
    { _id: 1, n: 5, tags: ['a', 'b'], profile: { city: 'Oslo', zip: 150 } },
    { _id: 2, n: 10, tags: ['b'], profile: { city: 'Bergen' } },
    { _id: 3, n: 15, tags: [], items: [{ sku: 'x', qty: 2 }, { sku: 'y', qty: 7 }] },
    { _id: 4, n: null },
    { _id: 5 },
  ] as never[])
  const ids = async (filter: object): Promise<unknown[]> =>
    (await coll.find(filter).sort({ _id: 1 }).toArray()).map((d) => d._id)
  t.same(await ids({ n: { $gt: 5, $lte: 15 } }), [2, 3])
  t.same(await ids({ n: { $in: [5, 15] } }), [1, 3])
  t.same(await ids({ n: { $nin: [5, 15] } }), [2, 4, 5])
  t.same(await ids({ n: null }), [4, 5], 'null matches missing fields too')
  t.same(await ids({ n: { $exists: false } }), [5])
  t.same(await ids({ $or: [{ n: 5 }, { 'profile.city': 'Bergen' }] }), [1, 2])
  t.same(await ids({ $and: [{ n: { $gte: 5 } }, { n: { $ne: 10 } }] }), [1, 3])
  t.same(await ids({ tags: 'b' }), [1, 2], 'array contains')
  t.same(await ids({ tags: ['b'] }), [2], 'whole-array equality')
  t.same(await ids({ tags: { $all: ['a', 'b'] } }), [1])
  t.same(await ids({ tags: { $size: 0 } }), [3])
  t.same(await ids({ 'profile.zip': { $gte: 100 } }), [1])
  t.same(await ids({ 'items.sku': 'y' }), [3], 'path through an array of documents')
  t.same(await ids({ items: { $elemMatch: { sku: 'x', qty: { $gt: 1 } } } }), [3])
  t.same(await ids({ n: { $type: 'number' } }), [1, 2, 3])
  t.same(await ids({ $expr: { $gt: ['$n', 9] } }), [2, 3])
})

t.test('regular expressions: literal, $regex with $options, inside $in', async (t) => {
  const coll = db.collection('crud_regex')
  await coll.insertMany([{ _id: 1, name: 'Alice' }, { _id: 2, name: 'alfred' }, { _id: 3, name: 'Bob' }] as never[])
  const ids = async (filter: object): Promise<unknown[]> =>
    (await coll.find(filter).sort({ _id: 1 }).toArray()).map((d) => d._id)
  t.same(await ids({ name: /^al/i }), [1, 2])
  t.same(await ids({ name: /^al/ }), [2])
  t.same(await ids({ name: { $regex: '^AL', $options: 'i' } }), [1, 2])
  t.same(await ids({ name: { $regex: /b$/ } }), [3])
  t.same(await ids({ name: { $in: [/^B/, 'alfred'] } }), [2, 3])
  t.same(await ids({ name: { $not: /^A/ } }), [2, 3])
  t.same(await ids({ name: { $regex: ' ^ a l  # starts with al', $options: 'xi' } }), [1, 2], 'extended syntax ignores whitespace and comments')
  // The driver sends a JS `g` flag as the BSON `s` option; matching must not become stateful.
  t.same(await ids({ name: /^a/gi }), [1, 2], 'every matching document is found')
  t.same(await ids({ name: { $in: [/^a/gi] } }), [1, 2], 'also through $in')
  const multi = db.collection('crud_regex_lines')
  await multi.insertMany([{ _id: 1, text: 'first\nsecond' }, { _id: 2, text: 'only one line' }] as never[])
  t.same((await multi.find({ text: { $regex: '^second', $options: 'm' } }).toArray()).map((d) => d._id), [1])
  t.same((await multi.find({ text: { $regex: 'first.second', $options: 's' } }).toArray()).map((d) => d._id), [1])
  t.same((await multi.find({ text: /first.second/g }).toArray()).map((d) => d._id), [1], 'BSON option s (sent for a JS g flag) lets . match a newline')
})

t.test('sort on several keys, nested paths and mixed types', async (t) => {
  const coll = db.collection('crud_sort')
  await coll.insertMany([
    { _id: 1, g: 'b', n: 2, meta: { rank: 3 } },
    { _id: 2, g: 'a', n: 2, meta: { rank: 1 } },
    { _id: 3, g: 'b', n: 1, meta: { rank: 2 } },
    { _id: 4, g: 'a', n: 3, meta: { rank: 4 } },
  ] as never[])
  const byGroupThenN = await coll.find({}).sort({ g: 1, n: -1 }).toArray()
  t.same(byGroupThenN.map((d) => d._id), [4, 2, 1, 3])
  const byNested = await coll.find({}).sort({ 'meta.rank': -1 }).toArray()
  t.same(byNested.map((d) => d._id), [4, 1, 3, 2])

  const mixed = db.collection('crud_sort_mixed')
  const oid = new ObjectId()
  await mixed.insertMany([
    { _id: 'date', v: new Date(0) },
    { _id: 'bool', v: true },
    { _id: 'oid', v: oid },
    { _id: 'obj', v: { a: 1 } },
    { _id: 'str', v: 'text' },
    { _id: 'num', v: 7 },
    { _id: 'null', v: null },
    { _id: 'missing' },
    { _id: 'neg', v: -1.5 },
  ] as never[])
  const order = (await mixed.find({}).sort({ v: 1 }).toArray()).map((d) => d._id)
  t.same(new Set(order.slice(0, 2)), new Set(['null', 'missing']), 'null and missing sort first, together')
  t.same(order.slice(2), ['neg', 'num', 'str', 'obj', 'oid', 'bool', 'date'], 'numbers < strings < objects < ObjectId < boolean < Date')
  const desc = (await mixed.find({ v: { $exists: true, $ne: null } }).sort({ v: -1 }).toArray()).map((d) => d._id)
  t.same(desc, ['date', 'bool', 'oid', 'obj', 'str', 'num', 'neg'])

  t.same((await coll.find({}).sort({ $natural: -1 }).toArray()).map((d) => d._id), [4, 3, 2, 1], '$natural: -1 is reverse insertion order')

  const arrays = db.collection('crud_sort_arrays')
  await arrays.insertMany([{ _id: 'x', v: [5, 1] }, { _id: 'y', v: [3] }, { _id: 'z', v: 2 }] as never[])
  t.same((await arrays.find().sort({ v: 1 }).toArray()).map((d) => d._id), ['x', 'z', 'y'], 'arrays sort by their smallest element ascending')
  t.same((await arrays.find().sort({ v: -1 }).toArray()).map((d) => d._id), ['x', 'y', 'z'], 'and by their largest element descending')
})

t.test('skip, limit and projection', async (t) => {
  const coll = db.collection('crud_paging')
  await coll.insertMany(Array.from({ length: 10 }, (_, i) => ({ _id: i, n: i, sq: i * i, sub: { a: i, b: -i } })) as never[])
  const page = await coll.find({}, { sort: { n: 1 }, skip: 3, limit: 4 }).toArray()
  t.same(page.map((d) => d._id), [3, 4, 5, 6])
  const included = await coll.find({ n: 2 }, { projection: { sq: 1 } }).toArray()
  t.same(included, [{ _id: 2, sq: 4 }])
  const noId = await coll.find({ n: 2 }, { projection: { sq: 1, _id: 0 } }).toArray()
  t.same(noId, [{ sq: 4 }])
  const excluded = await coll.find({ n: 2 }, { projection: { sub: 0, sq: 0 } }).toArray()
  t.same(excluded, [{ _id: 2, n: 2 }])
  const nested = await coll.find({ n: 2 }, { projection: { 'sub.a': 1, _id: 0 } }).toArray()
  t.same(nested, [{ sub: { a: 2 } }])
  const nestedExcluded = await coll.find({ n: 2 }, { projection: { 'sub.b': 0, _id: 0, sq: 0 } }).toArray()
  t.same(nestedExcluded, [{ n: 2, sub: { a: 2 } }])
  t.same((await coll.findOne({ n: 2 }))?.sub, { a: 2, b: -2 }, 'projections never alter stored documents')
  const sliced = await db.collection('crud_paging_arr').insertOne({ _id: 'arr', xs: [1, 2, 3, 4] } as never)
  t.ok(sliced.acknowledged)
  t.same(await db.collection('crud_paging_arr').findOne({}, { projection: { xs: { $slice: 2 } } }), { _id: 'arr', xs: [1, 2] })
  t.equal(await coll.countDocuments({}, { skip: 8 }), 2)
  t.equal(await coll.countDocuments({ n: { $gte: 2 } }, { limit: 3 }), 3)
})

t.test('cursors fetch in several batches with getMore and can be closed early', async (t) => {
  const coll = db.collection('crud_cursor')
  await coll.insertMany(Array.from({ length: 25 }, (_, i) => ({ _id: i })) as never[])
  const monitored = await MongoClient.connect(uri, { monitorCommands: true, serverSelectionTimeoutMS: 5000 })
  t.teardown(() => monitored.close())
  const events: CommandStartedEvent[] = []
  monitored.on('commandStarted', (e) => events.push(e))
  const mcoll = monitored.db(dbName).collection('crud_cursor')

  const all = await mcoll.find({}, { batchSize: 4 }).sort({ _id: 1 }).toArray()
  t.same(all.map((d) => d._id), Array.from({ length: 25 }, (_, i) => i))
  t.equal(events.filter((e) => e.commandName === 'getMore').length, 6, '25 documents in batches of 4: one find and six getMores')

  const limited = await mcoll.find({}, { batchSize: 2, limit: 5 }).toArray()
  t.equal(limited.length, 5, 'limit caps the total across batches')

  events.length = 0
  const cursor = mcoll.find({}, { batchSize: 3 })
  t.ok(await cursor.next())
  await cursor.close()
  t.equal(events.filter((e) => e.commandName === 'killCursors').length, 1, 'closing an open cursor kills it on the server')

  const agg = await mcoll.aggregate([{ $sort: { _id: -1 } }], { batchSize: 5 }).toArray()
  t.equal(agg.length, 25)
  t.equal(agg[0]._id, 24)
})

t.test('replace, delete one and delete many', async (t) => {
  const coll = db.collection('crud_delete')
  await coll.insertMany([{ _id: 1, k: 'a' }, { _id: 2, k: 'a' }, { _id: 3, k: 'b' }, { _id: 4, k: 'a' }] as never[])
  const replaced = await coll.replaceOne({ _id: 3 as never }, { k: 'c', extra: true })
  t.equal(replaced.matchedCount, 1)
  t.equal(replaced.modifiedCount, 1)
  t.same(await coll.findOne({ _id: 3 as never }), { _id: 3, k: 'c', extra: true })
  t.equal((await coll.deleteOne({ k: 'a' })).deletedCount, 1)
  t.equal((await coll.deleteMany({ k: 'a' })).deletedCount, 2)
  t.equal((await coll.deleteMany({ k: 'zzz' })).deletedCount, 0)
  t.same((await coll.find().toArray()).map((d) => d._id), [3])
})

t.test('operations on a collection that does not exist', async (t) => {
  const coll = db.collection('crud_never_created')
  t.same(await coll.find({ a: 1 }).toArray(), [])
  t.equal(await coll.countDocuments(), 0)
  t.equal(await coll.estimatedDocumentCount(), 0)
  t.equal((await coll.deleteMany({})).deletedCount, 0)
  t.equal((await coll.updateMany({}, { $set: { a: 1 } })).matchedCount, 0)
  t.same(await coll.distinct('a'), [])
})
