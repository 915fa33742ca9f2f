// The simulator as @kubernetes/client-node sees it: every auth type, server-side apply through
// KubernetesObjectApi, Watch (events, bookmarks, 410), Log follow, Exec and Metrics.
import { PassThrough, Writable } from 'node:stream'
import t from 'tap'
import {
  ApiException, AppsV1Api, AuthenticationV1Api, CoreV1Api, Exec, KubeConfig, KubernetesObjectApi, Log, Metrics, PatchStrategy, Watch,
  type KubernetesObject, type V1Status,
} from '@kubernetes/client-node'
import { logLine, startKubeSim } from './index.ts'
import { startTestIssuer } from './oidc-issuer.ts'
import { raw, waitFor } from './test-helpers.ts'

const issuer = await startTestIssuer()
const sim = await startKubeSim({ oidc: { issuerUrl: issuer.issuerUrl, clientId: 'kube-sim-test', usernameClaim: 'email' }, bookmarkIntervalMs: 150, timing: { logIntervalMs: 50 } })
t.teardown(async () => { await sim.close(); await issuer.close() })

const kcFor = (yaml: string) => { const kc = new KubeConfig(); kc.loadFromString(yaml); return kc }
const kc = kcFor(sim.kubeconfigYaml('token'))
const core = kc.makeApiClient(CoreV1Api)
const apps = kc.makeApiClient(AppsV1Api)

async function whoami(k: KubeConfig): Promise<string | undefined> {
  const r = await k.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } })
  return r.status?.userInfo?.username
}

async function readyPod(name: string, image = 'nginx:1.27'): Promise<void> {
  await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name }, spec: { containers: [{ name: 'app', image }] } } })
  await waitFor(`${name} ready`, async () => (await core.readNamespacedPod({ name, namespace: 'default' })).status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
}

t.test('authenticates each kind of identity', async (t) => {
  t.equal(await whoami(kcFor(sim.kubeconfigYaml('token'))), 'kube-sim-admin', 'static bearer token')
  t.equal(await whoami(kcFor(sim.kubeconfigYaml('cert'))), 'kube-sim-cert-admin', 'client certificate (mTLS)')
  t.equal(await whoami(kcFor(sim.kubeconfigYaml('serviceaccount'))), 'system:serviceaccount:default:kube-sim-deployer', 'service-account token')
  const saKc = kcFor(sim.kubeconfigYaml('serviceaccount'))
  t.equal(saKc.getContextObject(saKc.getCurrentContext())?.namespace, 'default', 'service-account kubeconfig carries its namespace')

  const idToken = await issuer.sign({ sub: 'u-1', email: 'dev@example.com', email_verified: true }, 'kube-sim-test')
  const oidcKc = new KubeConfig()
  oidcKc.loadFromOptions({
    clusters: [{ name: 'sim', server: sim.url, caData: Buffer.from(sim.caPem).toString('base64') }],
    users: [{ name: 'dev', authProvider: { name: 'oidc', config: { 'id-token': idToken, 'client-id': 'kube-sim-test', 'idp-issuer-url': issuer.issuerUrl } } }],
    contexts: [{ name: 'dev', cluster: 'sim', user: 'dev' }], currentContext: 'dev',
  })
  t.equal(await whoami(oidcKc), 'dev@example.com', 'OIDC ID token verified against the issuer JWKS')

  const wrongAudience = await issuer.sign({ sub: 'u-1', email: 'dev@example.com' }, 'someone-else')
  const stranger = await raw(sim, 'GET', '/api/v1/namespaces', { token: wrongAudience })
  t.equal(stranger.status, 401, 'an ID token for another client is refused')
  const anon = await raw(sim, 'GET', '/api/v1/namespaces', { token: null })
  t.equal(anon.status, 401, 'anonymous is refused')
  t.match(anon.json, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Unauthorized', code: 401 })
  t.equal((await raw(sim, 'GET', '/api/v1/namespaces', { token: 'not-a-token' })).status, 401, 'unknown token is refused')
})

t.test('server-side apply through KubernetesObjectApi', async (t) => {
  const client = KubernetesObjectApi.makeApiClient(kc)
  const manifest = (replicas: number): KubernetesObject & { spec: object } => ({
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'ssa', namespace: 'default', labels: { app: 'ssa' } },
    spec: { replicas, selector: { matchLabels: { app: 'ssa' } }, template: { metadata: { labels: { app: 'ssa' } }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] } } },
  })
  const created = await client.patch(manifest(2), undefined, undefined, 'deployer', undefined, PatchStrategy.ServerSideApply)
  t.equal((created as { spec: { replicas: number } }).spec.replicas, 2)
  t.match(created.metadata?.managedFields, [{ manager: 'deployer', operation: 'Apply' }])
  // No controller touches ConfigMaps, so their resourceVersion shows whether a write happened.
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ssa-cm', namespace: 'default' }, data: { a: '1' } }
  const first = await client.patch(cm, undefined, undefined, 'deployer', undefined, PatchStrategy.ServerSideApply)
  const again = await client.patch(cm, undefined, undefined, 'deployer', undefined, PatchStrategy.ServerSideApply)
  t.equal((again as KubernetesObject).metadata?.resourceVersion, (first as KubernetesObject).metadata?.resourceVersion, 're-applying the same config is a no-op')

  const err = await client.patch(manifest(5), undefined, undefined, 'other-tool', undefined, PatchStrategy.ServerSideApply).catch((e: unknown) => e)
  t.ok(err instanceof ApiException, 'a second manager changing an owned field conflicts')
  t.equal((err as ApiException<unknown>).code, 409)
  t.match((JSON.parse(String((err as ApiException<unknown>).body)) as V1Status).message, /Apply failed with 1 conflict: conflict with "deployer" using apps\/v1: \.spec\.replicas/)

  const forced = await client.patch(manifest(5), undefined, undefined, 'other-tool', true, PatchStrategy.ServerSideApply)
  t.equal((forced as { spec: { replicas: number } }).spec.replicas, 5, 'force takes the field over')
  const owners = forced.metadata?.managedFields?.map((m) => m.manager)
  t.ok(owners?.includes('other-tool') && owners.includes('deployer'))

  const dry = await client.patch({ ...manifest(7), metadata: { name: 'ssa', namespace: 'default' } }, undefined, 'All', 'other-tool', true, PatchStrategy.ServerSideApply)
  t.equal((dry as { spec: { replicas: number } }).spec.replicas, 7, 'dry run shows the result')
  t.equal((await apps.readNamespacedDeployment({ name: 'ssa', namespace: 'default' })).spec?.replicas, 5, 'but does not persist it')
  await waitFor('ssa rolled out', async () => (await apps.readNamespacedDeployment({ name: 'ssa', namespace: 'default' })).status?.readyReplicas === 5)
})

t.test('Watch delivers events, bookmarks, and 410 for an expired resourceVersion', async (t) => {
  const events: { type: string; obj: KubernetesObject }[] = []
  const watch = new Watch(kc)
  const list = await core.listNamespacedConfigMap({ namespace: 'default' })
  const rv = list.metadata!.resourceVersion!
  const ctl = await watch.watch('/api/v1/namespaces/default/configmaps', { resourceVersion: rv, allowWatchBookmarks: true }, (type, obj) => events.push({ type, obj }), () => undefined)
  await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'watched' }, data: { a: '1' } } })
  await core.patchNamespacedConfigMap({ name: 'watched', namespace: 'default', body: [{ op: 'replace', path: '/data/a', value: '2' }] })
  await core.deleteNamespacedConfigMap({ name: 'watched', namespace: 'default' })
  await waitFor('ADDED/MODIFIED/DELETED', () => events.filter((e) => e.type !== 'BOOKMARK').length >= 3)
  t.same(events.filter((e) => e.type !== 'BOOKMARK').map((e) => `${e.type} ${e.obj.metadata?.name}`), ['ADDED watched', 'MODIFIED watched', 'DELETED watched'])
  const bookmark = await waitFor('a bookmark', () => events.find((e) => e.type === 'BOOKMARK'))
  t.ok(Number(bookmark.obj.metadata?.resourceVersion) >= Number(rv), 'bookmark carries a current resourceVersion')
  const rvs = events.filter((e) => e.type !== 'BOOKMARK').map((e) => Number(e.obj.metadata?.resourceVersion))
  t.same(rvs, [...rvs].sort((a, b) => a - b), 'resourceVersions increase')
  ctl.abort()

  sim.faults.compactHistory()
  const expired: { type: string; obj: V1Status }[] = []
  let done = false
  await watch.watch('/api/v1/namespaces/default/configmaps', { resourceVersion: rv }, (type, obj) => expired.push({ type, obj }), () => { done = true })
  await waitFor('watch to end', () => done)
  t.equal(expired[0]?.type, 'ERROR')
  t.match(expired[0]?.obj, { kind: 'Status', code: 410, reason: 'Expired' })
})

t.test('Log follows a running container', async (t) => {
  await readyPod('logger')
  const pod = await core.readNamespacedPod({ name: 'logger', namespace: 'default' })
  const lines: string[] = []
  const out = new PassThrough()
  let buf = ''
  out.on('data', (c: Buffer) => { buf += c.toString(); const parts = buf.split('\n'); buf = parts.pop()!; lines.push(...parts) })
  const ctl = await new Log(kc).log('default', 'logger', 'app', out, { follow: true, tailLines: 1 })
  await waitFor('three followed lines', () => lines.length >= 3)
  ctl.abort()
  // Line 0 announces the start; line i ≥ 1 is heartbeat i. The tail may begin at either, depending on
  // how far the container had got when following started.
  const container = { name: 'app', image: 'nginx:1.27' }
  const heartbeat = /heartbeat (\d+)$/.exec(lines[0])
  const n = heartbeat ? Number(heartbeat[1]) : 0
  t.equal(lines[0], logLine(pod as never, container, n), `the first followed line is line ${n}`)
  t.same(lines.slice(0, 3), [n, n + 1, n + 2].map((i) => logLine(pod as never, container, i)), 'followed lines are consecutive and deterministic')
})

t.test('Exec runs commands and reports the exit code', async (t) => {
  await readyPod('shell')
  const run = (cmd: string[], stdin?: string, tty = false) => new Promise<{ out: string; err: string; status: V1Status }>((resolve, reject) => {
    let out = ''
    let err = ''
    const sink = (f: (s: string) => void) => new Writable({ write(c: Buffer, _e, cb) { f(c.toString()); cb() } })
    const input = stdin === undefined ? null : new PassThrough()
    new Exec(kc).exec('default', 'shell', 'app', cmd, sink((s) => { out += s }), sink((s) => { err += s }), input, tty, (status) => resolve({ out, err, status }))
      .then(() => { if (input) input.end(stdin) }).catch(reject)
  })
  const hi = await run(['echo', 'hi'])
  t.equal(hi.out, 'hi\n')
  t.equal(hi.status.status, 'Success')
  const failing = await run(['sh', '-c', 'echo out; echo err >&2; exit 3'])
  t.equal(failing.out, 'out\n')
  t.equal(failing.err, 'err\n')
  t.equal(failing.status.status, 'Failure')
  t.match(failing.status.details?.causes, [{ reason: 'ExitCode', message: '3' }])
  const env = await run(['sh', '-c', 'hostname; printenv HOSTNAME; pwd'])
  t.equal(env.out, 'shell\nshell\n/\n')
  const interactive = await run(['sh'], 'echo from-stdin\nexit 4\n')
  t.equal(interactive.out, 'from-stdin\n', 'stdin drives an interactive shell')
  t.match(interactive.status.details?.causes, [{ reason: 'ExitCode', message: '4' }])
  const tty = await run(['sh'], 'echo hi\rexit 2\r', true)
  t.equal(tty.out, '# echo hi\r\nhi\r\n# exit 2\r\n', 'a TTY echoes input, prompts, and uses CRLF')
  t.match(tty.status.details?.causes, [{ reason: 'ExitCode', message: '2' }])
})

t.test('Metrics for pods and nodes', async (t) => {
  await readyPod('measured')
  const m = new Metrics(kc)
  const nodes = await m.getNodeMetrics()
  t.equal(nodes.items.length, 2)
  t.match(nodes.items[0].usage, { cpu: /^\d+n$/, memory: /^\d+Ki$/ })
  const pods = await m.getPodMetrics('default')
  const measured = pods.items.find((p) => p.metadata.name === 'measured')
  t.ok(measured, 'a running pod has metrics')
  t.match(measured!.containers, [{ name: 'app', usage: { cpu: /^\d+n$/, memory: /^\d+Ki$/ } }])
})
