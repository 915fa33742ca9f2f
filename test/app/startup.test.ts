// Start-up as an operator meets it, with the real server process: what stops it (one line on stderr
// naming the problem, exit code 1, before the database touches DATA_DIR), what it reads (.env) and how it
// logs (readable on a terminal, JSON otherwise).
import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { pino } from 'pino'
import { loggerOptions, logDestination } from '../../src/logger.ts'
import { loadConfig, ConfigError } from '../../src/config.ts'
import { runToExit, type Exited } from '../helpers/run-to-exit.ts'

const server = new URL('../../src/server.ts', import.meta.url).pathname
// The loader by absolute URL, so the server can run with any working directory.
const tsx = import.meta.resolve('tsx')
const key = Buffer.alloc(32, 7).toString('base64')

async function tempDir(t: { teardown(fn: () => unknown): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'startup-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

/** Runs the server to its exit (every case here stops at start-up) and returns what it said. */
function runServer(env: Record<string, string>, cwd: string): Promise<Exited> {
  return runToExit([server], { HOST: '127.0.0.1', PORT: '0', ...env }, cwd)
}

t.test('production without ENCRYPTION_KEY stops with one line, before DATA_DIR is touched', async (t) => {
  const dir = await tempDir(t)
  const dataDir = join(dir, 'data')
  const r = await runServer({ NODE_ENV: 'production', JWT_SECRET: 'j'.repeat(48), DATA_DIR: dataDir }, dir)
  t.equal(r.code, 1)
  t.match(r.stderr, /^Invalid configuration: ENCRYPTION_KEY is required in production[^\n]*\n$/)
  t.equal(r.stdout, '', 'nothing started, so nothing logged')
  t.notOk(existsSync(dataDir), 'the embedded database never opened DATA_DIR')
})

t.test('JWT_SECRET and a malformed key are refused by the same configuration check, without echoing', async (t) => {
  const noJwt = t.throws(() => loadConfig({ NODE_ENV: 'production', ENCRYPTION_KEY: key })) as Error
  t.match(noJwt.message, /^Invalid configuration: JWT_SECRET is required in production/)
  const bad = Buffer.alloc(20, 9).toString('base64').padEnd(44, 'A')
  for (const env of [{ ENCRYPTION_KEY: bad }, { ENCRYPTION_KEY: key, ENCRYPTION_KEYS_OLD: `${key},${bad}` }]) {
    const err = t.throws(() => loadConfig(env)) as Error
    t.type(err, ConfigError)
    t.match(err.message, /^Invalid configuration: ENCRYPTION_KEY(S_OLD\[1\])? must be 32 bytes/)
    t.notMatch(err.message, bad)
  }
})

t.test('a data directory locked by a live process stops start-up with one line naming it', async (t) => {
  const dir = await tempDir(t)
  const dataDir = join(dir, 'data')
  // The lock file names its owner; this test process is alive, so the directory is taken.
  await mkdir(dataDir)
  await writeFile(join(dataDir, 'LOCK'), String(process.pid))
  const r = await runServer({ NODE_ENV: 'development', DATA_DIR: dataDir, EMBEDDED_DB: 'disk' }, dir)
  t.equal(r.code, 1)
  t.equal(r.stderr.split('\n').filter(Boolean).length, 1, `one line: ${r.stderr}`)
  t.match(r.stderr, new RegExp(`^Cannot start \\(is another instance of this service, or npm run rotate-keys, running\\?\\): data directory \\S+ is locked by pid ${process.pid} \\(since [^)]+\\); if no database server is running there, check with \`ps -p ${process.pid}\` and remove \\S+/LOCK\\b`))
  t.notMatch(r.stderr, /\n\s+at /, 'no stack trace')
})

t.test('.env in the working directory is read, and the real environment wins over it', async (t) => {
  const dir = await tempDir(t)
  // Each value is invalid, so the first complaint (in schema order) shows which source was used.
  await writeFile(join(dir, '.env'), 'LOG_LEVEL=loud\nEMBEDDED_DB=floppy\n')
  const fromFile = await runServer({}, dir)
  t.equal(fromFile.code, 1)
  t.match(fromFile.stderr, /^Invalid configuration: LOG_LEVEL /, '.env was loaded')
  const envWins = await runServer({ LOG_LEVEL: 'info' }, dir)
  t.equal(envWins.code, 1)
  t.match(envWins.stderr, /^Invalid configuration: EMBEDDED_DB /, 'LOG_LEVEL came from the environment, not .env')
})

t.test('logs are readable lines on a terminal and JSON elsewhere', async (t) => {
  const terminal = Object.assign(new PassThrough(), { isTTY: true })
  let text = ''
  terminal.on('data', (d) => { text += d })
  const log = pino(loggerOptions({ LOG_LEVEL: 'info' }), logDestination(terminal)!)
  log.info({ password: 'hunter2' }, 'listening')
  t.match(text, /INFO.*listening/)
  t.throws(() => JSON.parse(text.split('\n')[0]!), 'not JSON')
  t.notMatch(text, /hunter2/, 'redaction still applies')
  t.equal(logDestination(Object.assign(new PassThrough(), { isTTY: false })), undefined, 'a pipe gets pino\'s JSON')
})

// `script` (util-linux) gives the server a pseudo-terminal, as an operator's shell would.
const hasScript = existsSync('/usr/bin/script')
t.test('on a terminal the running server logs readable lines', { skip: hasScript ? false : 'needs script(1) for a pseudo-terminal' }, async (t) => {
  const dir = await tempDir(t)
  const command = `exec ${JSON.stringify(process.execPath)} --import ${JSON.stringify(tsx)} ${JSON.stringify(server)}`
  const child = spawn('/usr/bin/script', ['-qfec', command, '/dev/null'], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', NODE_ENV: 'test', EMBEDDED_DB: 'memory', LOG_LEVEL: 'info', TERM: 'dumb' },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  let out = ''
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d) => { out += d; if (/docs on http/.test(out)) resolve() })
    child.once('exit', () => reject(new Error(`exited before listening:\n${out}`)))
  })
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  await exited
  t.match(out, /INFO.*API on http:\/\/127\.0\.0\.1:\d+\/v1\/api, docs on/)
  t.notMatch(out, /\{"level":/, 'no JSON lines')
})
