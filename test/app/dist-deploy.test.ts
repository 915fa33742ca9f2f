// The built server is the tested server: `npm run build` output (what the Docker image runs), started with
// plain node in production mode, does the product's main job on a simulated cluster over real HTTP. The
// build is also checked for module specifiers that name TypeScript sources (Node cannot load those), once
// with TypeScript's parser and once with a plain text search that does not share its code.
import t from 'tap'
import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { readdirSync, readFileSync } from 'node:fs'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { promisify } from 'node:util'
import { startTestCluster, simClusterBody } from '../helpers/kube.ts'
import { moduleSpecifiers, namesTypeScriptSource } from '../../scripts/emitted-specifiers.ts'

// Longer than the suite's 120 s per file: this file does much more work, and a loaded machine doubles it.
t.setTimeout(240_000)

const root = new URL('../..', import.meta.url).pathname
const exec = promisify(execFile)

// Inside node_modules so the compiled modules resolve their dependencies as dist/ would.
await mkdir(join(root, 'node_modules/.cache'), { recursive: true })
const out = await mkdtemp(join(root, 'node_modules/.cache/dist-deploy-'))
t.teardown(() => rm(out, { recursive: true, force: true }))
const buildStarted = performance.now()
// Emit only: type errors are `tsc --noEmit`'s business; this proves the emitted code runs.
const build = await exec('npm', ['run', 'build', '--', out, '--no-check'], { cwd: root, timeout: 90_000 }).catch((err: { stdout?: string; stderr?: string }) => ({ stdout: err.stdout ?? '', stderr: `${err.stderr ?? ''}\nbuild failed` }))
const buildMs = Math.round(performance.now() - buildStarted)

const emitted = readdirSync(out, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.js'))

t.test('no module specifier of the build output names a .ts file', async (t) => {
  t.notMatch(build.stderr, /build failed/, 'the build succeeded')
  t.comment(`build (emit only): ${buildMs} ms, ${emitted.length} modules; ${build.stdout.trim().split('\n').at(-1)}`)
  t.ok(emitted.length > 100, `the output holds the compiled modules (${emitted.length})`)
  const parsed: string[] = []
  const text: string[] = []
  let specifiers = 0
  for (const file of emitted) {
    const code = readFileSync(join(out, file), 'utf8')
    for (const s of moduleSpecifiers(code, file)) {
      specifiers++
      if (namesTypeScriptSource(s.text) || /\.[mc]?ts$/.test(s.text)) parsed.push(`${file}: ${s.kind} '${s.text}'`)
    }
    // Independent of the parser: any quoted relative path ending in .ts after `from`, `import` or `import(`.
    for (const m of code.matchAll(/\b(?:from|import)\s*\(?\s*(['"`])(\.{1,2}\/[^'"`]*\.[mc]?ts)\1/g)) text.push(`${file}: ${m[2]}`)
  }
  t.ok(specifiers > 500, `the parser found the specifiers (${specifiers})`)
  t.same(parsed, [], 'no specifier found by the parser names a .ts file')
  t.same(text, [], 'no specifier found by the text search names a .ts file')
})

t.test('the parser finds every form of specifier, so the walk above can fail', async (t) => {
  const code = [
    "import a from './a.ts'", "import { b } from \"../b.mts\"", "export * from './c.ts'", "export { d } from './d.js'",
    "const e = async () => (await import('../src/kube/deploy.ts')).deploy()", "// import('./in-a-comment.ts')",
    "const s = 'from ./not-a-specifier.ts'", "import type_ from './types.d.ts'",
  ].join('\n')
  t.same(moduleSpecifiers(code).map((s) => [s.kind, s.text]), [
    ['import', './a.ts'], ['import', '../b.mts'], ['export', './c.ts'], ['export', './d.js'], ['dynamic import', '../src/kube/deploy.ts'], ['import', './types.d.ts'],
  ])
  t.same(moduleSpecifiers(code).filter((s) => namesTypeScriptSource(s.text)).map((s) => s.text), ['./a.ts', '../b.mts', './c.ts', '../src/kube/deploy.ts'])
})

t.test('the compiled server, in production mode, deploys a 3-node graph to a cluster and removes it', async (t) => {
  const sim = await startTestCluster(t)
  const dataDir = await mkdtemp(join(tmpdir(), 'dist-deploy-data-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))
  const env = {
    PATH: process.env.PATH, NODE_ENV: 'production', JWT_SECRET: 'j'.repeat(48), ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
    DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8', RUN_READY_TIMEOUT_MS: '20000',
  }
  // Plain node, no tsx: what `npm run start:dist` and the image's CMD run.
  const server = spawn(process.execPath, [join(out, 'src/server.js')], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(() => { if (server.exitCode === null) server.kill('SIGKILL') })
  const lines: string[] = []
  server.stderr.on('data', (d) => lines.push(String(d)))
  // The server says where it listens (PORT=0: the system picks a free port); awaited, not polled.
  const base = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: server.stdout })
    rl.on('line', (line) => {
      lines.push(line)
      const m = /"msg":"API on (http:\/\/[^/"]+)\/v1\/api/.exec(line)
      if (m) resolve(m[1]!)
    })
    server.once('exit', (code) => reject(new Error(`the compiled server exited (${code}):\n${lines.join('\n')}`)))
  })

  let token = ''
  const call = async (method: string, path: string, body?: object) => {
    const res = await fetch(`${base}/v1/api${path}`, {
      method, headers: { ...(token && { authorization: `Bearer ${token}` }), ...(body && { 'content-type': 'application/json' }) }, ...(body && { body: JSON.stringify(body) }),
    })
    const text = await res.text()
    return { status: res.status, body: text ? JSON.parse(text) : undefined }
  }
  const registered = await call('POST', '/auth/register', { email: 'dist@example.test', password: 'a-long-enough-password-1', name: 'Dist' })
  t.equal(registered.status, 201, 'registered (the first account)')
  token = registered.body.token
  const cluster = await call('POST', '/clusters', simClusterBody(sim, 'sim'))
  t.equal(cluster.status, 201, 'the simulator added as a cluster')

  const ns = 'dist'
  const node = (id: string, type: string, data: object) => ({ id, type, position: { x: 0, y: 0 }, data })
  const graph = {
    nodes: [
      node('n-config', 'configmap', { name: 'web-config', namespace: ns, data: { MODE: 'dist' } }),
      node('n-web', 'deployment', { name: 'web', namespace: ns, image: 'ghcr.io/acme/web:1.0.0', port: 8080 }),
      node('n-svc', 'service', { name: 'web-svc', namespace: ns, serviceType: 'ClusterIP', port: 80, targetPort: 8080 }),
    ],
    edges: [{ id: 'e1', source: 'n-config', target: 'n-web' }, { id: 'e2', source: 'n-web', target: 'n-svc' }],
  }
  const wf = await call('POST', '/workflows', { name: 'dist-web', cluster_id: 'sim' })
  t.equal(wf.status, 201, 'workflow created')
  const id = wf.body.id as string
  t.equal((await call('POST', `/workflows/${id}/save`, graph)).status, 200, 'graph saved')

  const dry = await call('POST', `/workflows/${id}/run`, { dry_run: true })
  t.equal(dry.status, 200)
  t.match(dry.body, { status: 'completed', dry_run: true, error: null }, 'the dry run completed')

  const started = performance.now()
  const run = await call('POST', `/workflows/${id}/run`, {})
  const runMs = Math.round(performance.now() - started)
  t.equal(run.status, 200)
  t.match(run.body, { status: 'completed', dry_run: false, error: null, version: 1 }, 'the run completed')
  t.comment(`compiled server: a real run of 3 nodes (+ namespace) completed in ${runMs} ms over HTTP (the run records ${run.body.duration_ms} ms)`)

  const kubeconfig = sim.kubeconfigPath()
  const kubectl = async (...args: string[]) => (await exec('kubectl', ['--kubeconfig', kubeconfig, ...args], { timeout: 30_000 })).stdout.trim()
  const present = () => kubectl('get', 'configmap/web-config', 'deployment/web', 'service/web-svc', '-n', ns, '--ignore-not-found', '-o', 'name')
  t.same((await present()).split('\n').sort(), ['configmap/web-config', 'deployment.apps/web', 'service/web-svc'], 'kubectl sees the three objects')
  t.equal(await kubectl('get', 'deployment', 'web', '-n', ns, '-o', 'jsonpath={.spec.template.spec.containers[0].envFrom[0].configMapRef.name}'), 'web-config', 'wired as drawn')

  const removed = await call('DELETE', `/workflows/${id}?delete_resources=true`)
  t.equal(removed.status, 204, 'deleted with its resources')
  t.equal(await present(), '', 'the objects are gone (kubectl)')
  t.equal((await call('GET', `/workflows/${id}`)).status, 404, 'and so is the workflow')

  const log = lines.join('\n')
  t.notMatch(log, /\[object Object\]/, 'no log line says [object Object]')
  t.notMatch(log, /ERR_MODULE_NOT_FOUND/)
  const exited = once(server, 'exit')
  server.kill('SIGTERM')
  t.equal((await exited)[0], 0, 'stops cleanly')
})
