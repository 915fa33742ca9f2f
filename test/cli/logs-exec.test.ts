// cwo logs and cwo exec against the live service and the simulator: a Deployment recorded as a run would
// record it, found by kind/name; its log printed, followed until the container stops, followed until
// Ctrl-C; a command run through the terminal WebSocket with its output and its exit code.
import t from 'tap'
import { raw, waitFor } from '../kube-sim/test-helpers.ts'
import { startCliWorld } from './harness.ts'

const w = await startCliWorld(t, { timing: { logIntervalMs: 50 } })
const { app } = w.app
const sim = w.sim

async function create(path: string, body: object): Promise<void> {
  const res = await raw(sim, 'POST', path, { body })
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${res.text}`)
}
const deployment = (name: string, image: string, lines: string[] = []) => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name },
  spec: {
    replicas: 1, selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name }, annotations: { 'kube-sim.io/logs': lines.join('\n') } }, spec: { containers: [{ name: 'main', image }, { name: 'side', image: 'busybox:1.36' }] } },
  },
})
await create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } })
await create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' } })
await create('/apis/apps/v1/namespaces/shop/deployments', deployment('web', 'nginx:1.27', ['alpha', 'beta', 'gamma']))
await create('/apis/apps/v1/namespaces/other/deployments', deployment('web', 'nginx:1.27', ['other-web']))
sim.failingImages.crashLoop('registry.example/crashy')
await create('/apis/apps/v1/namespaces/shop/deployments', deployment('crashy', 'registry.example/crashy:1'))
await waitFor('web ready', async () => (await raw(sim, 'GET', '/apis/apps/v1/namespaces/shop/deployments/web')).json?.status?.readyReplicas === 1)

const clusterId = (await app.inject({ url: '/v1/api/clusters/sim', headers: w.user.headers })).json().id as string
/** Records a Deployment of the simulator as a run of a new workflow named `workflow` would. */
async function track(name: string, workflow: string, namespace = 'shop'): Promise<string> {
  const wf = (await app.inject({ method: 'POST', url: '/v1/api/workflows', headers: w.user.headers, payload: { name: workflow } })).json() as { id: string }
  await app.services.resources.recordApplied(w.user.user.id, { workflow_id: wf.id, cluster_id: clusterId, cluster: 'sim' }, [
    { node_id: name, api_version: 'apps/v1', kind: 'Deployment', name, namespace, action: 'created', uid: null, labels: {} },
  ])
  return (await app.services.resources.findForNode(w.user.user.id, wf.id, name))[0].id
}
const webId = await track('web', 'shop')
await track('crashy', 'shop-crashy')

t.test('logs kind/name prints the pod\'s lines as they are, and ends', async (t) => {
  const r = await w.cwo(['logs', 'deployment/web', '--tail', '5000'])
  t.equal(r.code, 0, r.stderr)
  t.same(r.stdout.split('\n').slice(0, 3), ['alpha', 'beta', 'gamma'])
  t.ok(r.stdout.endsWith('\n'))
  const byId = await w.cwo(['logs', webId, '--tail', '5000', '-c', 'side'])
  t.equal(byId.code, 0, byId.stderr)
  t.match(byId.stdout, /^alpha\n/, 'by id, another container (same annotation)')
  const tail = await w.cwo(['logs', 'deploy/web', '--tail', '2'])
  t.equal(tail.stdout.split('\n').filter(Boolean).length, 2, '--tail')
})

t.test('logs -o json: one object per line, with the pod and container', async (t) => {
  const r = await w.cwo(['logs', 'deploy/web', '--tail', '5000', '-o', 'json', '--timestamps'])
  t.equal(r.code, 0, r.stderr)
  const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l))
  t.match(lines[0], { pod: /^web-/, container: 'main', line: /^\S+Z alpha$/, timestamp: /Z$/ })
})

t.test('logs -f follows until the container stops (its last line), exit 0', async (t) => {
  await waitFor('crashy crashed once', async () => (await raw(sim, 'GET', '/api/v1/namespaces/shop/pods?labelSelector=app%3Dcrashy')).json?.items?.[0]?.status?.containerStatuses?.[0]?.restartCount >= 1)
  const r = await w.cwo(['logs', '-f', 'deployment/crashy', '--tail', '5'])
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout.trimEnd().split('\n').at(-1), /exited with code 1/)
})

t.test('logs -f prints new lines as they come and stops on Ctrl-C with 130', async (t) => {
  const ctrlC = new AbortController()
  let out = ''
  const r = await w.cwo(['logs', '-f', 'deployment/web', '--tail', '1'], {
    signal: ctrlC.signal,
    // Two heartbeats: one from the tail, at least one that came while following.
    onStdout: (s) => { out += s; if ((out.match(/heartbeat/g) ?? []).length >= 2) ctrlC.abort() },
  })
  t.equal(r.code, 130)
  t.match(r.stderr, /interrupted/)
  t.ok((r.stdout.match(/heartbeat \d+\n/g) ?? []).length >= 2)
  await waitFor('the service stopped reading the log', () => app.podLogs.active() === 0)
})

t.test('logs errors: an unknown container, an unknown name, an ambiguous one, a malformed RESOURCE', async (t) => {
  const c = await w.cwo(['logs', 'deploy/web', '-c', 'nope'])
  t.equal(c.code, 1)
  t.match(c.stderr, /^cwo: .*nope/)
  const missing = await w.cwo(['logs', 'deploy/nope'])
  t.equal(missing.code, 1)
  t.match(missing.stderr, /404: no tracked Deployment named "nope"/)
  await track('web', 'other', 'other')
  const two = await w.cwo(['logs', 'deploy/web'])
  t.equal(two.code, 1)
  t.match(two.stderr, /2 tracked Deployments are named "web": narrow with -n, --workflow/)
  const byNamespace = await w.cwo(['logs', 'deploy/web', '-n', 'shop', '--tail', '5000'])
  t.equal(byNamespace.code, 0, byNamespace.stderr)
  t.match(byNamespace.stdout, /^alpha\n/)
  const byWorkflow = await w.cwo(['logs', 'deploy/web', '--workflow', 'other', '--tail', '5000'])
  t.match(byWorkflow.stdout, /^other-web\n/)
  for (const bad of ['a/b/c', 'gizmo/web', 'not an id']) t.equal((await w.cwo(['logs', bad])).code, 2, bad)
  const bare = await w.cwo(['logs', 'web'])
  t.equal(bare.code, 2)
  t.match(bare.stderr, /e\.g\. deployment\/web/, 'a bare name is told to add its kind')
})

t.test('exec echo hello: the output only, exit 0', async (t) => {
  const r = await w.cwo(['exec', 'deployment/web', '--workflow', 'shop', '--', 'echo', 'hello'])
  t.equal(r.code, 0, r.stderr)
  t.equal(r.stdout, 'hello\n', 'no prompt, no echoed input, \\n line ends')
  t.equal(r.stderr, '')
  const quoted = await w.cwo(['exec', 'deploy/web', '--workflow', 'shop', '-c', 'side', '--', 'echo', 'it\'s  two', '$HOME'])
  t.equal(quoted.stdout, 'it\'s  two $HOME\n', 'arguments arrive as typed, unexpanded')
  // The simulator's shell runs the typed line whole and feeds no stdin to commands: this shows only that
  // typing stdin and end-of-input after the command line leaves its output and exit code alone.
  const piped = await w.cwo(['exec', '-i', 'deploy/web', '-n', 'shop', '--', 'sh', '-c', 'echo piped; exit 4'], { stdin: 'a line\nno newline' })
  t.equal(piped.code, 4)
  t.equal(piped.stdout, 'piped\n')
})

t.test('exec passes a failing command\'s exit code through, the real binary too', async (t) => {
  const r = await w.cwo(['exec', webId, '--', 'sh', '-c', 'echo oops >&2; exit 7'])
  t.equal(r.code, 7)
  t.equal(r.stdout, 'oops\n', 'a terminal merges stderr into the output')
  t.match(r.stderr, /command terminated with exit code 7/)
  const missing = await w.cwo(['exec', webId, '--', 'no-such-command'])
  t.equal(missing.code, 127)
  const p = await w.cwoProcess(['exec', webId, '--', 'sh', '-c', 'echo out; exit 5'])
  t.equal(p.code, 5, p.stderr)
  t.equal(p.stdout, 'out\n')
})

t.test('exec refusals: no command is a usage error, an unknown resource the API\'s 404', async (t) => {
  t.equal((await w.cwo(['exec', webId])).code, 2)
  const r = await w.cwo(['exec', '0123456789abcdef01234567', '--', 'true'])
  t.equal(r.code, 1)
  t.equal(r.stderr, 'cwo: 404: resource not found\n')
})

t.test('the token is in no output and no log line', async (t) => {
  t.notOk(w.app.logs.join('').includes(w.user.token))
})
