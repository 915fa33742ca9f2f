// `npm start` as an operator (or a process manager) stops it: SIGTERM to the npm process must reach the
// server, which then closes its port and releases DATA_DIR. npm runs the script through `sh -c`, which
// dies on SIGTERM without passing it on unless the script `exec`s the server.
import t from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../helpers/ports.ts'

const root = new URL('../..', import.meta.url).pathname


/** Polls until the server answers (there is no event to await from outside the process group). */
async function waitHealthy(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`exited early (${child.exitCode}):\n${output()}`)
    const ok = await fetch(url).then((r) => r.ok, () => false)
    if (ok) return
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  throw new Error(`no answer within 60 s:\n${output()}`)
}

function startNpm(port: number, dataDir: string): { child: ChildProcess; output: () => string } {
  const child = spawn('npm', ['start'], {
    cwd: root,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, EMBEDDED_DB: 'disk', MONGODB_URI: '', NODE_ENV: 'development', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout!.on('data', (d) => { output += d })
  child.stderr!.on('data', (d) => { output += d })
  return { child, output: () => output }
}

t.test('SIGTERM to `npm start` stops the server: port closed, data directory unlocked', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'signals-'))
  t.teardown(async () => {
    // Should the signal be lost again, the orphaned server named in the lock file must not outlive the test.
    const owner = Number(await readFile(join(dataDir, 'LOCK'), 'utf8').catch(() => ''))
    if (owner > 0 && owner !== process.pid) try { process.kill(owner, 'SIGKILL') } catch { /* already gone */ }
    await rm(dataDir, { recursive: true, force: true })
  })
  const port = await freePort()
  const url = `http://127.0.0.1:${port}/healthz`

  const first = startNpm(port, dataDir)
  t.teardown(() => { if (first.child.exitCode === null) first.child.kill('SIGKILL') })
  await waitHealthy(url, first.child, first.output)
  t.ok(existsSync(join(dataDir, 'LOCK')), 'the running server holds the lock')

  const exited = once(first.child, 'exit')
  first.child.kill('SIGTERM')
  await exited
  t.match(first.output(), /shutting down/, 'the server itself received the signal')
  const refused = await fetch(url).then(() => undefined, (err: Error & { cause?: { code?: string } }) => err.cause?.code)
  t.equal(refused, 'ECONNREFUSED', 'nothing listens on the port after npm exits')
  t.notOk(existsSync(join(dataDir, 'LOCK')), 'the lock file is released')

  const second = startNpm(port, dataDir)
  t.teardown(() => { if (second.child.exitCode === null) second.child.kill('SIGKILL') })
  await waitHealthy(url, second.child, second.output)
  t.pass('a second start on the same port and data directory works')
  const secondExit = once(second.child, 'exit')
  second.child.kill('SIGTERM')
  const [code] = await secondExit
  t.equal(code, 0, 'npm exits cleanly with the server')
})
