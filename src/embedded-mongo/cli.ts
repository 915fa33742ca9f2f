// `npm run embedded-db`: runs the embedded server until SIGINT/SIGTERM.
//   EMBEDDED_DB       memory | disk      (default disk)
//   DATA_DIR          journal directory  (default ./data, disk only)
//   EMBEDDED_DB_PORT  TCP port; unset = a Unix socket only this user can open (the server has no
//                     authentication, so TCP lets any local process in)
//   EMBEDDED_DB_HOST  TCP listen address (default 127.0.0.1; only with EMBEDDED_DB_PORT)
// Prints exactly one line on stdout: the mongodb:// URI. Logs go to stderr. A data directory that is
// damaged, in use, not writable or on a full disk stops it with one line on stderr and exit code 1.
//
// `npm run embedded-db -- repair DATA_DIR [BACKUP_DIR]` salvages a data directory start-up refused
// (storage/repair.ts) and prints what it kept and what it could not. The copy made first goes to
// BACKUP_DIR (which must not exist yet), by default DATA_DIR.bak-<UTC timestamp> next to it.
import { startEmbeddedMongo, DataDirectoryDamagedError, DataDirectoryInUseError } from './index.ts'
import { describeRepair, repairDataDirectory } from './storage/repair.ts'
import { startupFailure } from './startup-failure.ts'

const log = (level: string) => (msg: string): void => { process.stderr.write(`[${level}] ${msg}\n`) }
const logger = { info: log('info'), warn: log('warn'), error: log('error') }

const [command, ...args] = process.argv.slice(2)
if (command === 'repair') {
  if (args.length !== 1 && args.length !== 2) {
    logger.error('usage: npm run embedded-db -- repair DATA_DIR [BACKUP_DIR]')
    process.exit(2)
  }
  try {
    const report = await repairDataDirectory(args[0]!, new Date(), args[1])
    for (const line of describeRepair(report)) process.stdout.write(`${line}\n`)
    process.exit(0)
  } catch (err) {
    logger.error(`repair failed: ${(err as Error).message}`)
    process.exit(1)
  }
} else if (command !== undefined) {
  logger.error(`unknown command '${command}' (the only one is: repair DATA_DIR [BACKUP_DIR])`)
  process.exit(2)
}

const storage = process.env.EMBEDDED_DB ?? 'disk'
if (storage !== 'memory' && storage !== 'disk') {
  logger.error(`EMBEDDED_DB must be 'memory' or 'disk', got '${storage}'`)
  process.exit(2)
}
const portVar = process.env.EMBEDDED_DB_PORT
const port = Number(portVar)
if (portVar !== undefined && (portVar === '' || !Number.isInteger(port) || port < 0 || port > 65535)) {
  logger.error(`EMBEDDED_DB_PORT must be a port number, got '${process.env.EMBEDDED_DB_PORT}'`)
  process.exit(2)
}

const dataDir = storage === 'disk' ? (process.env.DATA_DIR ?? './data') : undefined
const server = await startEmbeddedMongo({
  storage,
  dataDir,
  tcp: portVar === undefined ? undefined : { host: process.env.EMBEDDED_DB_HOST ?? '127.0.0.1', port },
  logger,
}).catch((err: unknown) => {
  const line = startupFailure(err, dataDir)
  if (line === undefined) throw err // not an operator's problem: a bug, whose stack helps
  logger.error(line)
  process.exit(1)
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
