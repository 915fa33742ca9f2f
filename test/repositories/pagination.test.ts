import t from 'tap'
import { startTestDatabase } from '../helpers/database.ts'
import { paginate, pageReply, escapeRegex } from '../../src/repositories/pagination.ts'
import { BadRequest } from '../../src/errors.ts'

interface Item { _id?: unknown; owner: string; name: string; created_at: Date; n: number }

const { db } = await startTestDatabase(t)
const items = db.collection<Item>('items')
const base = Date.UTC(2026, 0, 1)
await items.insertMany([
  ...Array.from({ length: 45 }, (_, i) => ({ owner: 'alice', name: `item ${i}`, created_at: new Date(base + i * 1000), n: i })),
  { owner: 'alice', name: 'a.b*c (literal)', created_at: new Date(base + 100_000), n: 100 },
  { owner: 'bob', name: 'item bob', created_at: new Date(base), n: 0 },
])
const spec = { filter: { owner: 'alice' }, sortFields: { created_at: 'created_at', name: 'name', n: 'n' }, searchFields: ['name'] }
const map = (d: Item) => ({ name: d.name, n: d.n })

t.test('defaults: page 1, 20 items, newest first, only the owner\'s', async (t) => {
  const page = await paginate(items, {}, spec, map)
  t.equal(page.total, 46)
  t.equal(page.items.length, 20)
  t.equal(page.items[0].n, 100)
  t.equal(page.items[1].n, 44)
  t.notOk(page.items.some((i) => i.name === 'item bob'))
})

t.test('pages do not overlap and cover everything', async (t) => {
  const seen = new Set<number>()
  for (let p = 1; p <= 3; p++) {
    const page = await paginate(items, { page: p, limit: 20, sort: 'n', order: 'asc' }, spec, map)
    for (const i of page.items) seen.add(i.n)
  }
  t.equal(seen.size, 46)
  const beyond = await paginate(items, { page: 9, limit: 20 }, spec, map)
  t.same(beyond.items, [])
  t.equal(beyond.total, 46)
})

t.test('search is literal: regex metacharacters match themselves', async (t) => {
  const page = await paginate(items, { search: 'a.b*c (' }, spec, map)
  t.same(page.items.map((i) => i.name), ['a.b*c (literal)'])
  const none = await paginate(items, { search: '.*' }, spec, map)
  t.equal(none.total, 0, '".*" is not a wildcard')
  t.equal(escapeRegex('a.b*c'), 'a\\.b\\*c')
})

t.test('bad page, limit or sort is a BadRequest', async (t) => {
  await t.rejects(paginate(items, { limit: 101 }, spec, map), BadRequest)
  await t.rejects(paginate(items, { page: 0 }, spec, map), BadRequest)
  await t.rejects(paginate(items, { sort: 'owner' }, spec, map), BadRequest)
})

t.test('pageReply names the list by its plural', async (t) => {
  const page = await paginate(items, { limit: 2, sort: 'n', order: 'asc' }, spec, map)
  t.same(pageReply('items', page), { items: [{ name: 'item 0', n: 0 }, { name: 'item 1', n: 1 }], total: 46, page: 1, limit: 2 })
})
