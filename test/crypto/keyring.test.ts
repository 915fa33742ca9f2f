import t from 'tap'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, statSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadKeyRing } from '../../src/crypto/keyring.ts'
import { keyId } from '../../src/crypto/sealer.ts'

const quiet = { warn: () => undefined }

t.test('production refuses to start without ENCRYPTION_KEY', async (t) => {
  await t.rejects(loadKeyRing({ NODE_ENV: 'production', DATA_DIR: '/nonexistent' }, quiet), /ENCRYPTION_KEY is required in production/)
})

t.test('the configured key seals; old keys join the ring; a bad key is named', async (t) => {
  const k = randomBytes(32)
  const old = randomBytes(32)
  const ring = await loadKeyRing({ NODE_ENV: 'production', DATA_DIR: '.', ENCRYPTION_KEY: k.toString('base64'), ENCRYPTION_KEYS_OLD: ` ${old.toString('base64')} ,` }, quiet)
  t.equal(keyId(ring.current), keyId(k))
  t.same(ring.old.map(keyId), [keyId(old)])
  await t.rejects(loadKeyRing({ NODE_ENV: 'production', DATA_DIR: '.', ENCRYPTION_KEY: randomBytes(16).toString('base64').padEnd(44, 'A') }, quiet), /ENCRYPTION_KEY must be 32 bytes/)
})

t.test('development keeps a generated key in the data directory, readable by the owner only', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keyring-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const warnings: string[] = []
  const first = await loadKeyRing({ NODE_ENV: 'development', DATA_DIR: dir }, { warn: (_o, m) => warnings.push(m) })
  const again = await loadKeyRing({ NODE_ENV: 'development', DATA_DIR: dir }, quiet)
  t.same(again.current, first.current, 'the same key after a restart')
  t.equal(statSync(join(dir, 'encryption-key')).mode & 0o777, 0o600)
  t.equal(Buffer.from(readFileSync(join(dir, 'encryption-key'), 'utf8').trim(), 'base64').length, 32)
  t.match(warnings[0], /ENCRYPTION_KEY is not set/)
})
