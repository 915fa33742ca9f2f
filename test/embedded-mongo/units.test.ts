// Unit tests for the embedded server's building blocks: checksums, journal frames, key encoding and
// value ordering.
import t from 'tap'
import { Long, MaxKey, MinKey, ObjectId } from 'bson'
import { crc32, crc32Fallback } from '../../src/embedded-mongo/crc32.ts'
import { decodeFrames, encodeFrame } from '../../src/embedded-mongo/storage/frames.ts'
import { compareValues, encodeKey } from '../../src/embedded-mongo/values.ts'

t.test('crc32 matches the standard check value, with and without zlib.crc32', async (t) => {
  const check = Buffer.from('123456789')
  t.equal(crc32(check), 0xcbf43926)
  t.equal(crc32Fallback(check), 0xcbf43926)
  for (const size of [0, 1, 7, 64, 1000]) {
    const data = Buffer.from(Array.from({ length: size }, (_, i) => (i * 31 + size) & 0xff))
    t.equal(crc32Fallback(data), crc32(data), `size ${size}`)
  }
})

t.test('journal frames decode back and stop at damage', async (t) => {
  const a = encodeFrame([{ op: 'put', doc: { _id: 1 } }, { op: 'put', doc: { _id: 2 } }])
  const b = encodeFrame([{ op: 'delete', id: 1 }])
  const both = Buffer.concat([a, b])
  const ok = decodeFrames(both, 0)
  t.equal(ok.groups.length, 2)
  t.equal(ok.groups[0].length, 2, 'a frame carries an atomic group of records')
  t.equal(ok.validEnd, both.length)
  t.equal(ok.problem, undefined)
  for (let cut = a.length + 1; cut < both.length; cut++) {
    const torn = decodeFrames(both.subarray(0, cut), 0)
    if (torn.groups.length !== 1 || torn.validEnd !== a.length || !torn.problem) {
      t.fail(`cut at ${cut} not detected`)
      return
    }
  }
  t.pass('every cut inside the second frame is detected')
})

t.test('encodeKey equates exactly what MongoDB equality equates', async (t) => {
  const oid = new ObjectId()
  t.equal(encodeKey(1), encodeKey(Long.fromNumber(1)), 'int and long')
  t.equal(encodeKey(0), encodeKey(-0))
  t.not(encodeKey(1), encodeKey('1'))
  t.not(encodeKey(null), encodeKey(''))
  t.not(encodeKey(true), encodeKey(1))
  t.equal(encodeKey(oid), encodeKey(new ObjectId(oid.toHexString())))
  t.equal(encodeKey(new Date(5)), encodeKey(new Date(5)))
  t.not(encodeKey(new Date(5)), encodeKey(5))
  t.equal(encodeKey({ a: 1, b: [2, 'x'] }), encodeKey({ a: 1, b: [2, 'x'] }))
  t.not(encodeKey({ a: 1, b: 2 }), encodeKey({ b: 2, a: 1 }), 'embedded documents are field-order sensitive')
  t.not(encodeKey(['a,b']), encodeKey(['a', 'b']))
})

t.test('compareValues follows the BSON type order', async (t) => {
  const ordered = [
    new MinKey(), null, -Infinity, -1, 0, 2.5, Long.fromNumber(3), 'A', 'a', 'b', { a: 1 }, { a: 2 }, { b: 0 }, [1], [1, 2],
    new ObjectId('000000000000000000000000'), new ObjectId('ffffffffffffffffffffffff'), false, true, new Date(0), new Date(1), /a/, new MaxKey(),
  ]
  const shuffled = [...ordered].reverse()
  shuffled.sort(compareValues)
  t.same(shuffled.map((v) => encodeKey(v)), ordered.map((v) => encodeKey(v)))
  t.equal(compareValues(undefined, null), 0, 'missing and null compare equal')
  t.equal(compareValues(1, Long.fromNumber(1)), 0)
})
