// Storage goes through the official driver only. With MONGODB_URI unset, the embedded wire-compatible
// server is started on a Unix socket only this user can open (it has no authentication) and the driver
// connects to it over that socket, exactly as it would to a real MongoDB.
import fp from 'fastify-plugin'
import { MongoClient, type Db } from 'mongodb'
import { startEmbeddedMongo, type EmbeddedMongo } from '../src/embedded-mongo/index.ts'
import { indexSetups } from '../src/repositories/indexes.ts'

declare module 'fastify' {
  interface FastifyInstance { db: Db; mongo: MongoClient; databaseWrites: DatabaseWrites }
}

/**
 * Whether the database is refusing changes (a full or failing disk), for /readyz. The error handler marks
 * it when a request's write is refused; from then on readiness tries one write per check, and the
 * first that succeeds clears it, so a healthy database costs readiness only its ping.
 */
export interface DatabaseWrites {
  readonly failing: boolean
  failed(): void
  /** Writes one small document; clears `failing` when that works, throws the driver's error otherwise. */
  probe(): Promise<void>
}

// Holds the single document readiness rewrites while writes are failing. The probe carries 64 KiB: a full
// filesystem still takes a few bytes into the journal's last partly used block, so a tiny probe would
// call the database ready while every real save still fails.
const PROBE_COLLECTION = 'readiness_probe'
const PROBE_PADDING = 'x'.repeat(64 * 1024)

function databaseWrites(db: Db): DatabaseWrites {
  let failing = false
  return {
    get failing() { return failing },
    failed() { failing = true },
    async probe() {
      await db.collection<{ _id: string; at: Date; padding: string }>(PROBE_COLLECTION).updateOne({ _id: 'probe' }, { $set: { at: new Date(), padding: PROBE_PADDING } }, { upsert: true })
      failing = false
    },
  }
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
    // A request waits at most this long for a database that is away, then answers 503 (plugins/errors.ts).
    client = await MongoClient.connect(uri, { serverSelectionTimeoutMS: config.MONGODB_SERVER_SELECTION_TIMEOUT_MS, appName: 'cluster-workflow-orchestrator' })
  } catch (err) {
    await embedded?.close()
    // The driver's text can carry the URI (and so a password): log only its class.
    app.log.error({ error: (err as Error).name }, 'could not connect to the database')
    throw new Error('could not connect to the database')
  }
  const db = client.db(config.MONGODB_DB)
  for (const setup of indexSetups) await setup(db, { eventRetentionS: config.EVENT_RETENTION_S })
  app.decorate('mongo', client)
  app.decorate('db', db)
  app.decorate('databaseWrites', databaseWrites(db))
  app.addHook('onClose', async () => {
    await client.close()
    await embedded?.close()
  })
}, { name: 'database', dependencies: ['config'] })
