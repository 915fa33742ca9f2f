// Driver-level conformance: counting, distinct and aggregation pipelines.
// Runs against the embedded server by default and unchanged against a real MongoDB (MONGODB_URI).
import t from 'tap'
import { startTestDatabase } from '../helpers/database.ts'

const { db } = await startTestDatabase(t)

const orders = db.collection('agg_orders')
const customers = db.collection('agg_customers')
await customers.insertMany([
  { _id: 'c1', name: 'Ada', country: 'NO' },
  { _id: 'c2', name: 'Bo', country: 'SE' },
  { _id: 'c3', name: 'Cy', country: 'NO' },
] as never[])
await orders.insertMany([
  { _id: 1, customer: 'c1', total: 10, items: ['pen', 'ink'], status: 'paid' },
  { _id: 2, customer: 'c1', total: 25, items: ['paper'], status: 'open' },
  { _id: 3, customer: 'c2', total: 5, items: ['pen'], status: 'paid' },
  { _id: 4, customer: 'c3', total: 40, items: ['ink', 'paper', 'pen'], status: 'paid' },
  { _id: 5, customer: 'c9', total: 1, items: [], status: 'void' },
] as never[])

t.test('countDocuments, estimatedDocumentCount and distinct', async (t) => {
  t.equal(await orders.countDocuments(), 5)
  t.equal(await orders.countDocuments({ status: 'paid' }), 3)
  t.equal(await orders.countDocuments({ total: { $gte: 10 } }, { skip: 1, limit: 1 }), 1)
  t.equal(await orders.estimatedDocumentCount(), 5)
  t.same((await orders.distinct('status')).sort(), ['open', 'paid', 'void'])
  t.same((await orders.distinct('items', { status: 'paid' })).sort(), ['ink', 'paper', 'pen'], 'array elements are distinct values')
  t.same((await orders.distinct('customer', { total: { $lt: 20 } })).sort(), ['c1', 'c2', 'c9'])
})

t.test('$match, $group, $sort, $project', async (t) => {
  const rows = await orders.aggregate([
    { $match: { status: { $ne: 'void' } } },
    { $group: { _id: '$customer', spent: { $sum: '$total' }, orders: { $sum: 1 }, biggest: { $max: '$total' } } },
    { $sort: { spent: -1 } },
    { $project: { _id: 0, customer: '$_id', spent: 1, orders: 1, avg: { $divide: ['$spent', '$orders'] } } },
  ]).toArray()
  t.same(rows, [
    { customer: 'c3', spent: 40, orders: 1, avg: 40 },
    { customer: 'c1', spent: 35, orders: 2, avg: 17.5 },
    { customer: 'c2', spent: 5, orders: 1, avg: 5 },
  ])
})

t.test('$lookup and $unwind', async (t) => {
  const rows = await orders.aggregate([
    { $match: { status: 'paid' } },
    { $lookup: { from: 'agg_customers', localField: 'customer', foreignField: '_id', as: 'buyer' } },
    { $unwind: '$buyer' },
    { $unwind: '$items' },
    { $group: { _id: '$buyer.country', items: { $sum: 1 } } },
    { $sort: { _id: 1 } },
  ]).toArray()
  t.same(rows, [{ _id: 'NO', items: 5 }, { _id: 'SE', items: 1 }])
  const unmatched = await orders.aggregate([
    { $match: { _id: 5 } },
    { $lookup: { from: 'agg_customers', localField: 'customer', foreignField: '_id', as: 'buyer' } },
  ]).toArray()
  t.same(unmatched[0].buyer, [], 'no join partner gives an empty array')
  const kept = await orders.aggregate([
    { $unwind: { path: '$items', preserveNullAndEmptyArrays: true } },
    { $count: 'n' },
  ]).toArray()
  t.same(kept, [{ n: 8 }])
  t.same((await orders.findOne({ _id: 1 as never }))?.items, ['pen', 'ink'], 'pipelines never alter stored documents')
  t.same((await customers.findOne({ _id: 'c1' as never })), { _id: 'c1', name: 'Ada', country: 'NO' })
})

t.test('$facet and $count', async (t) => {
  const [facets] = await orders.aggregate([
    { $facet: {
      byStatus: [{ $group: { _id: '$status', n: { $sum: 1 } } }, { $sort: { _id: 1 } }],
      big: [{ $match: { total: { $gte: 25 } } }, { $count: 'n' }],
      top: [{ $sort: { total: -1 } }, { $limit: 1 }, { $project: { _id: 1 } }],
    } },
  ]).toArray()
  t.same(facets.byStatus, [{ _id: 'open', n: 1 }, { _id: 'paid', n: 3 }, { _id: 'void', n: 1 }])
  t.same(facets.big, [{ n: 2 }])
  t.same(facets.top, [{ _id: 4 }])
  t.same(await orders.aggregate([{ $match: { status: 'paid' } }, { $count: 'paid' }]).toArray(), [{ paid: 3 }])
  t.same(await orders.aggregate([{ $match: { status: 'none' } }, { $count: 'n' }]).toArray(), [])
})

t.test('$addFields, $skip, $limit and expressions over dates', async (t) => {
  const events = db.collection('agg_events')
  await events.insertMany([
    { _id: 1, at: new Date('2024-01-15T10:00:00Z') },
    { _id: 2, at: new Date('2024-02-01T10:00:00Z') },
    { _id: 3, at: new Date('2024-02-20T10:00:00Z') },
  ] as never[])
  const rows = await events.aggregate([
    { $addFields: { month: { $month: '$at' } } },
    { $group: { _id: '$month', n: { $sum: 1 } } },
    { $sort: { _id: 1 } },
  ]).toArray()
  t.same(rows, [{ _id: 1, n: 1 }, { _id: 2, n: 2 }])
  const paged = await events.aggregate([{ $sort: { at: -1 } }, { $skip: 1 }, { $limit: 1 }]).toArray()
  t.same(paged.map((d) => d._id), [2])
})

t.test('let variables in aggregate', async (t) => {
  const rows = await orders.aggregate(
    [{ $match: { $expr: { $gte: ['$total', '$$min'] } } }, { $project: { _id: 1 } }, { $sort: { _id: 1 } }],
    { let: { min: 25 } },
  ).toArray()
  t.same(rows, [{ _id: 2 }, { _id: 4 }])
})
