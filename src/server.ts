// Start-up and shutdown only: read the configuration, build the app, listen, and on a signal stop
// accepting, let in-flight requests finish, stop background work and close the database.
// Any start-up failure an operator can fix ends the process with one line on stderr and exit code 1.
import type { AddressInfo } from 'node:net'
import closeWithGrace from 'close-with-grace'
import { loadConfig, ConfigError, type Config } from './config.ts'
import { buildApp } from './app.ts'
import { loadDotEnv } from './env-file.ts'
import { logDestination, redactText } from './logger.ts'
import { DataDirectoryDamagedError, DataDirectoryInUseError } from './embedded-mongo/index.ts'
import type { App } from './app-types.ts'

function stop(message: string): never {
  process.stderr.write(`${message}\n`)
  process.exit(1)
}

let config: Config
try {
  loadDotEnv()
  config = loadConfig()
} catch (err) {
  if (err instanceof ConfigError) stop(err.message)
  stop(`Cannot start: ${redactText((err as Error).message)}`)
}

let app: App
try {
  app = await buildApp(config, { logStream: logDestination() })
} catch (err) {
  // TLS files that cannot serve (src/tls/server-tls.ts) are read while the app is built.
  if (err instanceof ConfigError) stop(err.message)
  if (err instanceof DataDirectoryInUseError) stop(`Cannot start (is another instance of this service, or npm run rotate-keys, running?): ${err.message}`)
  // Damaged storage is refused before anything changes; the message says what to run.
  if (err instanceof DataDirectoryDamagedError) stop(`Cannot start: ${err.message}`)
  // Anything else is not the operator's doing: keep the stack for whoever debugs it.
  process.stderr.write(`${redactText((err as Error).stack ?? String(err))}\n`)
  stop(`Cannot start: ${redactText((err as Error).message)}`)
}

closeWithGrace({ delay: config.SHUTDOWN_GRACE_MS }, async ({ signal, err }) => {
  if (err) app.log.error({ err }, 'shutting down after an error')
  else app.log.info({ signal }, 'shutting down')
  await app.close()
})

try {
  await app.listen({ port: config.PORT, host: config.HOST })
} catch (err) {
  await app.close()
  stop(`Cannot start: could not listen on ${config.HOST}:${config.PORT}: ${(err as Error).message}`)
}

// Where to point a browser: a wildcard listen address is reachable as localhost.
const { port } = app.server.address() as AddressInfo
const host = ['0.0.0.0', '::', ''].includes(config.HOST) ? 'localhost' : config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST
const scheme = config.TLS || config.TLS_CERT_FILE ? 'https' : 'http'
const base = `${scheme}://${host}:${port}`
app.log.info(`API on ${base}/v1/api, docs on ${base}/docs`)
