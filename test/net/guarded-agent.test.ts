// Every path client-node takes to a cluster (API calls, the object API's pool, watches, the health check,
// exec over WebSocket, and the agent our log requests use) against a cluster `server` that answers with a
// redirect to a forbidden address, in every spelling. A second listener on the redirect's target counts
// connections: it must see none. The policy is the one of the finding: OUTBOUND_ALLOW_CIDRS=127.0.0.0/8.
import t from 'tap'
import http from 'node:http'
import net from 'node:net'
import { once } from 'node:events'
import { KubeConfig, CoreV1Api, VersionApi, Watch, Health } from '@kubernetes/client-node'
import { buildKubeConfig } from '../../src/kube/kubeconfig.ts'
import { objectClient } from '../../src/kube/deploy-client.ts'
import { openExec } from '../../src/kube/exec-terminal.ts'
import { describeClusterError } from '../../src/kube/upstream-errors.ts'
import { OutboundPolicy } from '../../src/net/outbound-policy.ts'
import { guardAgent, originOfUrl, pooledCopy } from '../../src/net/guarded-agent.ts'
import { startForbiddenTarget } from '../helpers/forbidden-target.ts'

// The forbidden target: one port, listened on by every loopback interface there is.
const { port: P, connections } = await startForbiddenTarget(t)

/** Every way of writing "this host" (and the metadata address) a redirect could use. */
const FORMS = [
  `http://0.0.0.0:${P}/`, `http://[::]:${P}/`, `http://[::1]:${P}/`, `http://[::ffff:127.0.0.1]:${P}/`, `http://[::ffff:7f00:1]:${P}/`,
  `http://2130706433:${P}/`, `http://0177.0.0.1:${P}/`, `http://0x7f000001:${P}/`, `http://127.1:${P}/`, `http://127.0.0.1:${P}/`,
  `http://localhost:${P}/`, `http://169.254.169.254/latest/meta-data/`, `http://[64:ff9b::7f00:1]:${P}/`,
]

// The cluster `server`: answers everything with the redirect currently set.
let redirect = { status: 302, location: FORMS[0] }
const server = http.createServer((req, res) => { res.writeHead(redirect.status, { location: redirect.location }).end() })
server.on('upgrade', (_req, socket) => { socket.end(`HTTP/1.1 ${redirect.status} Found\r\nLocation: ${redirect.location}\r\n\r\n`) })
server.listen(0, '127.0.0.1')
await once(server, 'listening')
t.teardown(() => server.close())
const SERVER = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`

const policy = new OutboundPolicy({ allowInsecure: true, allowCidrs: ['127.0.0.0/8'], refuseLoopback: true })
const kc = await buildKubeConfig(SERVER, { auth_type: 'token', token: 'secret-token', insecure_skip_tls_verify: true }, policy)
const REFUSED = 'cannot reach the cluster: the address is not allowed by the outbound policy'

/** The error a call ends with (undefined if it succeeded). */
async function failure(call: () => Promise<unknown>): Promise<unknown> {
  try { await call(); return undefined } catch (err) { return err }
}

t.test('the counting listener counts, and an unguarded client does follow the redirect (the finding)', async (t) => {
  const probe = net.connect(P, '127.0.0.1')
  await once(probe, 'close')
  t.equal(connections.length, 1, 'a direct connection is counted')
  connections.length = 0
  const plain = new KubeConfig()
  plain.loadFromOptions({ clusters: [{ name: 'c', server: SERVER, skipTLSVerify: true }], users: [{ name: 'u', token: 'x' }], contexts: [{ name: 'c', cluster: 'c', user: 'u' }], currentContext: 'c' })
  redirect = { status: 302, location: `http://[::ffff:127.0.0.1]:${P}/` }
  await failure(() => plain.makeApiClient(CoreV1Api).listNode())
  t.ok(connections.length >= 1, 'client-node on its own connects to the redirect target')
  connections.length = 0
})

t.test('API calls refuse every redirect status to every forbidden address form, before connecting', async (t) => {
  for (const status of [301, 302, 307, 308]) {
    for (const location of FORMS) {
      redirect = { status, location }
      const err = await failure(() => kc.makeApiClient(CoreV1Api).listNode())
      t.equal(describeClusterError(err), REFUSED, `${status} → ${location}`)
    }
  }
  t.same(connections, [], 'the target saw no connection')
})

t.test('the version probe, the object API pool, watches and the health check refuse them too', async (t) => {
  const client = await objectClient(kc, 2000)
  t.teardown(() => client.close())
  for (const location of FORMS) {
    redirect = { status: 307, location }
    t.equal(describeClusterError(await failure(() => kc.makeApiClient(VersionApi).getCode())), REFUSED, `version → ${location}`)
    t.equal(describeClusterError(await failure(() => client.api.read({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'default' } }))), REFUSED, `object API → ${location}`)
    t.equal(describeClusterError(await failure(() => client.api.list('v1', 'ConfigMap', 'default'))), REFUSED, `object API list → ${location}`)
    const watchEnd = await new Promise<unknown>((resolve) => {
      new Watch(kc).watch('/api/v1/namespaces/default/configmaps', {}, () => {}, resolve).catch(resolve)
    })
    t.equal(describeClusterError(watchEnd), REFUSED, `watch → ${location}`)
    // client-node's Health replaces every failure with one generic Error; the count below is what tells.
    t.match(await failure(() => new Health(kc).readyz({})), { message: 'Error occurred in health request' }, `health → ${location}`)
  }
  t.same(connections, [], 'the target saw no connection')
})

t.test('exec over WebSocket does not follow the redirect either', async (t) => {
  for (const location of FORMS) {
    redirect = { status: 302, location }
    const err = await failure(() => openExec(kc, { namespace: 'default', pod: 'p', container: 'c', shell: 'sh' }, { output: () => {}, exit: () => {} }))
    t.match(String((err as Error)?.message), /answered 302|did not answer/, location)
  }
  t.same(connections, [], 'the target saw no connection')
})

t.test('the agent the log requests take (applyToHTTPSOptions) connects only to the cluster server', async (t) => {
  for (const location of FORMS) {
    const options: http.RequestOptions = {}
    await kc.applyToHTTPSOptions(options)
    const err = await new Promise<unknown>((resolve) => {
      const req = http.request(location, { agent: options.agent }, () => resolve(undefined))
      req.on('error', resolve)
      req.end()
    })
    t.equal(describeClusterError(err), REFUSED, location)
    ;(options.agent as http.Agent).destroy()
  }
  t.same(connections, [], 'the target saw no connection')
})

t.test('the pool copy keeps the guard; a guarded agent still reaches its own server', async (t) => {
  const policyOpen = new OutboundPolicy({ allowInsecure: true, allowCidrs: [] })
  const agent = guardAgent(new http.Agent(), { policy: policyOpen, origin: originOfUrl(SERVER), what: 'cluster server' })
  const pooled = pooledCopy(agent, { keepAlive: true, maxSockets: 2 })
  t.teardown(() => { agent.destroy(); pooled.destroy() })
  const status = await new Promise<number | undefined>((resolve, reject) => {
    http.get(`${SERVER}/version`, { agent: pooled }, (res) => { res.resume(); resolve(res.statusCode) }).on('error', reject)
  })
  t.equal(status, redirect.status, 'the configured server answers through the pool')
  const err = await new Promise<unknown>((resolve) => { http.get(`http://127.0.0.1:${P}/`, { agent: pooled }, () => resolve(undefined)).on('error', resolve) })
  t.equal(describeClusterError(err), REFUSED, 'another port of the same host is another origin')
  t.same(connections, [])
})

t.test('a name is resolved once by the policy and the socket connects to the address it checked', async (t) => {
  let answer = ['127.0.0.1']
  const resolved: string[] = []
  const pinned = new OutboundPolicy({ allowInsecure: true, allowCidrs: [], refuseLoopback: false, resolve: async (host) => { resolved.push(host); return answer } })
  const origin = `http://cluster.test:${P}`
  const agent = guardAgent(new http.Agent(), { policy: pinned, origin: originOfUrl(origin), what: 'cluster server' })
  t.teardown(() => agent.destroy())
  const get = () => new Promise<unknown>((resolve) => { http.get(`${origin}/`, { agent }, (res) => { res.resume(); resolve(undefined) }).on('error', resolve) })
  await get()
  t.same(resolved, ['cluster.test'], 'the policy resolved the name')
  t.equal(connections.length, 1, 'and the connection went to the address it returned (the counting listener)')
  connections.length = 0
  answer = ['169.254.169.254']
  t.equal(describeClusterError(await get()), REFUSED, 'a name that now resolves to a refused address is refused')
  answer = ['::ffff:127.0.0.1']
  const strict = new OutboundPolicy({ allowInsecure: true, allowCidrs: [], refuseLoopback: true, resolve: async () => answer })
  const strictAgent = guardAgent(new http.Agent(), { policy: strict, origin: originOfUrl(origin), what: 'cluster server' })
  t.teardown(() => strictAgent.destroy())
  const err = await new Promise<unknown>((resolve) => { http.get(`${origin}/`, { agent: strictAgent }, () => resolve(undefined)).on('error', resolve) })
  t.equal(describeClusterError(err), REFUSED, 'a resolver answer in mapped form is judged as the IPv4 loopback it is')
  t.same(connections, [])
})

t.test('exec\'s WebSocket resolves through the policy too: it reaches a checked address, or nothing', async (t) => {
  const execTo = async (refuseLoopback: boolean) => {
    // `cluster.test` exists only in this resolver: a connection to it proves the policy's lookup was used.
    const p = new OutboundPolicy({ allowInsecure: true, allowCidrs: [], refuseLoopback, resolve: async () => ['127.0.0.1'] })
    const k = await buildKubeConfig(`http://cluster.test:${P}`, { auth_type: 'token', token: 't', insecure_skip_tls_verify: true }, p)
    return failure(() => openExec(k, { namespace: 'default', pod: 'p', container: 'c', shell: 'sh' }, { output: () => {}, exit: () => {} }))
  }
  await execTo(false)
  t.equal(connections.length, 1, 'allowed: the WebSocket connected to the address the policy returned')
  connections.length = 0
  await execTo(true)
  t.same(connections, [], 'refused: no connection at all')
})
