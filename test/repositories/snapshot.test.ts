import t from 'tap'
import Fastify from 'fastify'
import { Type } from 'typebox'
import { derivedSnapshot, isSnapshot, snapshotOf, thaw } from '../../src/repositories/snapshot.ts'
import { ReadCache } from '../../src/repositories/read-cache.ts'
import { buildReplySerializer, rememberingSnapshots } from '../../src/reply-serializer.ts'

const sample = () => ({
  owner_id: 'o', name: 'w', n: 1.5, ok: true, none: null, gone: undefined, list: [1, 'two', [3], { four: 4 }],
  nested: { a: { b: { c: ['deep'] } } }, empty: {}, none_array: [],
})

t.test('a snapshot is a deep-frozen copy of plain data, recognised as one', async (t) => {
  const value = sample()
  const snap = snapshotOf(value)!
  t.not(snap, value, 'a copy')
  t.same(snap, value)
  t.strictSame(Object.keys(snap), Object.keys(value), 'the same keys in the same order, undefined ones included')
  t.ok(isSnapshot(snap))
  t.notOk(isSnapshot(value), 'the original is not one')
  t.notOk(isSnapshot(snap.nested), 'only the top-level value is registered')
  for (const inner of [snap, snap.list, snap.list[2], snap.list[3], snap.nested.a.b.c, snap.empty]) t.ok(Object.isFrozen(inner))
  value.nested.a.b.c.push('changed')
  t.same(snap.nested.a.b.c, ['deep'], 'later changes to the original do not reach it')
  t.throws(() => { (snap.nested.a.b.c as string[]).push('x') }, TypeError)
  t.equal(snapshotOf('text'), 'text', 'primitives are their own snapshot')
  t.notOk(isSnapshot('text'))
})

t.test('anything but plain data has no snapshot: freezing would not keep its content', async (t) => {
  class Box { v = 1 }
  for (const odd of [new Date(0), Buffer.from('x'), new Map(), new Box(), () => 1, new Uint8Array(2)]) {
    t.equal(snapshotOf({ ok: 1, deep: [{ odd }] }), undefined, String(odd?.constructor?.name))
  }
  t.ok(snapshotOf(Object.assign(Object.create(null), { a: 1 })), 'a null-prototype object is plain data')
})

t.test('thaw answers what structuredClone would, mutable', async (t) => {
  const snap = snapshotOf(sample())!
  const copy = thaw(snap)
  t.strictSame(copy, structuredClone(snap))
  t.notOk(Object.isFrozen(copy) || Object.isFrozen(copy.list) || Object.isFrozen(copy.nested.a))
  copy.list.push(5)
  t.equal(snap.list.length, 4)
  // `__proto__` as a key (a stored document may have one) stays an own property, as structuredClone keeps it.
  const proto = JSON.parse('{"__proto__": {"polluted": true}, "x": 1}')
  const protoSnap = snapshotOf(proto)!
  t.strictSame(Object.keys(protoSnap), ['__proto__', 'x'])
  t.equal(Object.getPrototypeOf(protoSnap), Object.prototype)
  t.strictSame(Object.keys(thaw(protoSnap)), ['__proto__', 'x'])
  t.equal(({} as Record<string, unknown>).polluted, undefined)
})

t.test('the read cache stores snapshots, and does not cache what has none', async (t) => {
  const cache = new ReadCache<{ owner_id: string; at?: Date; v?: number }>({ maxEntries: 10 })
  let reads = 0
  const value = await cache.read('a', async () => { reads++; return { owner_id: 'o', v: 1 } }, { shared: true })
  t.ok(isSnapshot(value), 'a shared read answers the stored snapshot')
  t.equal(cache.getShared('a', 'o'), value)
  t.not(cache.get('a', 'o'), value)
  const dated = await cache.read('b', async () => { reads++; return { owner_id: 'o', at: new Date(0) } }, { shared: true })
  t.ok(dated!.at instanceof Date, 'a value with a Date is answered as read')
  t.equal(cache.get('b', 'o'), undefined, 'but not cached')
  t.equal(reads, 2)
})

t.test('a serializer remembers its output per snapshot, and only for snapshots', async (t) => {
  let calls = 0
  const serialize = rememberingSnapshots((data) => { calls++; return JSON.stringify(data) })
  const snap = snapshotOf(sample())!
  t.equal(serialize(snap), JSON.stringify(snap))
  t.equal(serialize(snap), JSON.stringify(snap))
  t.equal(calls, 1, 'a snapshot is serialized once')
  const plain = sample()
  serialize(plain)
  plain.name = 'changed'
  t.equal(serialize(plain), JSON.stringify(plain), 'anything else is serialized every time')
  t.equal(calls, 3)
  t.equal(serialize(snapshotOf(sample())!), JSON.stringify(snap), 'another snapshot is serialized on its own')
  t.equal(calls, 4)
})

t.test('with Fastify: a snapshot reply has exactly the bytes of the same value serialized afresh', async (t) => {
  const app = Fastify({ schemaController: { compilersFactory: { buildSerializer: buildReplySerializer() } } })
  t.teardown(() => app.close())
  // anyOf, nullable fields, nested free objects and a field the schema leaves out, as the workflow schema has.
  const schema = Type.Object({
    name: Type.String(), none: Type.Union([Type.String(), Type.Null()]), n: Type.Union([Type.Number(), Type.String()]),
    list: Type.Array(Type.Unknown()), nested: Type.Object({}, { additionalProperties: true }),
  }, { additionalProperties: false })
  const snap = snapshotOf(sample())!
  app.get('/snap', { schema: { response: { 200: schema } } }, async () => snap)
  app.get('/fresh', { schema: { response: { 200: schema } } }, async () => thaw(snap))
  const fresh = await app.inject('/fresh')
  t.equal(fresh.statusCode, 200)
  t.notOk('owner_id' in fresh.json(), 'the schema shapes the reply')
  for (let i = 0; i < 3; i++) t.equal((await app.inject('/snap')).body, fresh.body)
})

t.test('a snapshot derived from a snapshot is computed once per source, and is a snapshot itself', async (t) => {
  let calls = 0
  const shape = (page: { items: unknown[]; total: number }) => { calls++; return { things: page.items, total: page.total } }
  const source = snapshotOf({ items: [{ a: 1 }], total: 1 })!
  const first = derivedSnapshot(source, shape)
  t.same(first, { things: [{ a: 1 }], total: 1 })
  t.ok(isSnapshot(first) && Object.isFrozen(first.things) && Object.isFrozen(first.things[0]))
  t.equal(derivedSnapshot(source, shape), first, 'the same object again')
  t.equal(calls, 1)
  const other = snapshotOf({ items: [{ a: 2 }], total: 1 })!
  t.same(derivedSnapshot(other, shape), { things: [{ a: 2 }], total: 1 }, 'another source is derived on its own')
  const plain = { items: [{ a: 3 }], total: 1 }
  const fromPlain = derivedSnapshot(plain, shape)
  t.notOk(isSnapshot(fromPlain), 'anything but a snapshot is derived afresh')
  t.not(derivedSnapshot(plain, shape), fromPlain)
  t.equal(calls, 4)
})
