// Driver-level conformance: index management, unique constraints and TTL expiry.
// Runs against the embedded server by default and unchanged against a real MongoDB (MONGODB_URI).
import { setTimeout as delay } from 'node:timers/promises'
import t from 'tap'
import { MongoBulkWriteError, MongoServerError, type Collection } from 'mongodb'
import { startTestDatabase } from '../helpers/database.ts'

const { db, dbName } = await startTestDatabase(t)

async function duplicateError(p: Promise<unknown>): Promise<MongoServerError> {
  const err = await p.then(() => undefined, (e: unknown) => e)
  if (!(err instanceof MongoServerError)) throw new Error(`expected a MongoServerError, got ${String(err)}`)
  return err
}

t.test('createIndex, listIndexes and dropIndex', async (t) => {
  const coll = db.collection('idx_manage')
  t.equal(await coll.createIndex({ email: 1 }, { unique: true }), 'email_1')
  t.equal(await coll.createIndex({ org: 1, createdAt: -1 }, { name: 'org_recent' }), 'org_recent')
  t.equal(await coll.createIndex({ nick: 1 }, { sparse: true }), 'nick_1')
  t.equal(await coll.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 3600 }), 'expiresAt_1')
  t.equal(await coll.createIndex({ email: 1 }, { unique: true }), 'email_1', 'creating an identical index again is a no-op')

  const indexes = await coll.indexes()
  const byName = new Map(indexes.map((i) => [i.name, i]))
  t.same([...byName.keys()].sort(), ['_id_', 'email_1', 'expiresAt_1', 'nick_1', 'org_recent'])
  t.same(byName.get('_id_')?.key, { _id: 1 })
  t.same(byName.get('email_1')?.key, { email: 1 })
  t.equal(byName.get('email_1')?.unique, true)
  t.same(byName.get('org_recent')?.key, { org: 1, createdAt: -1 })
  t.same(Object.keys(byName.get('org_recent')!.key), ['org', 'createdAt'], 'compound key order is kept')
  t.equal(byName.get('nick_1')?.sparse, true)
  t.equal(byName.get('expiresAt_1')?.expireAfterSeconds, 3600)

  await t.rejects(coll.createIndex({ other: 1 }, { name: 'email_1' }), { code: 86 }, 'same name, different key')
  await t.rejects(coll.createIndex({ email: 1 }, { unique: true, name: 'another' }), { code: 85 }, 'same key, different name')

  await coll.dropIndex('nick_1')
  t.notOk((await coll.indexes()).some((i) => i.name === 'nick_1'))
  await t.rejects(coll.dropIndex('nick_1'), { code: 27 }, 'dropping a missing index')
  await t.rejects(coll.dropIndex('_id_'), MongoServerError, 'the _id index cannot be dropped')
  await coll.dropIndexes()
  t.same((await coll.indexes()).map((i) => i.name), ['_id_'])
  await t.rejects(db.collection('idx_never_created').indexes(), { code: 26 }, 'listIndexes on a missing collection')
})

t.test('unique index violations on insert, update, upsert and findOneAndUpdate', async (t) => {
  const coll = db.collection('idx_unique')
  await coll.createIndex({ email: 1 }, { unique: true })
  await coll.insertMany([{ _id: 1, email: 'a' }, { _id: 2, email: 'b' }] as never[])

  const onInsert = await duplicateError(coll.insertOne({ email: 'a' }))
  t.equal(onInsert.code, 11000)
  t.same(onInsert.keyPattern, { email: 1 })
  t.same(onInsert.keyValue, { email: 'a' })
  t.match(onInsert.message, new RegExp(`^E11000 duplicate key error collection: ${dbName}\\.idx_unique index: email_1 dup key: \\{ email: "a" \\}`))

  const onUpdate = await duplicateError(coll.updateOne({ _id: 2 as never }, { $set: { email: 'a', touched: true } }))
  t.equal(onUpdate.code, 11000)
  t.same(onUpdate.keyValue, { email: 'a' })
  t.same(await coll.findOne({ _id: 2 as never }), { _id: 2, email: 'b' }, 'the violating update changed nothing')

  const onUpsert = await duplicateError(coll.updateOne({ _id: 3 as never }, { $set: { email: 'b' } }, { upsert: true }))
  t.equal(onUpsert.code, 11000)
  t.equal(await coll.countDocuments({ _id: 3 as never }), 0, 'the violating upsert inserted nothing')

  const onReplace = await duplicateError(coll.replaceOne({ _id: 1 as never }, { email: 'b' }))
  t.equal(onReplace.code, 11000)

  const onFindAndModify = await duplicateError(coll.findOneAndUpdate({ _id: 1 as never }, { $set: { email: 'b' } }))
  t.equal(onFindAndModify.code, 11000)
  t.same(onFindAndModify.keyPattern, { email: 1 })
  t.same(onFindAndModify.keyValue, { email: 'b' })

  const onUpdateMany = await duplicateError(coll.updateMany({}, { $set: { email: 'same' } }))
  t.equal(onUpdateMany.code, 11000, 'updateMany that would make two documents equal')

  const onId = await duplicateError(coll.insertOne({ _id: 1 as never, email: 'fresh' }))
  t.equal(onId.code, 11000)
  t.same(onId.keyPattern, { _id: 1 })
  t.same(onId.keyValue, { _id: 1 })
})

t.test('compound unique indexes', async (t) => {
  const coll = db.collection('idx_compound')
  await coll.createIndex({ org: 1, user: 1 }, { unique: true })
  await coll.insertMany([{ org: 'x', user: 'u1' }, { org: 'x', user: 'u2' }, { org: 'y', user: 'u1' }])
  const err = await duplicateError(coll.insertOne({ org: 'x', user: 'u1' }))
  t.equal(err.code, 11000)
  t.same(err.keyPattern, { org: 1, user: 1 })
  t.same(err.keyValue, { org: 'x', user: 'u1' })
  t.match(err.message, /index: org_1_user_1 dup key: \{ org: "x", user: "u1" \}/)
})

t.test('bulk inserts: ordered stops at the first duplicate, unordered carries on', async (t) => {
  const ordered = db.collection('idx_bulk_ordered')
  await ordered.createIndex({ k: 1 }, { unique: true })
  const orderedErr = await ordered.insertMany([{ k: 1 }, { k: 2 }, { k: 1 }, { k: 3 }]).catch((e: unknown) => e)
  t.ok(orderedErr instanceof MongoBulkWriteError)
  const ob = orderedErr as MongoBulkWriteError
  t.equal(ob.code, 11000)
  t.equal(ob.result.insertedCount, 2)
  t.equal(await ordered.countDocuments(), 2, 'nothing after the failing document was inserted')

  const unordered = db.collection('idx_bulk_unordered')
  await unordered.createIndex({ k: 1 }, { unique: true })
  const err = await unordered.insertMany([{ k: 1 }, { k: 1 }, { k: 2 }, { k: 2 }, { k: 3 }], { ordered: false }).catch((e: unknown) => e)
  t.ok(err instanceof MongoBulkWriteError)
  const bulk = err as MongoBulkWriteError
  t.equal(bulk.code, 11000)
  t.equal(bulk.result.insertedCount, 3)
  const writeErrors = Array.isArray(bulk.writeErrors) ? bulk.writeErrors : [bulk.writeErrors]
  t.same(writeErrors.map((w) => w.index), [1, 3])
  t.same(writeErrors.map((w) => w.code), [11000, 11000])
  // The driver keeps only index/code/errmsg of bulk write errors, so the key shows in the message.
  t.match(writeErrors[0].errmsg, /dup key: \{ k: 1 \}/)
  t.match(writeErrors[1].errmsg, /dup key: \{ k: 2 \}/)
  t.equal(await unordered.countDocuments(), 3)
})

t.test('unique index over existing duplicates cannot be created', async (t) => {
  const coll = db.collection('idx_existing_dups')
  await coll.insertMany([{ v: 'same' }, { v: 'same' }])
  const err = await duplicateError(coll.createIndex({ v: 1 }, { unique: true }))
  t.equal(err.code, 11000)
  t.notOk((await coll.indexes()).some((i) => i.name === 'v_1'), 'no index was left behind')
})

t.test('missing fields index as null; sparse unique indexes skip them', async (t) => {
  const plain = db.collection('idx_missing_plain')
  await plain.createIndex({ handle: 1 }, { unique: true })
  await plain.insertOne({ name: 'no handle' })
  const err = await duplicateError(plain.insertOne({ name: 'also none' }))
  t.equal(err.code, 11000)
  t.same(err.keyValue, { handle: null })

  const sparse = db.collection('idx_missing_sparse')
  await sparse.createIndex({ handle: 1 }, { unique: true, sparse: true })
  await sparse.insertMany([{ name: 'a' }, { name: 'b' }, { handle: 'h' }])
  t.equal(await sparse.countDocuments(), 3)
  t.equal((await duplicateError(sparse.insertOne({ handle: 'h' }))).code, 11000)
})

t.test('partial unique index only constrains documents matching its filter', async (t) => {
  const coll = db.collection('idx_partial')
  await coll.createIndex({ is_default: 1 }, { unique: true, partialFilterExpression: { is_default: true }, name: 'one_default' })
  await coll.insertMany([{ name: 'a', is_default: false }, { name: 'b', is_default: false }, { name: 'c', is_default: true }])
  const err = await duplicateError(coll.insertOne({ name: 'd', is_default: true }))
  t.equal(err.code, 11000)
  t.same(err.keyValue, { is_default: true })
  await coll.updateOne({ name: 'c' }, { $set: { is_default: false } })
  await coll.updateOne({ name: 'a' }, { $set: { is_default: true } })
  t.same((await coll.find({ is_default: true }).toArray()).map((d) => d.name), ['a'], 'moving the flag is allowed')
  const spec = (await coll.indexes()).find((i) => i.name === 'one_default')
  t.same(spec?.partialFilterExpression, { is_default: true })
})

t.test('unique multikey index compares array elements', async (t) => {
  const coll = db.collection('idx_multikey')
  await coll.createIndex({ tags: 1 }, { unique: true })
  await coll.insertOne({ tags: ['a', 'b'] })
  await coll.insertOne({ tags: ['c'] })
  const err = await duplicateError(coll.insertOne({ tags: ['x', 'b'] }))
  t.same(err.keyValue, { tags: 'b' })
  t.equal(await coll.countDocuments({ tags: 'b' }), 1)
})

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await check()) return true
    await delay(50)
  }
  return check()
}

async function seedTtl(coll: Collection): Promise<void> {
  await coll.insertMany([
    { _id: 'past', expiresAt: new Date(Date.now() - 60_000) },
    { _id: 'future', expiresAt: new Date(Date.now() + 3_600_000) },
    { _id: 'not-a-date', expiresAt: 'tomorrow' },
    { _id: 'no-field' },
  ] as never[])
}

t.test('TTL: documents past their expiry date are removed by the background sweeper', {
  skip: process.env.MONGODB_URI ? 'a real MongoDB TTL monitor only runs every 60 s' : false,
}, async (t) => {
  const coll = db.collection('idx_ttl')
  await coll.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 })
  await seedTtl(coll)
  const relative = db.collection('idx_ttl_relative')
  await relative.createIndex({ createdAt: 1 }, { expireAfterSeconds: 5 })
  await relative.insertMany([
    { _id: 'old', createdAt: new Date(Date.now() - 10_000) },
    { _id: 'recent', createdAt: new Date() },
    { _id: 'array', createdAt: [new Date(), new Date(Date.now() - 10_000)] },
  ] as never[])

  t.ok(await waitUntil(async () => (await coll.countDocuments({ _id: 'past' as never })) === 0, 5000), 'expired document vanished')
  t.ok(await waitUntil(async () => (await relative.countDocuments()) === 1, 5000), 'createdAt + 5 s in the past vanished (arrays use the earliest date)')
  t.same((await coll.find().sort({ _id: 1 }).toArray()).map((d) => d._id), ['future', 'no-field', 'not-a-date'])
  t.same((await relative.find().toArray()).map((d) => d._id), ['recent'])
})
