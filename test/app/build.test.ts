// What ships: `npm run build` output runs without tsx (the server and the rotate-keys script), and the
// deployment files say what docs/development.md promises. There is no Docker engine on the build machines, so the
// Dockerfile and docker-compose.yml are checked as files, not run.
import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, readFileSync } from 'node:fs'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parse } from 'yaml'
import { freePort } from '../helpers/ports.ts'

// Longer than the suite's 120 s per file: this file does much more work, and a loaded machine doubles it.
t.setTimeout(240_000)

const root = new URL('../..', import.meta.url).pathname


async function run(cmd: string, args: string[], env: Record<string, string | undefined> = process.env): Promise<{ code: number | null; output: string }> {
  const child = spawn(cmd, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (d) => { output += d })
  child.stderr.on('data', (d) => { output += d })
  const [code] = await once(child, 'exit')
  return { code, output }
}

t.test('npm run build output runs: the server answers /healthz, rotate-keys runs', async (t) => {
  // Inside node_modules so the compiled modules resolve their dependencies as dist/ would.
  await mkdir(join(root, 'node_modules/.cache'), { recursive: true })
  const out = await mkdtemp(join(root, 'node_modules/.cache/build-test-'))
  t.teardown(() => rm(out, { recursive: true, force: true }))
  // Emit only: type errors are the business of `tsc --noEmit`; this proves the emitted code runs.
  const build = await run('npm', ['run', 'build', '--', out, '--no-check'])
  t.equal(build.code, 0, build.output)
  t.ok(existsSync(join(out, 'src/server.js')) && existsSync(join(out, 'scripts/rotate-keys.js')))
  t.notOk(existsSync(join(out, 'test')), 'tests are not shipped')

  const port = await freePort()
  const dataDir = await mkdtemp(join(tmpdir(), 'build-test-data-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))
  const key = Buffer.alloc(32, 3).toString('base64')
  const env = { PATH: process.env.PATH, NODE_ENV: 'production', JWT_SECRET: 'j'.repeat(48), ENCRYPTION_KEY: key, DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn' }
  // No --import tsx: plain JavaScript.
  const server = spawn(process.execPath, [join(out, 'src/server.js')], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  server.stdout.on('data', (d) => { output += d })
  server.stderr.on('data', (d) => { output += d })
  t.teardown(() => { if (server.exitCode === null) server.kill('SIGKILL') })
  const deadline = Date.now() + 45_000
  let health: Response | undefined
  while (!health && Date.now() < deadline) {
    if (server.exitCode !== null) break
    health = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined)
    if (!health) await new Promise((resolve) => setTimeout(resolve, 200))
  }
  t.equal(health?.status, 200, `the compiled server answers /healthz\n${output}`)
  t.match(await health?.json(), { status: 'ok', version: JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version })
  const landing = await fetch(`http://127.0.0.1:${port}/`)
  t.equal(landing.status, 200, 'the landing page template was shipped')
  const exited = once(server, 'exit')
  server.kill('SIGTERM')
  t.equal((await exited)[0], 0)

  // The stopped server released DATA_DIR, so the compiled rotate-keys script can open it.
  const rotate = await run(process.execPath, [join(out, 'scripts/rotate-keys.js')], env)
  t.equal(rotate.code, 0, rotate.output)
  t.match(rotate.output, /current key id: /)
})

t.test('docker-compose.yml requires JWT_SECRET and ENCRYPTION_KEY with a message saying how to make them', async (t) => {
  const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8')) as { services: Record<string, { environment?: Record<string, string>; build?: unknown; healthcheck?: unknown }> }
  const api = compose.services.api!
  t.ok(api.build, 'the api service is built from this repository')
  for (const name of ['JWT_SECRET', 'ENCRYPTION_KEY']) {
    // ${VAR:?message}: compose refuses to start, printing the message, when VAR is unset or empty.
    const value = api.environment?.[name]
    t.match(value, new RegExp(`^\\$\\{${name}:\\?[^}]*openssl rand[^}]*\\}$`), `${name} is required by interpolation`)
  }
  t.equal(api.environment?.NODE_ENV, 'production')
})

t.test('the Dockerfile runs the compiled server on the Node CI runs (.nvmrc), unprivileged, with a volume and a PORT-aware health check', async (t) => {
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8')
  const pinned = readFileSync(join(root, '.nvmrc'), 'utf8').trim()
  t.match(pinned, /^24\.\d+\.\d+$/, '.nvmrc names one exact Node 24')
  const from = [...dockerfile.matchAll(/^FROM\s+(\S+)/gm)].map((m) => m[1])
  t.ok(from.length >= 2 && from.every((image) => image === `node:${pinned}-bookworm-slim`), `every stage is node:${pinned} (${from.join(', ')})`)
  t.match(dockerfile, /^RUN npm run build\b/m)
  t.match(dockerfile, /^CMD \["node", "dist\/src\/server\.js"\]$/m)
  t.match(dockerfile, /^USER node$/m)
  t.match(dockerfile, /^VOLUME \/data$/m)
  t.match(dockerfile, /^ENV [^\n]*DATA_DIR=\/data/m)
  const healthcheck = dockerfile.match(/^HEALTHCHECK .*$/m)?.[0] ?? ''
  t.match(healthcheck, /process\.env\.PORT/, 'the health check follows PORT')
  t.match(dockerfile, /scripts\.rotate-keys="node dist\/scripts\/rotate-keys\.js"/, 'npm run rotate-keys runs the compiled script in the image')
})

t.test('LICENSE matches package.json', async (t) => {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { license: string }
  t.equal(pkg.license, 'Apache-2.0')
  const license = readFileSync(join(root, 'LICENSE'), 'utf8')
  t.match(license, /^\s*Apache License\s+Version 2\.0, January 2004/)
  t.match(license, /END OF TERMS AND CONDITIONS/)
})
