// GET /debug/watches: the simulator lists its open watch connections (path, query, User-Agent), so a test can
// tell how many watches a client holds and which client it is. It needs the same authentication as the API.
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { startTestCluster } from '../helpers/kube.ts'
import { raw, rawStream, waitFor } from './test-helpers.ts'
import type { WatchInfo } from './watch.ts'

const sim = await startTestCluster(t)
const list = async (): Promise<WatchInfo[]> => {
  const r = await raw(sim, 'GET', '/debug/watches')
  if (r.status !== 200) throw new Error(`GET /debug/watches: ${r.status} ${r.text}`)
  return r.json.watches as WatchInfo[]
}

t.test('no credentials: 401 like every API path; with any valid identity: the list', async (t) => {
  t.equal((await raw(sim, 'GET', '/debug/watches', { token: null })).status, 401)
  t.equal((await raw(sim, 'GET', '/debug/watches', { token: 'not-a-token' })).status, 401)
  const sa = await raw(sim, 'GET', '/debug/watches', { token: sim.identities.serviceAccount.token })
  t.equal(sa.status, 200)
  t.same(sa.json, { watches: [] }, 'nothing watches yet')
})

t.test('a watch is listed with its path, query and user agent while it is open, and gone once it closes', async (t) => {
  const w = rawStream(sim, '/api/v1/namespaces/default/configmaps?watch=true&labelSelector=app%3Dweb')
  t.teardown(() => w.close())
  t.equal(await w.status, 200)
  const open = await waitFor('the watch to be listed', async () => { const l = await list(); return l.length === 1 && l }, 5000)
  t.same(open, [{ path: '/api/v1/namespaces/default/configmaps', query: 'watch=true&labelSelector=app%3Dweb', user_agent: '' }], 'no User-Agent header: empty')
  t.equal(sim.openWatches(), 1)
  w.close()
  await waitFor('the closed watch to leave the list', async () => (await list()).length === 0, 5000)
})

const probe = spawnSync('kubectl', ['version', '--client', '-o', 'json'], { encoding: 'utf8' })
t.test('kubectl get pods -w shows up with kubectl\'s user agent', { skip: probe.error || probe.status !== 0 ? `kubectl not found on PATH (${probe.error?.message ?? probe.stderr})` : false }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kube-sim-debug-watches-'))
  const child = spawn('kubectl', ['--kubeconfig', sim.kubeconfigPath(), '--cache-dir', join(dir, 'cache'), 'get', 'pods', '-n', 'default', '-w'], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (c: Buffer) => { stderr += c.toString() })
  child.stdout.resume()
  const exited = new Promise<void>((r) => child.on('exit', () => r()))
  t.teardown(async () => { if (child.exitCode === null) { child.kill('SIGKILL'); await exited } rmSync(dir, { recursive: true, force: true }) })
  const watches = await waitFor('kubectl\'s watch to be listed', async () => {
    if (child.exitCode !== null) throw new Error(`kubectl exited: ${stderr}`)
    const l = await list()
    return l.length > 0 && l
  }, 15_000, 50)
  t.equal(watches.length, 1, 'one watch')
  t.equal(watches[0]!.path, '/api/v1/namespaces/default/pods')
  t.match(watches[0]!.query, /(^|&)watch=(true|1)(&|$)/)
  t.match(watches[0]!.user_agent, /^kubectl\/v\d+\.\d+/, `kubectl's user agent (${watches[0]!.user_agent})`)
  child.kill('SIGTERM')
  await exited
  await waitFor('kubectl\'s watch to close', async () => (await list()).length === 0, 5000)
})
