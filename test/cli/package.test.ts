// The package's `cwo` works from its tarball: the CLI compiled as the build compiles it (tsconfig.build.json,
// emit only), laid out as `npm run build` lays out dist/, packed with `npm pack` under the repository's own
// package.json (its `bin` and `files`), unpacked, and run with plain node (no tsx) against a live service.
// Only bin.ts and what it imports are compiled: the whole build is test/app/dist-deploy.test.ts's business,
// and compiling 400 modules again here would cost half a minute.
import t from 'tap'
import { execFile } from 'node:child_process'
import { chmod, cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'

const root = new URL('../..', import.meta.url).pathname
const run = promisify(execFile)
const timings: Record<string, number> = {}
async function timed<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const started = performance.now()
  try { return await fn() } finally { timings[name] = Math.round(performance.now() - started) }
}

// Inside the repository's node_modules so the compiler finds @types/node from the temporary tsconfig.
await mkdir(join(root, 'node_modules/.cache'), { recursive: true })
const tmp = await mkdtemp(join(root, 'node_modules/.cache/cwo-pack-'))
t.teardown(() => rm(tmp, { recursive: true, force: true }))
const staged = join(tmp, 'staged')
const rootPkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string; bin: { cwo: string } }

await timed('compile', async () => {
  await writeFile(join(tmp, 'tsconfig.json'), JSON.stringify({
    extends: join(root, 'tsconfig.build.json'),
    compilerOptions: { rootDir: root, outDir: join(staged, 'dist'), sourceMap: false },
    files: [join(root, 'src/cli/bin.ts')],
    include: [],
  }))
  await run(process.execPath, [createRequire(import.meta.url).resolve('typescript/bin/tsc'), '-p', join(tmp, 'tsconfig.json'), '--noCheck'], { cwd: root, timeout: 60_000 })
  // As scripts/build.ts does: the package's own package.json beside the sources (app-info reads it), and at
  // the top, where npm pack takes `bin` and `files` from.
  await cp(join(root, 'package.json'), join(staged, 'dist/package.json'))
  await cp(join(root, 'package.json'), join(staged, 'package.json'))
})

const packed = await timed('npm pack', async () => {
  const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', tmp], { cwd: staged, timeout: 60_000 })
  return (JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string; mode: number }> }>)[0]
})
// Outside the repository, so the only dependencies the package finds are those of its node_modules link.
const unpacked = await mkdtemp(join(tmpdir(), 'cwo-unpacked-'))
t.teardown(() => rm(unpacked, { recursive: true, force: true }))
await run('tar', ['-xzf', join(tmp, packed.filename), '-C', unpacked])
const pkgDir = join(unpacked, 'package')
// Where `npm install` would put the dependencies; the repository's own are the same versions.
await symlink(join(root, 'node_modules'), join(pkgDir, 'node_modules'))
const pkg = JSON.parse(await readFile(join(pkgDir, 'package.json'), 'utf8')) as { version: string; bin: { cwo: string } }
const bin = join(pkgDir, pkg.bin.cwo)
const shebang = (await readFile(bin, 'utf8')).split('\n')[0]
// npm install makes a bin executable when it links it (the tarball keeps 0644); so does this test.
await chmod(bin, 0o755)

const app = await startTestApp(t)
const server = await app.app.listen({ port: 0, host: '127.0.0.1' })
const user = await registerUser(app.app)

/** The unpacked bin, run the way npm's shim runs it: the file itself, through its shebang. */
async function cwo(args: string[], env: Record<string, string> = {}) {
  return run(bin, args, { cwd: unpacked, env: { PATH: process.env.PATH!, HOME: unpacked, CWO_CONFIG: join(unpacked, 'config.json'), ...env }, timeout: 30_000 })
    .then(({ stdout, stderr }) => ({ code: 0, stdout, stderr }))
    .catch((err: { code?: number; stdout?: string; stderr?: string }) => ({ code: err.code ?? 1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' }))
}

t.test('the tarball: package.json bin.cwo names a compiled file in it, with a node shebang', async (t) => {
  t.equal(pkg.bin.cwo, rootPkg.bin.cwo, 'the repository\'s bin entry')
  t.ok(packed.files.some((f) => f.path === pkg.bin.cwo), `${pkg.bin.cwo} is in the tarball`)
  t.notOk(packed.files.some((f) => f.path.endsWith('.ts') && !f.path.endsWith('.d.ts')), 'no TypeScript source shipped')
  t.equal(shebang, '#!/usr/bin/env node')
})

t.test('cwo --version and --help from the unpacked package', async (t) => {
  const v = await timed('cwo --version', () => cwo(['--version']))
  t.equal(v.code, 0, v.stderr)
  t.equal(v.stdout.trim(), rootPkg.version)
  const h = await cwo(['--help'])
  t.equal(h.code, 0, h.stderr)
  for (const command of ['workflows', 'logs', 'exec', 'build', 'import']) t.match(h.stdout, new RegExp(`\\n  ${command}\\b`), command)
})

t.test('cwo talks to a live service with CWO_SERVER and CWO_TOKEN; a refusal exits 1 on stderr', async (t) => {
  const r = await timed('cwo workflows list', () => cwo(['workflows', 'list', '-o', 'json'], { CWO_SERVER: server, CWO_TOKEN: user.token }))
  t.equal(r.code, 0, r.stderr)
  t.match(JSON.parse(r.stdout), { workflows: [], total: 0 })
  const bad = await cwo(['workflows', 'list'], { CWO_SERVER: server, CWO_TOKEN: 'not-a-token' })
  t.equal(bad.code, 1)
  t.match(bad.stderr, /^cwo: 401: .*cwo login/)
  t.equal(bad.stdout, '')
})

t.teardown(() => { t.comment(`timings (ms): ${JSON.stringify(timings)}`) })
