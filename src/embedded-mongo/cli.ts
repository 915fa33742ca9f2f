// `npm run embedded-db`: runs the embedded server until SIGINT/SIGTERM.
//   EMBEDDED_DB       memory | disk      (default disk)
//   DATA_DIR          journal directory  (default ./data, disk only)
//   EMBEDDED_DB_PORT  TCP port           (default 0: any free port)
//   HOST              listen address     (default 127.0.0.1)
// Prints exactly one line on stdout: the mongodb:// URI. Logs go to stderr.
import { startEmbeddedMongo } from './index.ts'

const log = (level: string) => (msg: string): void => { process.stderr.write(`[${level}] ${msg}\n`) }
const logger = { info: log('info'), warn: log('warn'), error: log('error') }

const storage = process.env.EMBEDDED_DB ?? 'disk'
if (storage !== 'memory' && storage !== 'disk') {
  logger.error(`EMBEDDED_DB must be 'memory' or 'disk', got '${storage}'`)
  process.exit(2)
}
const port = Number(process.env.EMBEDDED_DB_PORT ?? 0)
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  logger.error(`EMBEDDED_DB_PORT must be a port number, got '${process.env.EMBEDDED_DB_PORT}'`)
  process.exit(2)
}

const server = await startEmbeddedMongo({
  storage,
  dataDir: storage === 'disk' ? (process.env.DATA_DIR ?? './data') : undefined,
  host: process.env.HOST ?? '127.0.0.1',
  port,
  logger,
})
process.stdout.write(`${server.uri}\n`)

let stopping = false
const stop = (signal: NodeJS.Signals): void => {
  if (stopping) {
    logger.warn(`${signal} again: exiting without waiting for shutdown`)
    process.exit(1)
  }
  stopping = true
  logger.info(`${signal}: shutting down`)
  server.close().then(
    () => { process.exitCode = 0 },
    (err: unknown) => {
      logger.error(`shutdown failed: ${(err as Error).message}`)
      process.exitCode = 1
    },
  )
}
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
