// npm run rotate-keys — re-seals every stored credential with ENCRYPTION_KEY, opening old values with
// ENCRYPTION_KEYS_OLD. With the embedded database, stop the service first: one process owns DATA_DIR.
import { MongoClient } from 'mongodb'
import { loadConfig, ConfigError } from '../src/config.ts'
import { loadDotEnv } from '../src/env-file.ts'
import { startEmbeddedMongo, DataDirectoryDamagedError, DataDirectoryInUseError } from '../src/embedded-mongo/index.ts'
import { Sealer } from '../src/crypto/sealer.ts'
import { loadKeyRing } from '../src/crypto/keyring.ts'
import { rotateKeys } from '../src/crypto/rotate.ts'

let config
try {
  loadDotEnv() // the same .env as `npm start`, so the keys kept there are found
  config = loadConfig()
} catch (err) {
  if (err instanceof ConfigError) { process.stderr.write(`${err.message}\n`); process.exit(1) }
  throw err
}
const log = { warn: (_o: object, msg: string) => process.stderr.write(`${msg}\n`) }
const sealer = new Sealer(await loadKeyRing(config, log))
const embedded = config.MONGODB_URI ? undefined : await startEmbeddedMongo({ storage: config.EMBEDDED_DB, dataDir: config.DATA_DIR }).catch((err: unknown) => {
  if (err instanceof DataDirectoryDamagedError) {
    process.stderr.write(`Cannot run: ${err.message}\n`)
    process.exit(1)
  }
  if (!(err instanceof DataDirectoryInUseError)) throw err
  process.stderr.write(`Cannot run: ${err.message} (stop the service first)\n`)
  process.exit(1)
})
const client = await MongoClient.connect(config.MONGODB_URI ?? embedded!.uri)
try {
  const reports = await rotateKeys(client.db(config.MONGODB_DB), sealer)
  let failed = 0
  for (const r of reports) {
    process.stdout.write(`${r.collection}: ${r.resealed} re-sealed, ${r.current} already current, ${r.failed.length} could not be opened${r.failed.length ? ` (${r.failed.join(', ')})` : ''}\n`)
    failed += r.failed.length
  }
  process.stdout.write(`current key id: ${sealer.currentKeyId}\n`)
  process.exitCode = failed ? 2 : 0
} finally {
  await client.close()
  await embedded?.close()
}
