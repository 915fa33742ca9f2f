import t from 'tap'
import { randomBytes } from 'node:crypto'
import { Sealer, SealError, keyId, parseKey } from '../../src/crypto/sealer.ts'

const k1 = randomBytes(32)
const k2 = randomBytes(32)
const secret = { token: 'eyJhbGciOi-super-secret', ca_data: 'PEM' }

t.test('a sealed value opens for the same record and hides its content', async (t) => {
  const s = new Sealer({ current: k1, old: [] })
  const sealed = s.seal(secret, 'clusters:abc')
  t.match(sealed, /^sealed:v1:[A-Za-z0-9_-]{11}:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+$/)
  t.notMatch(sealed, /super-secret/)
  t.same(s.open(sealed, 'clusters:abc'), secret)
  t.not(s.seal(secret, 'clusters:abc'), sealed, 'a fresh nonce every time')
  t.ok(Sealer.isSealed(sealed))
  t.notOk(Sealer.isSealed('plain'))
})

t.test('a value moved to another record, or tampered with, does not open', async (t) => {
  const s = new Sealer({ current: k1, old: [] })
  const sealed = s.seal(secret, 'clusters:abc')
  t.throws(() => s.open(sealed, 'clusters:other'), SealError)
  const parts = sealed.split(':')
  const flip = (text: string) => { const b = Buffer.from(text, 'base64url'); b[0] ^= 1; return b.toString('base64url') }
  for (const i of [3, 4, 5]) {
    const bad = [...parts]
    bad[i] = flip(bad[i])
    t.throws(() => s.open(bad.join(':'), 'clusters:abc'), SealError, `part ${i} flipped`)
  }
  t.throws(() => s.open('sealed:v1:nope', 'clusters:abc'), SealError)
})

t.test('rotation: old values open with the key ring and are flagged for resealing', async (t) => {
  const before = new Sealer({ current: k1, old: [] })
  const sealed = before.seal(secret, 'r:1')
  const after = new Sealer({ current: k2, old: [k1] })
  t.same(after.open(sealed, 'r:1'), secret)
  t.ok(after.needsResealing(sealed))
  const resealed = after.seal(after.open(sealed, 'r:1'), 'r:1')
  t.notOk(after.needsResealing(resealed))
  t.equal(resealed.split(':')[2], keyId(k2))
  const forgotten = new Sealer({ current: k2, old: [] })
  t.throws(() => forgotten.open(sealed, 'r:1'), /key this server does not have/)
})

t.test('keys are 32 bytes of base64; errors never echo the key', async (t) => {
  t.same(parseKey(k1.toString('base64'), 'ENCRYPTION_KEY'), k1)
  t.same(parseKey(k1.toString('base64url'), 'ENCRYPTION_KEY'), k1)
  const short = randomBytes(16).toString('base64')
  const err = t.throws(() => parseKey(short, 'ENCRYPTION_KEY')) as Error
  t.match(err.message, /ENCRYPTION_KEY must be 32 bytes/)
  t.notMatch(err.message, short)
})
