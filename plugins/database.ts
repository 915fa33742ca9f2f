// Storage goes through the official driver only. With MONGODB_URI unset, the embedded wire-compatible
// server is started on a Unix socket only this user can open (it has no authentication) and the driver
// connects to it over that socket, exactly as it would to a real MongoDB.
import fp from 'fastify-plugin'
import { MongoClient, type Db } from 'mongodb'
import { startEmbeddedMongo, type EmbeddedMongo } from '../src/embedded-mongo/index.ts'
import { indexSetups } from '../src/repositories/indexes.ts'

declare module 'fastify' {
  interface FastifyInstance { db: Db; mongo: MongoClient }
}

export default fp(async (app) => {
  const { config } = app
  let embedded: EmbeddedMongo | undefined
  if (!config.MONGODB_URI) {
    embedded = await startEmbeddedMongo({
      storage: config.EMBEDDED_DB,
      dataDir: config.DATA_DIR,
      ttlSweepIntervalMs: config.TTL_SWEEP_INTERVAL_MS,
      logger: {
        info: (m) => app.log.info({ component: 'embedded-mongo' }, m),
        warn: (m) => app.log.warn({ component: 'embedded-mongo' }, m),
        error: (m) => app.log.error({ component: 'embedded-mongo' }, m),
      },
    })
    app.log.info({ storage: config.EMBEDDED_DB }, 'embedded database started')
  }
  const uri = config.MONGODB_URI ?? embedded!.uri
  let client: MongoClient
  try {
    client = await MongoClient.connect(uri, { serverSelectionTimeoutMS: 10_000, appName: 'cluster-workflow-orchestrator' })
  } catch (err) {
    await embedded?.close()
    // The driver's text can carry the URI (and so a password): log only its class.
    app.log.error({ error: (err as Error).name }, 'could not connect to the database')
    throw new Error('could not connect to the database')
  }
  const db = client.db(config.MONGODB_DB)
  for (const setup of indexSetups) await setup(db)
  app.decorate('mongo', client)
  app.decorate('db', db)
  app.addHook('onClose', async () => {
    await client.close()
    await embedded?.close()
  })
}, { name: 'database', dependencies: ['config'] })
