// Start-up and shutdown only: read the configuration, build the app, listen, and on a signal stop
// accepting, let in-flight requests finish, stop background work and close the database.
import closeWithGrace from 'close-with-grace'
import { loadConfig, ConfigError } from './config.ts'
import { buildApp } from './app.ts'

let config
try {
  config = loadConfig()
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`)
    process.exit(1)
  }
  throw err
}

const app = await buildApp(config)

closeWithGrace({ delay: config.SHUTDOWN_GRACE_MS }, async ({ signal, err }) => {
  if (err) app.log.error({ err }, 'shutting down after an error')
  else app.log.info({ signal }, 'shutting down')
  await app.close()
})

try {
  await app.listen({ port: config.PORT, host: config.HOST })
} catch (err) {
  app.log.error({ error: (err as Error).message }, 'could not listen')
  await app.close()
  process.exit(1)
}
