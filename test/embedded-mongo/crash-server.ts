// Child process for crash.test.ts (not a test itself): the embedded server on disk storage in DATA_DIR
// with the given compaction threshold, on a loopback TCP port; prints its URI and runs until killed.
import { startEmbeddedMongoServer } from '../../src/embedded-mongo/server.ts'

const [dataDir, compactJournalBytes] = process.argv.slice(2)
const log = (m: string): void => { process.stderr.write(`${m}\n`) }
const server = await startEmbeddedMongoServer({
  storage: 'disk',
  dataDir,
  compactJournalBytes: Number(compactJournalBytes),
  tcp: { port: 0 },
  logger: { info: log, warn: log, error: log },
})
process.stdout.write(`${server.uri}\n`)
