// Driver-level conformance: collections and databases (create, list, drop).
// Runs against the embedded server by default and unchanged against a real MongoDB (MONGODB_URI).
import t from 'tap'
import { startTestDatabase } from '../helpers/database.ts'

const { db, client, dbName } = await startTestDatabase(t)

t.test('createCollection, listCollections with a name filter, drop', async (t) => {
  await db.createCollection('adm_alpha')
  await db.collection('adm_beta').insertOne({ x: 1 })
  await t.rejects(db.createCollection('adm_alpha'), { code: 48 }, 'creating an existing collection fails')

  const names = (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name)
  t.ok(names.includes('adm_alpha') && names.includes('adm_beta'))

  const filtered = await db.listCollections({ name: 'adm_beta' }).toArray()
  t.equal(filtered.length, 1)
  t.equal(filtered[0].name, 'adm_beta')
  t.equal(filtered[0].type, 'collection')
  const byRegex = (await db.listCollections({ name: /^adm_/ }).toArray()).map((c) => c.name).sort()
  t.same(byRegex, ['adm_alpha', 'adm_beta'])

  t.equal(await db.collection('adm_beta').drop(), true)
  t.same(await db.listCollections({ name: 'adm_beta' }).toArray(), [])
  t.equal(await db.collection('adm_beta').countDocuments(), 0, 'dropped data is gone')
  await db.collection('adm_alpha').drop()
  t.equal(await db.collection('adm_does_not_exist').drop().catch(() => false), true, 'dropping a missing collection is not an error on MongoDB 7+')
})

t.test('listDatabases includes a database once it has data; dropDatabase removes it', async (t) => {
  const otherName = `${dbName}_other`
  const other = client.db(otherName)
  await other.collection('things').insertOne({ a: 1 })
  const listed = await client.db('admin').admin().listDatabases()
  t.ok(listed.databases.some((d) => d.name === otherName))
  const namesOnly = await client.db('admin').admin().listDatabases({ nameOnly: true })
  t.ok(namesOnly.databases.some((d) => d.name === otherName))

  t.equal(await other.dropDatabase(), true)
  const after = await client.db('admin').admin().listDatabases({ nameOnly: true })
  t.notOk(after.databases.some((d) => d.name === otherName))
  t.same(await other.listCollections().toArray(), [])
})

t.test('renameCollection moves documents and indexes', async (t) => {
  const from = db.collection('adm_rename_from')
  await from.insertMany([{ _id: 1, k: 'a' }, { _id: 2, k: 'b' }] as never[])
  await from.createIndex({ k: 1 }, { unique: true })
  const to = await from.rename('adm_rename_to')
  t.equal(await to.countDocuments(), 2)
  t.ok((await to.indexes()).some((i) => i.name === 'k_1'))
  t.same(await db.listCollections({ name: 'adm_rename_from' }).toArray(), [])
  await t.rejects(to.insertOne({ k: 'a' }), { code: 11000 }, 'the unique index still applies')
})

t.test('ping and buildInfo answer', async (t) => {
  t.equal((await db.command({ ping: 1 })).ok, 1)
  const info = await db.admin().buildInfo()
  t.type(info.version, 'string')
  t.ok(Array.isArray(info.versionArray))
})
