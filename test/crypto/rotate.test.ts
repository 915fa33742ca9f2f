import t from 'tap'
import { randomBytes } from 'node:crypto'
import { startTestDatabase } from '../helpers/database.ts'
import { Sealer, keyId } from '../../src/crypto/sealer.ts'
import { rotateKeys } from '../../src/crypto/rotate.ts'

const { db } = await startTestDatabase(t)
const oldKey = randomBytes(32)
const newKey = randomBytes(32)
const before = new Sealer({ current: oldKey, old: [] })
const ids = ['a1', 'a2', 'a3']
await db.collection('clusters').insertMany(ids.map((id) => ({ _id: id as never, name: id, credentials_sealed: before.seal({ token: `secret-${id}` }, `clusters:${id}`) })))
await db.collection('clusters').insertOne({ _id: 'moved' as never, name: 'moved', credentials_sealed: before.seal({ token: 'x' }, 'clusters:elsewhere') })

t.test('every record is re-sealed with the current key and still opens', async (t) => {
  const after = new Sealer({ current: newKey, old: [oldKey] })
  const [clusters] = await rotateKeys(db, after)
  t.same(clusters, { collection: 'clusters', resealed: 3, current: 0, failed: ['moved'] })
  const newOnly = new Sealer({ current: newKey, old: [] })
  for (const id of ids) {
    const doc = await db.collection('clusters').findOne({ _id: id as never })
    t.equal(doc!.credentials_sealed.split(':')[2], keyId(newKey))
    t.same(newOnly.open(doc!.credentials_sealed, `clusters:${id}`), { token: `secret-${id}` }, `${id} opens without the old key`)
  }
})

t.test('a second run has nothing to do', async (t) => {
  const [clusters] = await rotateKeys(db, new Sealer({ current: newKey, old: [oldKey] }))
  t.match(clusters, { resealed: 0, current: 3 })
})

t.test('npm run rotate-keys re-seals an embedded on-disk database', { skip: process.env.MONGODB_URI ? 'runs against the embedded database only' : false }, async (t) => {
  const { mkdtempSync, rmSync } = await import('node:fs')
  const { tmpdir } = await import('node:os')
  const { join } = await import('node:path')
  const { execFile } = await import('node:child_process')
  const { MongoClient } = await import('mongodb')
  const { startEmbeddedMongo } = await import('../../src/embedded-mongo/index.ts')
  const dataDir = mkdtempSync(join(tmpdir(), 'rotate-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const open = async () => {
    const server = await startEmbeddedMongo({ storage: 'disk', dataDir })
    const client = await MongoClient.connect(server.uri)
    return { coll: client.db('cluster_workflows').collection('clusters'), close: async () => { await client.close(); await server.close() } }
  }
  let s = await open()
  await s.coll.insertOne({ _id: 'c1' as never, credentials_sealed: before.seal({ token: 't1' }, 'clusters:c1') })
  await s.close()
  const env = { ...process.env, MONGODB_URI: '', EMBEDDED_DB: 'disk', DATA_DIR: dataDir, NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(48), ENCRYPTION_KEY: newKey.toString('base64'), ENCRYPTION_KEYS_OLD: oldKey.toString('base64') }
  const out = await new Promise<{ code: number; stdout: string }>((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'scripts/rotate-keys.ts'], { cwd: new URL('../..', import.meta.url).pathname, env }, (err, stdout) => resolve({ code: err ? (err as { code?: number }).code ?? 1 : 0, stdout }))
  })
  t.equal(out.code, 0, out.stdout)
  t.match(out.stdout, /clusters: 1 re-sealed, 0 already current, 0 could not be opened/)
  s = await open()
  const doc = await s.coll.findOne({ _id: 'c1' as never })
  await s.close()
  t.same(new Sealer({ current: newKey, old: [] }).open(doc!.credentials_sealed, 'clusters:c1'), { token: 't1' })
})
