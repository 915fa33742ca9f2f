// Embedded-server-only: lookups by _id and by equality on indexed fields must not scan the collection.
// The server counts every document a filter is evaluated against (stats.docsExamined) and reports the
// same number through explain, so both are checked.
import t from 'tap'
import { MongoClient, type Document } from 'mongodb'
import { startEmbeddedMongoServer } from '../../src/embedded-mongo/server.ts'

const server = await startEmbeddedMongoServer({ storage: 'memory' })
t.teardown(() => server.close())
const client = await MongoClient.connect(server.uri)
t.teardown(() => client.close())
const db = client.db('planner')
const coll = db.collection('people')

const N = 2000
await coll.insertMany(Array.from({ length: N }, (_, i) => ({
  _id: i,
  email: `user${i}@example.com`,
  org: `org${i % 20}`,
  team: `team${i % 7}`,
  age: i % 90,
  tags: [`t${i % 3}`, `u${i % 5}`],
  address: { city: `city${i % 10}` },
})) as never[])
await coll.createIndex({ email: 1 }, { unique: true })
await coll.createIndex({ org: 1, team: 1 })
await coll.createIndex({ tags: 1 })
await coll.createIndex({ 'address.city': 1 })

const countWhere = (pred: (i: number) => boolean): number => Array.from({ length: N }, (_, i) => i).filter(pred).length
const inOrg3Team3 = countWhere((i) => i % 20 === 3 && i % 7 === 3)
const inOrg1Team1 = countWhere((i) => i % 20 === 1 && i % 7 === 1)

/** Documents examined by the server while running `fn`. */
async function examined(fn: () => Promise<unknown>): Promise<number> {
  const before = server.stats.docsExamined
  await fn()
  return server.stats.docsExamined - before
}

async function explainFind(filter: Document): Promise<{ stage: string; docs: number; returned: number }> {
  const plan = await coll.find(filter).explain('executionStats')
  const winning = plan.queryPlanner.winningPlan as Document
  return {
    stage: winning.inputStage?.stage ?? winning.stage,
    docs: plan.executionStats.totalDocsExamined as number,
    returned: plan.executionStats.nReturned as number,
  }
}

t.test('_id lookups touch only the matching documents', async (t) => {
  t.same(await explainFind({ _id: 1234 }), { stage: 'IDHACK', docs: 1, returned: 1 })
  t.same(await explainFind({ _id: { $in: [1, 2, 3, 99999] } }), { stage: 'IDHACK', docs: 3, returned: 3 })
  t.same(await explainFind({ _id: { $eq: 7 }, age: 7 }), { stage: 'IDHACK', docs: 1, returned: 1 }, 'extra conditions are checked on the candidate')
  t.same(await explainFind({ _id: 5, age: 6 }), { stage: 'IDHACK', docs: 1, returned: 0 })
  t.equal(await examined(() => coll.findOne({ _id: 42 as never })), 1)
  t.equal(await examined(() => coll.updateOne({ _id: 42 as never }, { $set: { seen: true } })), 1)
  t.equal(await examined(() => coll.findOneAndUpdate({ _id: 43 as never }, { $set: { seen: true } })), 1)
  t.equal(await examined(() => coll.countDocuments({ _id: 44 as never })), 1)
  t.equal(await examined(() => coll.deleteOne({ _id: 45 as never })), 1)
  t.equal(await examined(() => coll.findOne({ _id: 45 as never })), 0, 'a deleted _id finds no candidate')
})

t.test('equality on indexed fields uses the index', async (t) => {
  t.same(await explainFind({ email: 'user77@example.com' }), { stage: 'IXSCAN', docs: 1, returned: 1 })
  t.same(await explainFind({ email: { $in: ['user1@example.com', 'user2@example.com'] } }), { stage: 'IXSCAN', docs: 2, returned: 2 })
  t.same(await explainFind({ org: 'org3', team: 'team3' }), { stage: 'IXSCAN', docs: inOrg3Team3, returned: inOrg3Team3 }, 'full compound key')
  t.same(await explainFind({ org: 'org3' }), { stage: 'IXSCAN', docs: N / 20, returned: N / 20 }, 'compound index prefix')
  t.same(await explainFind({ tags: 't1' }), { stage: 'IXSCAN', docs: countWhere((i) => i % 3 === 1), returned: countWhere((i) => i % 3 === 1) }, 'multikey index')
  t.same(await explainFind({ 'address.city': 'city4' }), { stage: 'IXSCAN', docs: N / 10, returned: N / 10 }, 'dotted path')
  t.same(await explainFind({ $and: [{ email: 'user9@example.com' }, { age: 9 }] }), { stage: 'IXSCAN', docs: 1, returned: 1 })
  t.equal(await examined(() => coll.updateMany({ email: 'user10@example.com' }, { $inc: { age: 1 } })), 1)
  t.equal(await examined(() => coll.deleteMany({ email: 'user11@example.com' })), 1)
  t.equal(await examined(() => coll.countDocuments({ email: 'user12@example.com' })), 1, 'countDocuments (aggregate with leading $match)')
  t.equal(await examined(() => coll.aggregate([{ $match: { org: 'org1', team: 'team1' } }, { $count: 'n' }]).toArray()), inOrg1Team1)
})

t.test('non-indexed filters fall back to a scan and still give the same answers', async (t) => {
  const scan = await explainFind({ age: 30 })
  t.equal(scan.stage, 'COLLSCAN')
  t.equal(scan.docs, await coll.estimatedDocumentCount())
  t.equal((await explainFind({ email: /user1/ })).stage, 'COLLSCAN', 'regex is not an equality')
  const viaIndex = (await coll.find({ org: 'org5' }).sort({ _id: 1 }).toArray()).map((d) => d._id)
  const viaScan = (await coll.find({ $or: [{ org: 'org5' }] }).sort({ _id: 1 }).toArray()).map((d) => d._id)
  t.same(viaIndex, viaScan)
  t.equal(await examined(() => coll.estimatedDocumentCount()), 0, 'estimatedDocumentCount uses the document count')
})

t.test('indexes follow updates and deletes', async (t) => {
  await coll.updateOne({ _id: 100 as never }, { $set: { email: 'changed@example.com' } })
  t.same(await explainFind({ email: 'user100@example.com' }), { stage: 'IXSCAN', docs: 0, returned: 0 })
  t.same(await explainFind({ email: 'changed@example.com' }), { stage: 'IXSCAN', docs: 1, returned: 1 })
  await coll.insertOne({ _id: 'new' as never, email: 'user100@example.com' })
  t.same((await coll.findOne({ email: 'user100@example.com' }))?._id, 'new', 'the released key can be reused')
  await coll.deleteOne({ _id: 'new' as never })
  t.equal(await coll.findOne({ email: 'user100@example.com' }), null)
})

t.test('a multi-update that would break a unique index changes nothing at all', async (t) => {
  // Embedded guarantee: the whole statement is validated before any document is written. (A real
  // MongoDB stops at the failing document and keeps the earlier ones.)
  const c = db.collection('atomic')
  await c.createIndex({ slot: 1 }, { unique: true })
  await c.insertMany([{ _id: 1, slot: 1, g: 'x' }, { _id: 2, slot: 2, g: 'x' }, { _id: 3, slot: 3, g: 'y' }] as never[])
  await t.rejects(c.updateMany({}, { $inc: { slot: 1 } }).then(() => c.updateMany({ g: 'x' }, { $set: { slot: 4 } })), { code: 11000 })
  t.same((await c.find().sort({ _id: 1 }).toArray()).map((d) => d.slot), [2, 3, 4], 'shifting every slot by one is fine as a whole')
  t.equal(await c.countDocuments({ slot: 4 }), 1)
})
