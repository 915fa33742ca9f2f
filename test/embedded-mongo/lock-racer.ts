// Child process for dir-lock.test.ts (not a test itself): says "ready", waits for "go" on stdin, then
// tries to lock DATA_DIR (argv[2]) and prints one JSON line with the outcome. It holds a lock it got
// until stdin closes, so a later racer cannot take it legitimately after a release.
import { createInterface } from 'node:readline'
import { lockDataDirectory } from '../../src/embedded-mongo/storage/dir-lock.ts'

const dir = process.argv[2]!
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]()
process.stdout.write('ready\n')
await lines.next()
let outcome: { pid: number; locked: boolean; error?: string }
try {
  await lockDataDirectory(dir)
  outcome = { pid: process.pid, locked: true }
} catch (err) {
  outcome = { pid: process.pid, locked: false, error: (err as Error).message }
}
process.stdout.write(`${JSON.stringify(outcome)}\n`)
await lines.next()
process.exit(0)
