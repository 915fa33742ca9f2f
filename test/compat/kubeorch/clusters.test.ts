// The UI's /clusters on the adapter (CONTRACT.md §0 #2 #3, §2.6, §8 rows 4-6; OBSERVED rows 3, 4, 5, 5b,
// 5c), against the app and the simulator: the add and edit bodies verbatim from OBSERVED, every field the
// clusters page, the edit form and the dashboard read, with the values they switch on, and refusals with
// both `error` and `message`.
import t, { type Test } from 'tap'
import { startTestApp } from '../../helpers/app.ts'
import { registerUser, type TestUser } from '../../helpers/auth.ts'
import { startTestCluster } from '../../helpers/kube.ts'

const sim = await startTestCluster(t)
const { app, logs } = await startTestApp(t, { CLUSTER_TIMEOUT_MS: 3000 })
const owner = await registerUser(app)
const stranger = await registerUser(app)
const PREFIX = '/kubeorch/v1/api'
const b64 = (text: string) => Buffer.from(text).toString('base64')

const UI_STATUSES = ['connected', 'disconnected', 'error', 'unknown']
const UI_AUTH_TYPES = ['token', 'certificate', 'kubeconfig', 'serviceaccount', 'oidc', 'bearer', 'serviceAccount']
const HEALTH = ['healthy', 'unhealthy', 'unknown']

const bodies: string[] = []
async function ui(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object, user: TestUser = owner) {
  const res = await app.inject({ method, url: `${PREFIX}${url}`, headers: user.headers, ...(payload && { payload }) })
  bodies.push(res.body)
  return { status: res.statusCode, body: res.body ? res.json() : undefined }
}
const canonical = async (url: string) => (await app.inject({ url: `/v1/api${url}`, headers: owner.headers })).json()

// OBSERVED "Add cluster", verbatim but for the simulator's own address, token and CA.
const addBody = {
  name: 'sim', displayName: 'Kube Sim', description: 'kube-sim on loopback', server: sim.url, authType: 'token', singleNode: false,
  credentials: { namespace: 'default', token: sim.identities.admin.token, caData: b64(sim.caPem) }, labels: {},
}

function assertUiCluster(t: Test, c: Record<string, any>) { // eslint-disable-line @typescript-eslint/no-explicit-any
  t.type(c.id, 'string')
  t.type(c.name, 'string')
  t.type(c.displayName, 'string')
  t.type(c.server, 'string')
  t.ok(UI_AUTH_TYPES.includes(c.authType), `authType ${c.authType}`)
  t.ok(UI_STATUSES.includes(c.status), `status ${c.status} is one the clusters page knows`)
  t.type(c.default, 'boolean')
  t.type(c.metadata, 'object')
  t.ok(Array.isArray(c.metadata.namespaces), 'metadata.namespaces[]')
  for (const key of ['credentials', 'credentials_sealed', 'token', 'caData', 'ca_data', 'clientKeyData']) t.notOk(key in c, `no ${key}`)
}

t.test('Add cluster with the UI\'s body: 201 with status connected (the success toast) and the UI\'s fields', async (t) => {
  const res = await ui('POST', '/clusters', addBody)
  t.equal(res.status, 201, JSON.stringify(res.body))
  assertUiCluster(t, res.body)
  t.match(res.body, {
    name: 'sim', displayName: 'Kube Sim', description: 'kube-sim on loopback', authType: 'token', status: 'connected', default: true,
    metadata: { version: 'v1.32.0-kube-sim', nodeCount: 2 },
  })
  t.ok(res.body.metadata.namespaces.includes('default'), 'the namespaces were read')
  t.match(await canonical('/clusters/sim'), { name: 'sim', display_name: 'Kube Sim', auth_type: 'token', status: 'connected' }, 'the same cluster on /v1/api')
})

t.test('a cluster that does not accept the credentials: 201 with status error (the warning toast)', async (t) => {
  const res = await ui('POST', '/clusters', { ...addBody, name: 'badtoken', displayName: 'Bad', credentials: { ...addBody.credentials, token: 'not-a-token' } })
  t.equal(res.status, 201)
  assertUiCluster(t, res.body)
  t.match(res.body, { name: 'badtoken', status: 'error', default: false })
  t.type(res.body.statusMessage, 'string')
  t.not(res.body.statusMessage, '', 'says why')
})

t.test('certificate and service-account bodies: base64 PEM fields, insecure and namespace reach ours', async (t) => {
  const { certPem, keyPem } = sim.identities.clientCert
  const cert = await ui('POST', '/clusters', {
    name: 'mtls', displayName: 'mTLS', description: '', server: sim.url, authType: 'certificate', singleNode: true,
    credentials: { namespace: 'default', insecure: true, clientCertData: b64(certPem), clientKeyData: b64(keyPem) }, labels: { env: 'test' },
  })
  t.equal(cert.status, 201, JSON.stringify(cert.body))
  t.match(cert.body, { authType: 'certificate', status: 'connected', labels: { env: 'test' } }, 'connected without a CA: insecure reached insecure_skip_tls_verify')
  const edit = await ui('GET', '/clusters/mtls')
  t.match(edit.body, { name: 'mtls', displayName: 'mTLS', authType: 'certificate', namespace: 'default', insecure: true }, 'the edit form\'s namespace and insecure at the top level')

  const { token, namespace } = sim.identities.serviceAccount
  const sa = await ui('POST', '/clusters', {
    name: 'deployer', displayName: 'SA', server: sim.url, authType: 'serviceaccount', singleNode: false,
    credentials: { namespace, token, caData: b64(sim.caPem) }, labels: {},
  })
  t.equal(sa.status, 201, JSON.stringify(sa.body))
  t.match(sa.body, { authType: 'serviceaccount', status: 'connected' })
  t.match((await ui('GET', '/clusters/deployer')).body, { namespace, insecure: false })
})

t.test('GET /clusters: clusters[] in the UI\'s shape and the default cluster\'s id at the top level', async (t) => {
  const res = await ui('GET', '/clusters')
  t.equal(res.status, 200)
  t.ok(Array.isArray(res.body.clusters))
  t.equal(res.body.clusters.length, 4)
  for (const c of res.body.clusters) assertUiCluster(t, c)
  const defaults = res.body.clusters.filter((c: { default: boolean }) => c.default)
  t.equal(defaults.length, 1, 'one default')
  t.equal(res.body.default, defaults[0].id, '`default` is compared with cluster.id')
  t.equal(defaults[0].name, 'sim', 'the first cluster added')
  const sim1 = res.body.clusters.find((c: { name: string }) => c.name === 'sim')
  t.match(sim1.metadata, { version: 'v1.32.0-kube-sim', nodeCount: 2 })
  t.equal(res.body.clusters.find((c: { name: string }) => c.name === 'badtoken').status, 'error')

  const none = await ui('GET', '/clusters', undefined, stranger)
  t.same(none.body.clusters, [], 'another user sees none of them')
  t.equal(none.body.default, null)
})

t.test('Edit cluster with the UI\'s body: the display name changes; credentials untouched when none were filled', async (t) => {
  // OBSERVED "Edit cluster", verbatim but for the simulator's address.
  const res = await ui('PUT', '/clusters/sim', {
    displayName: 'Kube Sim (edited)', description: 'kube-sim on loopback', server: sim.url, authType: 'token', singleNode: false, credentials: { namespace: 'default' },
  })
  t.equal(res.status, 200, JSON.stringify(res.body))
  t.match(res.body, { name: 'sim', displayName: 'Kube Sim (edited)', status: 'connected' })
  t.match((await ui('GET', '/clusters/sim')).body, { displayName: 'Kube Sim (edited)', namespace: 'default', insecure: false })
  t.equal((await ui('POST', '/clusters/sim/test')).status, 200, 'the credentials still work')
})

t.test('Edit cluster with new credentials: checked first; failing ones change nothing, working ones replace', async (t) => {
  const bad = await ui('PUT', '/clusters/sim', {
    displayName: 'Should not stick', description: 'x', server: sim.url, authType: 'token', singleNode: false, credentials: { namespace: 'default', token: 'wrong-token' },
  })
  t.equal(bad.status, 502)
  t.equal(bad.body.message, bad.body.error)
  t.match(bad.body.error, /old ones are kept/)
  t.match((await ui('GET', '/clusters/sim')).body, { displayName: 'Kube Sim (edited)', description: 'kube-sim on loopback' }, 'nothing of the edit was written')

  const fixed = await ui('PUT', '/clusters/badtoken', {
    displayName: 'Fixed', description: '', server: sim.url, authType: 'token', singleNode: false,
    credentials: { namespace: 'default', token: sim.identities.admin.token, caData: b64(sim.caPem) },
  })
  t.equal(fixed.status, 200, JSON.stringify(fixed.body))
  t.match(fixed.body, { displayName: 'Fixed', status: 'connected' })
})

t.test('Edit cluster refusals: a new auth type or TLS setting without credentials is a 400 with error and message', async (t) => {
  const base = { displayName: 'Kube Sim (edited)', description: 'kube-sim on loopback', server: sim.url, singleNode: false }
  for (const [body, pattern] of [
    [{ ...base, authType: 'certificate', credentials: { namespace: 'default' } }, /needs its credentials/],
    [{ ...base, authType: 'token', credentials: { namespace: 'default', insecure: true } }, /enter the credentials again/],
    [{ ...base, authType: 'token', labels: 'x' }, /labels/],
    [{ ...base, authType: 'password' }, /auth_type/],
    [{ ...base, authType: 'token', credentials: { namespace: 'default', sshKey: 'x' } }, /additional propert/],
  ] as const) {
    const res = await ui('PUT', '/clusters/sim', body)
    t.equal(res.status, 400, JSON.stringify(body))
    t.match(res.body.error, pattern)
    t.equal(res.body.message, res.body.error)
  }
  const sa = await ui('PUT', '/clusters/deployer', { displayName: 'SA', server: sim.url, authType: 'serviceaccount', credentials: { namespace: 'kube-system' } })
  t.equal(sa.status, 400, 'a service account\'s namespace is part of its credentials')
  const ns = await ui('PUT', '/clusters/sim', { ...base, authType: 'token', credentials: { namespace: 'shop' } })
  t.equal(ns.status, 400, 'a changed namespace is refused, not silently dropped')
  t.match(ns.body.error, /enter the credentials again/)
  t.match((await ui('GET', '/clusters/sim')).body, { namespace: 'default' })

  // A cluster added on /v1/api without a namespace: the form shows "default" and sends it back.
  const plain = await app.inject({ method: 'POST', url: '/v1/api/clusters', headers: owner.headers, payload: { name: 'plain', server: sim.url, auth_type: 'token', credentials: { token: sim.identities.admin.token, ca_data: sim.caPem } } })
  t.equal(plain.statusCode, 201)
  t.match((await ui('GET', '/clusters/plain')).body, { namespace: null, insecure: false })
  const edited = await ui('PUT', '/clusters/plain', { displayName: 'Plain', description: '', server: sim.url, authType: 'token', singleNode: false, credentials: { namespace: 'default' } })
  t.equal(edited.status, 200, 'the form\'s default namespace is no change')
  t.equal((await app.inject({ method: 'DELETE', url: '/v1/api/clusters/plain', headers: owner.headers })).statusCode, 204)
  t.match((await ui('GET', '/clusters/mtls')).body, { insecure: true })
  const unchanged = await ui('PUT', '/clusters/mtls', { displayName: 'mTLS', server: sim.url, authType: 'certificate', singleNode: true, credentials: { namespace: 'default', insecure: true } })
  t.equal(unchanged.status, 200, 'the settings sent back as shown are no change')
})

t.test('set default, test, refresh, status: 2xx and the statuses the UI copies into the cluster', async (t) => {
  const mtls = (await ui('GET', '/clusters/mtls')).body
  const def = await ui('PUT', '/clusters/mtls/default')
  t.equal(def.status, 200)
  t.match(def.body, { name: 'mtls', default: true })
  t.equal((await ui('GET', '/clusters')).body.default, mtls.id)

  const tested = await ui('POST', '/clusters/mtls/test')
  t.equal(tested.status, 200)
  t.match(tested.body, { status: 'connected', version: 'v1.32.0-kube-sim', nodes: 2 }, 'never `healthy`: the store copies it into the cluster')

  const refreshed = await ui('POST', '/clusters/sim/refresh')
  t.equal(refreshed.status, 200)
  t.match(refreshed.body.metadata, { version: 'v1.32.0-kube-sim', nodeCount: 2, platform: String })

  const status = await ui('GET', '/clusters/sim/status')
  t.equal(status.status, 200)
  t.ok(UI_STATUSES.includes(status.body.status))
  t.match(status.body, { name: 'sim', status: 'connected', version: 'v1.32.0-kube-sim' })

  await app.inject({ method: 'PUT', url: '/v1/api/clusters/sim/default', headers: owner.headers })
})

t.test('dashboard metrics: health[], resources.*.percentage, nodeCount, podCount, each from what we read', async (t) => {
  const res = await ui('GET', '/clusters/sim/metrics')
  t.equal(res.status, 200, JSON.stringify(res.body))
  const m = res.body
  t.ok(Array.isArray(m.health) && m.health.length > 0)
  for (const h of m.health) {
    t.type(h.name, 'string')
    t.ok(HEALTH.includes(h.status), `${h.name}: ${h.status}`)
  }
  t.match(m.health.find((h: { name: string }) => h.name === 'API Server'), { status: 'healthy' })
  t.match(m.health.find((h: { name: string }) => h.name === 'Nodes'), { status: 'healthy', message: '2 of 2 ready' })
  t.match(m.health.find((h: { name: string }) => h.name === 'Metrics API'), { status: 'healthy' }, 'the simulator serves metrics.k8s.io')

  const live = await canonical('/clusters/sim/metrics')
  t.equal(m.nodeCount, live.nodes.length)
  t.equal(m.nodeCount, 2)
  for (const k of ['cpu', 'memory'] as const) {
    const p = m.resources[k].percentage
    t.type(p, 'number', `${k}.percentage is a number (the card calls toFixed)`)
    t.ok(p >= 0 && p <= 100, `${k} ${p}%`)
  }
  t.equal(m.resources.cpu.percentage, Math.round((live.usage.cpu_cores / live.capacity.cpu_cores) * 1000) / 10, 'cpu use against node capacity')
  t.equal(m.resources.memory.capacity, live.capacity.memory_bytes)
  t.equal(m.resources.storage.percentage, undefined, 'storage use is not measured: "Not available", not a made-up figure')
  const overview = await canonical('/metrics/overview')
  t.equal(m.podCount, overview.items.find((i: { name: string }) => i.name === 'sim').pods.total, 'pods read as the overview reads them')
  t.match(m.health.find((h: { name: string }) => h.name === 'Health check'), { status: 'healthy' }, 'the stored status: connected')
  t.type(m.podCount, 'number')
})

t.test('refusals: bad bodies are 400, another user\'s cluster is 404, all with error and message', async (t) => {
  for (const body of [
    { ...addBody, name: 'x1', authType: 'password' },
    { ...addBody, name: 'x2', credentials: { ...addBody.credentials, caData: 'not pem' } },
    { ...addBody, name: 'Not A Dns Name' },
    { ...addBody, name: 'x3', credentials: { ...addBody.credentials, token: undefined } },
    { ...addBody, name: 'x4', extra: true },
  ]) {
    const res = await ui('POST', '/clusters', body)
    t.equal(res.status, 400, JSON.stringify(res.body))
    t.equal(res.body.message, res.body.error)
  }
  t.notOk((await canonical('/clusters?limit=100')).clusters.some((c: { name: string }) => /^x\d$/.test(c.name)), 'nothing half-written')
  const dup = await ui('POST', '/clusters', addBody)
  t.equal(dup.status, 409)

  for (const [method, url] of [['GET', '/clusters/sim'], ['PUT', '/clusters/sim'], ['DELETE', '/clusters/sim'], ['PUT', '/clusters/sim/default'], ['POST', '/clusters/sim/test'], ['POST', '/clusters/sim/refresh'], ['GET', '/clusters/sim/status'], ['GET', '/clusters/sim/metrics']] as const) {
    const res = await ui(method, url, method === 'PUT' && url === '/clusters/sim' ? { displayName: 'mine now', authType: 'token' } : undefined, stranger)
    t.equal(res.status, 404, `${method} ${url}`)
    t.equal(res.body.message, res.body.error)
  }
  t.equal((await ui('GET', '/clusters/sim')).body.displayName, 'Kube Sim (edited)')
})

t.test('DELETE removes it; no credential ever reached a reply or the log', async (t) => {
  const res = await ui('DELETE', '/clusters/badtoken')
  t.equal(res.status, 204)
  t.equal((await ui('GET', '/clusters/badtoken')).status, 404)
  const { certPem: _c, keyPem } = sim.identities.clientCert
  const secrets = [sim.identities.admin.token, sim.identities.serviceAccount.token, b64(keyPem).slice(0, 40), keyPem.split('\n')[1]]
  const seen = bodies.join('\n') + logs.join('')
  for (const s of secrets) t.notOk(seen.includes(s), 'a secret leaked')
})
