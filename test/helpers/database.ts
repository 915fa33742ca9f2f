// One database per test file: the embedded server in memory by default, or a uniquely named database on
// the real MongoDB named by MONGODB_URI, so the same suite runs unchanged against both.
import { randomBytes } from 'node:crypto'
import { MongoClient, type Db } from 'mongodb'
import { startEmbeddedMongo } from '../../src/embedded-mongo/index.ts'

export interface TestDatabase {
  uri: string
  dbName: string
  client: MongoClient
  db: Db
  close(): Promise<void>
}

interface Teardown { teardown(fn: () => unknown): void }

export async function startTestDatabase(t?: Teardown): Promise<TestDatabase> {
  const dbName = `test_${randomBytes(6).toString('hex')}`
  const external = process.env.MONGODB_URI
  const embedded = external ? undefined : await startEmbeddedMongo({ storage: 'memory', ttlSweepIntervalMs: 200 })
  const uri = external ?? embedded!.uri
  const client = await MongoClient.connect(uri, { serverSelectionTimeoutMS: 5000 })
  const db = client.db(dbName)
  const close = async () => {
    if (external) await db.dropDatabase().catch(() => undefined)
    await client.close()
    await embedded?.close()
  }
  t?.teardown(close)
  return { uri, dbName, client, db, close }
}
