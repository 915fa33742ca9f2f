// Driver-level conformance: update operators, array updates, upserts and findOneAndX.
// Runs against the embedded server by default and unchanged against a real MongoDB (MONGODB_URI).
import t from 'tap'
import { MongoServerError, ObjectId } from 'mongodb'
import { startTestDatabase } from '../helpers/database.ts'

const { db } = await startTestDatabase(t)

t.test('field operators: $set, $unset, $inc, $mul, $rename, $min, $max, $currentDate', async (t) => {
  const coll = db.collection('upd_fields')
  await coll.insertOne({ _id: 1, a: 1, b: 'x', n: 10, price: 4, lo: 5, hi: 5, nested: { keep: true } } as never)
  const before = Date.now()
  const res = await coll.updateOne({ _id: 1 as never }, {
    $set: { 'nested.added': 'yes', c: [1] },
    $unset: { b: '' },
    $inc: { n: -3, fresh: 2 },
    $mul: { price: 2.5 },
    $rename: { a: 'renamed' },
    $min: { lo: 3 },
    $max: { hi: 4 },
    $currentDate: { touched: true },
  })
  t.equal(res.matchedCount, 1)
  t.equal(res.modifiedCount, 1)
  const doc = (await coll.findOne({ _id: 1 as never }))!
  t.same(doc.nested, { keep: true, added: 'yes' })
  t.same(doc.c, [1])
  t.notOk('b' in doc, '$unset removes the field')
  t.equal(doc.n, 7)
  t.equal(doc.fresh, 2, '$inc creates a missing field')
  t.equal(doc.price, 10)
  t.equal(doc.renamed, 1)
  t.notOk('a' in doc, '$rename removes the old name')
  t.equal(doc.lo, 3)
  t.equal(doc.hi, 5, '$max keeps the larger current value')
  t.ok(doc.touched instanceof Date && doc.touched.getTime() >= before - 1000, '$currentDate sets a Date')

  const noop = await coll.updateOne({ _id: 1 as never }, { $set: { n: 7 } })
  t.equal(noop.matchedCount, 1)
  t.equal(noop.modifiedCount, 0, 'setting the same value does not modify')
})

t.test('array operators: $push with $each/$slice, $addToSet, $pull, $pop', async (t) => {
  const coll = db.collection('upd_arrays')
  await coll.insertOne({ _id: 1, xs: [1, 2], set: ['a'], scores: [5, 8, 1, 9], q: [1, 2, 3] } as never)
  await coll.updateOne({ _id: 1 as never }, {
    $push: { xs: { $each: [3, 4, 5], $slice: -4 } },
    $addToSet: { set: { $each: ['a', 'b', 'b'] } },
    $pull: { scores: { $gte: 8 } },
    $pop: { q: -1 },
  } as never)
  const doc = (await coll.findOne({ _id: 1 as never }))!
  t.same(doc.xs, [2, 3, 4, 5])
  t.same(doc.set, ['a', 'b'])
  t.same(doc.scores, [5, 1])
  t.same(doc.q, [2, 3])
  await coll.updateOne({ _id: 1 as never }, { $push: { fresh: 'first' } } as never)
  t.same((await coll.findOne({ _id: 1 as never }))!.fresh, ['first'], '$push creates a missing array')
})

t.test('positional $, all-positional $[] and filtered $[id] with arrayFilters', async (t) => {
  const coll = db.collection('upd_positional')
  await coll.insertOne({
    _id: 1,
    grades: [80, 85, 90],
    items: [{ sku: 'a', qty: 1 }, { sku: 'b', qty: 5 }, { sku: 'c', qty: 10 }],
  } as never)
  await coll.updateOne({ _id: 1 as never, grades: 85 }, { $set: { 'grades.$': 86 } })
  t.same((await coll.findOne({ _id: 1 as never }))!.grades, [80, 86, 90])
  await coll.updateOne({ _id: 1 as never, 'items.sku': 'b' }, { $inc: { 'items.$.qty': 1 } })
  await coll.updateOne({ _id: 1 as never }, { $inc: { 'grades.$[]': 1 } })
  await coll.updateOne({ _id: 1 as never }, { $set: { 'items.$[big].flag': true } }, { arrayFilters: [{ 'big.qty': { $gte: 6 } }] })
  const doc = (await coll.findOne({ _id: 1 as never }))!
  t.same(doc.grades, [81, 87, 91])
  t.same(doc.items, [{ sku: 'a', qty: 1 }, { sku: 'b', qty: 6, flag: true }, { sku: 'c', qty: 10, flag: true }])
})

t.test('updateMany reports matched and modified counts', async (t) => {
  const coll = db.collection('upd_many')
  await coll.insertMany([{ _id: 1, k: 'a', v: 1 }, { _id: 2, k: 'a', v: 2 }, { _id: 3, k: 'b', v: 2 }] as never[])
  const res = await coll.updateMany({ v: 2 }, { $set: { k: 'a' } })
  t.equal(res.matchedCount, 2)
  t.equal(res.modifiedCount, 1)
  t.equal(await coll.countDocuments({ k: 'a' }), 3)
})

t.test('upserts seed the new document from the query and report the upserted id', async (t) => {
  const coll = db.collection('upd_upsert')
  const res = await coll.updateOne(
    { email: 'new@example.com', 'profile.tier': 'gold', age: { $gt: 10 } },
    { $set: { name: 'New' }, $setOnInsert: { createdBy: 'upsert' }, $inc: { visits: 1 } },
    { upsert: true },
  )
  t.equal(res.upsertedCount, 1)
  t.equal(res.matchedCount, 0)
  t.ok(res.upsertedId instanceof ObjectId)
  const doc = await coll.findOne({ _id: res.upsertedId! })
  t.same(doc, { _id: res.upsertedId, email: 'new@example.com', profile: { tier: 'gold' }, name: 'New', createdBy: 'upsert', visits: 1 })

  const again = await coll.updateOne(
    { email: 'new@example.com' },
    { $set: { name: 'Again' }, $setOnInsert: { createdBy: 'ignored' }, $inc: { visits: 1 } },
    { upsert: true },
  )
  t.equal(again.matchedCount, 1)
  t.equal(again.upsertedCount, 0)
  const updated = (await coll.findOne({ email: 'new@example.com' }))!
  t.equal(updated.createdBy, 'upsert', '$setOnInsert does nothing on an update')
  t.equal(updated.visits, 2)

  const withId = await coll.updateOne({ _id: 'chosen' as never }, { $set: { x: 1 } }, { upsert: true })
  t.equal(withId.upsertedId, 'chosen', 'an _id in the query becomes the new document _id')
  const replaced = await coll.replaceOne({ slug: 'r' }, { slug: 'r', body: 'text' }, { upsert: true })
  t.equal(replaced.upsertedCount, 1)
  t.same(await coll.findOne({ slug: 'r' }, { projection: { _id: 0 } }), { slug: 'r', body: 'text' })
})

t.test('invalid updates are rejected and leave the document unchanged', async (t) => {
  const coll = db.collection('upd_invalid')
  await coll.insertOne({ _id: 1, s: 'text', n: 1 } as never)
  await t.rejects(coll.updateOne({ _id: 1 as never }, { $inc: { s: 1 } }), { code: 14 }, '$inc on a string')
  await t.rejects(coll.updateOne({ _id: 1 as never }, { $set: { _id: 2 } }), { code: 66 }, 'changing _id')
  await t.rejects(coll.updateOne({ _id: 1 as never }, { $set: { n: 2 }, $inc: { n: 1 } }), { code: 40 }, 'conflicting paths')
  const err = await coll.updateOne({ _id: 1 as never }, { $bogus: { n: 1 } } as never).catch((e: unknown) => e)
  t.ok(err instanceof MongoServerError, 'unknown modifier raises a server error')
  t.same(await coll.findOne({ _id: 1 as never }), { _id: 1, s: 'text', n: 1 })
})

t.test('findOneAndUpdate, findOneAndReplace and findOneAndDelete', async (t) => {
  const coll = db.collection('upd_find_and_modify')
  await coll.insertMany([{ _id: 1, k: 'q', n: 1 }, { _id: 2, k: 'q', n: 2 }, { _id: 3, k: 'q', n: 3 }] as never[])

  const beforeDoc = await coll.findOneAndUpdate({ k: 'q' }, { $inc: { n: 10 } }, { sort: { n: -1 }, returnDocument: 'before' })
  t.same(beforeDoc, { _id: 3, k: 'q', n: 3 }, 'sort picks the document; the pre-image is returned')
  const afterDoc = await coll.findOneAndUpdate({ _id: 1 as never }, { $set: { k: 'z' } }, { returnDocument: 'after', projection: { k: 1, _id: 0 } })
  t.same(afterDoc, { k: 'z' }, 'post-image with projection, even though it no longer matches the filter')
  const full = await coll.findOneAndUpdate({ _id: 2 as never }, { $set: { n: 20 } }, { returnDocument: 'after', includeResultMetadata: true })
  t.equal(full.ok, 1)
  t.same(full.value, { _id: 2, k: 'q', n: 20 })
  t.equal(full.lastErrorObject?.updatedExisting, true)
  t.equal(full.lastErrorObject?.n, 1)

  const missing = await coll.findOneAndUpdate({ _id: 99 as never }, { $set: { n: 0 } })
  t.equal(missing, null)
  const upserted = await coll.findOneAndUpdate({ _id: 50 as never }, { $set: { n: 50 } }, { upsert: true, returnDocument: 'after', includeResultMetadata: true })
  t.same(upserted.value, { _id: 50, n: 50 })
  t.equal(upserted.lastErrorObject?.updatedExisting, false)
  t.equal(upserted.lastErrorObject?.upserted, 50)

  const replacedPre = await coll.findOneAndReplace({ _id: 2 as never }, { k: 'replaced' })
  t.same(replacedPre, { _id: 2, k: 'q', n: 20 })
  t.same(await coll.findOne({ _id: 2 as never }), { _id: 2, k: 'replaced' })

  const deleted = await coll.findOneAndDelete({ k: 'q' })
  t.same(deleted, { _id: 3, k: 'q', n: 13 })
  t.equal(await coll.findOneAndDelete({ k: 'nothing' }), null)
  t.equal(await coll.countDocuments(), 3)
})
