// cwo build and cwo import against the live service and the simulator: a real clone from the in-repo git
// server, a real push to the test registry, the build followed to its end (exit 0 with the digest the
// registry holds; 3 when it fails or is cancelled); a compose file and a git repository imported into a
// workflow, their progress and summary, and an analysis that fails (exit 3).
import t from 'tap'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { raw } from '../kube-sim/test-helpers.ts'
import { registerUser } from '../helpers/auth.ts'
import { startGitServer } from '../helpers/git-server.ts'
import { startTestRegistry } from '../helpers/test-registry.ts'
import { DOCKERFILE } from '../builds/fixture.ts'
import { startCliWorld } from './harness.ts'

const w = await startCliWorld(t, {}, { ALLOW_INSECURE_CLUSTERS: true })
const git = await startGitServer()
const registry = await startTestRegistry({ auth: 'basic' })
t.teardown(async () => { await git.close(); await registry.close() })
const admin = await registerUser(w.app.app, { role: 'admin' })
const reg = await w.app.app.inject({ method: 'POST', url: '/v1/api/admin/registries', headers: admin.headers, payload: { name: 'loopback', registry_type: 'custom', url: registry.url, username: registry.username, password: registry.password } })
if (reg.statusCode !== 201) throw new Error(`registry: ${reg.body}`)
await raw(w.sim, 'POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'builds' } } })
const repo = await git.addRepo('app', { Dockerfile: DOCKERFILE, 'run.sh': '#!/bin/sh\necho hi\n' })
const start = (image: string, ...more: string[]) => ['build', 'start', repo.url, '--registry', 'loopback', '--image', image, '-n', 'builds', ...more]

t.test('build start --follow: the log and progress to the end, the pushed digest, exit 0', async (t) => {
  const r = await w.cwo(start('team/app:v1', '--follow', '--build-arg', 'VERSION=1.0'))
  t.equal(r.code, 0, r.stderr)
  const stored = registry.manifest('team/app', 'v1')
  t.ok(stored, 'the registry holds the image')
  const lines = r.stdout.trimEnd().split('\n')
  t.equal(lines.at(-1), `completed: ${registry.host}/team/app:v1@${stored!.digest}`)
  t.ok(lines.some((l) => /^\[build\] .*RUN make/.test(l)), 'build log lines')
  t.ok(lines.includes('-- completed 100%'), 'progress lines')
  t.match(r.stderr, /^build \w+ started/)
  const id = /^build (\w+) started/.exec(r.stderr)![1]

  const got = await w.cwo(['build', 'get', id, '-o', 'json'])
  t.match(JSON.parse(got.stdout), { id, status: 'completed', image_digest: stored!.digest })
  const list = await w.cwo(['build', 'list'])
  t.match(list.stdout, new RegExp(`^ID\\s+STATUS.*\\n${id}\\s+completed\\s+100%`))
  const replay = await w.cwo(['build', 'logs', id, '-o', 'json'])
  t.equal(replay.code, 0)
  const events = replay.stdout.trim().split('\n').map((l) => JSON.parse(l))
  t.match(events.at(-1), { type: 'complete', image_digest: stored!.digest }, 'JSON lines, the terminal event last')
  t.ok(events.some((e) => e.type === 'log' && e.phase === 'push'))
  t.notOk((r.stdout + r.stderr + replay.stdout).includes(registry.password), 'no registry password printed')
})

t.test('a failing build exits 3 with its phase and error; a cancelled one too', async (t) => {
  w.sim.failingBuilds.at('team/broken', 'build')
  const r = await w.cwo(start('team/broken', '--follow'))
  t.equal(r.code, 3)
  t.match(r.stderr, /cwo: build \w+ failed at build: .*exit code: 2/)

  const hold = w.sim.failingBuilds.hold('team/held', 'clone')
  t.teardown(() => hold.release())
  const started = await w.cwo(start('team/held', '-o', 'json'))
  t.equal(started.code, 0, started.stderr)
  const id = JSON.parse(started.stdout).id
  await hold.reached
  const following = w.cwo(['build', 'logs', id])
  const cancelled = await w.cwo(['build', 'cancel', id])
  t.equal(cancelled.code, 0, cancelled.stderr)
  t.match(cancelled.stdout, /cancelled/)
  const f = await following
  t.equal(f.code, 3)
  t.match(f.stderr, /was cancelled/)
  const again = await w.cwo(['build', 'cancel', id])
  t.equal(again.code, 1)
  t.match(again.stderr, /^cwo: 409: /)
})

t.test('build refusals: an unknown registry, an unknown build, a bad --build-arg', async (t) => {
  const r = await w.cwo(['build', 'start', repo.url, '--registry', 'nope', '--image', 'a/b'])
  t.equal(r.code, 1)
  t.match(r.stderr, /no registry named "nope"/)
  t.equal((await w.cwo(['build', 'get', '0123456789abcdef01234567'])).code, 1)
  t.equal((await w.cwo(start('a/b', '--build-arg', 'nokey'))).code, 2)
  t.equal((await w.cwo(['build', 'start', repo.url, '--image', 'a/b'])).code, 2, '--registry is required')
})

const WEB_AND_DB = `services:
  web:
    image: nginx:\${WEB_TAG}
    ports:
      - "8080:80"
    depends_on:
      - db
  db:
    image: postgres:16
    volumes:
      - dbdata:/var/lib/postgresql/data
  debug:
    image: busybox:1.36
    profiles: [debug]
volumes:
  dbdata: {}
`
await mkdir(join(w.dir, 'shop'))
await writeFile(join(w.dir, 'shop', 'compose.yaml'), WEB_AND_DB)
await writeFile(join(w.dir, 'shop', '.env'), 'WEB_TAG=1.27\n')

async function workflow(id: string) {
  return (await w.app.app.inject({ url: `/v1/api/workflows/${id}`, headers: w.user.headers })).json()
}

t.test('import compose: progress on stderr, the services and the new workflow on stdout, exit 0', async (t) => {
  const r = await w.cwo(['import', 'compose', 'shop/compose.yaml', '--env-file', 'shop/.env'])
  t.equal(r.code, 0, r.stderr)
  t.match(r.stderr, /^import \w+ started\n/)
  // The session's log (replayed when the analysis ended before the stream opened; progress events are not).
  t.match(r.stderr, /found 2 services: \d+ nodes/, 'the session\'s log')
  t.match(r.stdout, /^SERVICE\s+KIND\s+IMAGE\s+REPLICAS\s+NODES\ndb\s+statefulset\s+postgres:16\s+1\s+\d+\nweb\s+deployment\s+nginx:1\.27\s+1\s+\d+\n/, 'dependencies first; ${WEB_TAG} from --env-file; the debug profile left out')
  const id = /workflow "shop" created: (\w+)/.exec(r.stdout)?.[1]
  t.ok(id, 'named after the folder of compose.yaml')
  const wf = await workflow(id!)
  t.equal(wf.name, 'shop')
  t.ok(wf.nodes.some((n: { data: { image?: string } }) => n.data.image === 'nginx:1.27'), 'the graph is the analysis\'s')
})

t.test('import compose -o json --analyze-only: the session whole, no workflow; --profiles; --into merges', async (t) => {
  const before = (await w.cwo(['workflows', 'list', '-o', 'json'])).stdout
  const r = await w.cwo(['import', 'compose', 'shop/compose.yaml', '--env', 'WEB_TAG=1.26', '--profiles', 'debug', '--analyze-only', '-o', 'json'])
  t.equal(r.code, 0, r.stderr)
  const out = JSON.parse(r.stdout)
  t.equal(out.workflow, null)
  t.match(out.import, { status: 'completed', source: 'compose' })
  t.same(out.import.analysis.services.map((s: { name: string }) => s.name).sort(), ['db', 'debug', 'web'])
  t.equal(out.import.analysis.services.find((s: { name: string }) => s.name === 'web').image, 'nginx:1.26')
  t.equal((await w.cwo(['workflows', 'list', '-o', 'json'])).stdout, before, 'no workflow created or changed')

  const into = await w.cwo(['import', 'compose', 'shop/compose.yaml', '--env', 'WEB_TAG=1.25', '--into', 'shop', '-o', 'json'])
  t.equal(into.code, 0, into.stderr)
  const merged = JSON.parse(into.stdout).workflow
  t.equal(merged.name, 'shop')
  t.ok(merged.nodes.some((n: { data: { image?: string } }) => n.data.image === 'nginx:1.25') && merged.nodes.some((n: { data: { image?: string } }) => n.data.image === 'nginx:1.27'), 'beside the nodes it had')
})

t.test('an analysis that fails exits 3 with its error; a missing file or a bad flag is a usage error', async (t) => {
  await writeFile(join(w.dir, 'broken.yaml'), 'services:\n  web:\n    image: [1, 2]\n')
  const r = await w.cwo(['import', 'compose', 'broken.yaml'])
  t.equal(r.code, 3, r.stderr)
  t.match(r.stderr, /cwo: import failed: .*image/)
  t.equal(r.stdout, '')
  t.equal((await w.cwo(['import', 'compose', 'nope.yaml'])).code, 2)
  t.equal((await w.cwo(['import', 'compose', 'shop/compose.yaml', '--env', 'novalue'])).code, 2)
  t.equal((await w.cwo(['import', 'compose', 'shop/compose.yaml', '--replace'])).code, 2)
})

t.test('import git: a compose file in a folder of a repository; a missing branch exits 3', async (t) => {
  const shop = await git.addRepo('webshop', { 'deploy/compose.yaml': WEB_AND_DB.replace('${WEB_TAG}', '1.27'), 'README.md': '# shop\n' })
  const r = await w.cwo(['import', 'git', shop.url, '--path', 'deploy', '--branch', 'main'])
  t.equal(r.code, 0, r.stderr)
  t.match(r.stderr, /-- cloning \d+%/)
  t.match(r.stdout, /\nweb\s+deployment\s+nginx:1\.27/)
  const id = /workflow "webshop" created: (\w+)/.exec(r.stdout)?.[1]
  t.ok(id, 'named after the repository')
  t.ok((await workflow(id!)).nodes.length >= 2)
  const missing = await w.cwo(['import', 'git', shop.url, '--branch', 'release-9'])
  t.equal(missing.code, 3)
  t.match(missing.stderr, /cwo: import failed: branch 'release-9' not found/)
})
