// The real start command (what `npm start` execs): serves on the configured port, says where the API and
// the docs are, logs JSON when its output is not a terminal, and shuts down cleanly on SIGTERM.
import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { freePort } from '../helpers/ports.ts'

const root = new URL('../..', import.meta.url).pathname


t.test('the server answers /healthz, then exits 0 on SIGTERM', async (t) => {
  const port = await freePort()
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: root,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', EMBEDDED_DB: 'memory', MONGODB_URI: '', LOG_LEVEL: 'info', NODE_ENV: 'test' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  let stdout = ''
  child.stdout.on('data', (d) => { output += d; stdout += d })
  child.stderr.on('data', (d) => { output += d })
  const exited = once(child, 'exit')
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })

  // Await the "listening" log line rather than sleeping.
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not listening within 60 s:\n${output}`)), 60_000)
    child.stdout.on('data', () => { if (output.includes('docs on')) { clearTimeout(timer); resolve() } })
    child.on('exit', () => { clearTimeout(timer); reject(new Error(`exited early:\n${output}`)) })
  })
  const lines = stdout.trim().split('\n')
  const messages = lines.map((line) => (JSON.parse(line) as { msg: string }).msg) // every line is JSON: output is a pipe
  t.ok(messages.includes(`API on http://127.0.0.1:${port}/v1/api, docs on http://127.0.0.1:${port}/docs`), 'the start-up line says where to go')
  const res = await fetch(`http://127.0.0.1:${port}/healthz`)
  t.equal(res.status, 200)
  const api = await fetch(`http://127.0.0.1:${port}/v1/api/anything`)
  t.ok([401, 404].includes(api.status))
  t.same(Object.keys((await api.json()) as object), ['error'])

  child.kill('SIGTERM')
  const [code] = await exited
  t.equal(code, 0, 'clean exit')
  t.match(output, /shutting down/)
})

t.test('a bad variable stops start-up with one line naming it', async (t) => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: root, env: { ...process.env, PORT: 'seventy' }, stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (d) => { stderr += d })
  const [code] = await once(child, 'exit')
  t.equal(code, 1)
  t.match(stderr.trim(), /^Invalid configuration: PORT [^\n]+$/)
})
