// Each auth type reaching the simulated cluster over TLS, each refusal, and what a user sees of it.
import t from 'tap'
import { parse, stringify } from 'yaml'
import { OAuth2Server } from 'oauth2-mock-server'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'
import { startTestCluster } from '../helpers/kube.ts'
import { createPki } from '../kube-sim/pki.ts'

const issuer = new OAuth2Server()
await issuer.issuer.keys.generate('RS256')
await issuer.start(0, '127.0.0.1')
t.teardown(() => issuer.stop())
const issuerUrl = issuer.issuer.url!

const sim = await startTestCluster(t, { oidc: { issuerUrl, clientId: 'cluster-client' } })
// http issuers are only for this loopback test; the cluster itself is https.
const { app, logs } = await startTestApp(t, { ALLOW_INSECURE_CLUSTERS: true, CLUSTER_TIMEOUT_MS: 3000 })
const owner = await registerUser(app)
const headers = { authorization: `Bearer ${owner.token}` }

const bodies: string[] = []
async function call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object, h = headers) {
  const res = await app.inject({ method, url, headers: h, ...(payload && { payload }) })
  bodies.push(res.body)
  return { status: res.statusCode, body: res.body ? res.json() : undefined }
}
const create = (payload: object) => call('POST', '/v1/api/clusters', payload)
const test = (name: string) => call('POST', `/v1/api/clusters/${name}/test`)

const { certPem, keyPem } = sim.identities.clientCert
const secrets = [sim.identities.admin.token, sim.identities.serviceAccount.token, keyPem.split('\n')[1], Buffer.from(keyPem).toString('base64').slice(0, 40)]

t.test('a bearer token with the CA as raw PEM', async (t) => {
  const res = await create({ name: 'tok', server: sim.url, auth_type: 'token', credentials: { token: sim.identities.admin.token, ca_data: sim.caPem } })
  t.equal(res.status, 201, JSON.stringify(res.body))
  t.match(res.body, { name: 'tok', server: sim.url, auth_type: 'token', status: 'unknown', access: 'owner', is_default: true }, 'the first cluster is the default')
  for (const key of ['credentials', 'credentials_sealed', 'token', 'ca_data']) t.notOk(key in res.body, `no ${key} in the reply`)
  const tested = await test('tok')
  t.equal(tested.status, 200)
  t.same(tested.body, { status: 'healthy', version: 'v1.32.0-kube-sim', nodes: 2 })
  const got = await call('GET', '/v1/api/clusters/tok')
  t.match(got.body, { status: 'connected', metadata: { version: 'v1.32.0-kube-sim', node_count: 2 } })
})

t.test('credential fields at the top level work too (the spec\'s form)', async (t) => {
  const res = await create({ name: 'top', server: sim.url, auth_type: 'token', token: sim.identities.admin.token, ca_data: Buffer.from(sim.caPem).toString('base64') })
  t.equal(res.status, 201)
  t.equal((await test('top')).status, 200)
  const both = await create({ name: 'both', server: sim.url, auth_type: 'token', token: 'x', credentials: { token: 'y' } })
  t.equal(both.status, 400)
  t.match(both.body.error, /either inside credentials or at the top level/)
})

t.test('mutual TLS with a client certificate signed by the cluster CA', async (t) => {
  const res = await create({ name: 'mtls', server: sim.url, auth_type: 'certificate', credentials: { client_cert_data: certPem, client_key_data: Buffer.from(keyPem).toString('base64'), ca_data: sim.caPem } })
  t.equal(res.status, 201)
  t.match((await test('mtls')).body, { status: 'healthy', nodes: 2 })
})

t.test('a service-account token, namespace-scoped', async (t) => {
  const sa = sim.identities.serviceAccount
  const res = await create({ name: 'sa', server: sim.url, auth_type: 'serviceaccount', credentials: { token: sa.token, namespace: sa.namespace, ca_data: sim.caPem } })
  t.equal(res.status, 201)
  t.equal((await test('sa')).status, 200)
})

t.test('a kubeconfig, choosing one of its contexts', async (t) => {
  const doc = parse(sim.kubeconfigYaml('token'))
  const good = doc.contexts[0].name
  doc.users.push({ name: 'nobody', user: { token: 'not-a-valid-token' } })
  doc.contexts.push({ name: 'broken', context: { cluster: doc.contexts[0].context.cluster, user: 'nobody' } })
  doc['current-context'] = 'broken'
  const kubeconfig = stringify(doc)
  let res = await create({ name: 'kc', auth_type: 'kubeconfig', credentials: { kubeconfig, context: good } })
  t.equal(res.status, 201, JSON.stringify(res.body))
  t.equal(res.body.server, sim.url, 'the server comes from the kubeconfig')
  t.equal((await test('kc')).status, 200)
  res = await create({ name: 'kc-current', auth_type: 'kubeconfig', credentials: { kubeconfig } })
  t.equal(res.status, 201)
  const broken = await test('kc-current')
  t.equal(broken.status, 502, 'its current context has a bad token')
  t.match(broken.body.error, /refused the credentials \(401/)
  t.equal((await call('GET', '/v1/api/clusters/kc-current')).body.status, 'error', 'the stored status follows')
})

t.test('OIDC: the ID token is refreshed from the issuer with the refresh token, then kept sealed', async (t) => {
  const res = await create({ name: 'oidc', server: sim.url, auth_type: 'oidc', credentials: { issuer_url: issuerUrl, client_id: 'cluster-client', refresh_token: 'refresh-me', ca_data: sim.caPem } })
  t.equal(res.status, 201)
  t.match((await test('oidc')).body, { status: 'healthy' })
  const stored = await app.db.collection('clusters').findOne({ name: 'oidc' })
  const creds = app.sealer.open<{ id_token?: string; refresh_token: string }>(stored!.credentials_sealed, `clusters:${stored!._id}`)
  t.ok(creds.id_token, 'the fresh ID token was stored, sealed')
  t.not(creds.refresh_token, 'refresh-me', 'a rotated refresh token replaced the old one')
  // The values themselves, not a pattern: random ciphertext contains "eyJ" about once in a hundred runs.
  const everything = JSON.stringify(stored)
  for (const value of ['refresh-me', creds.refresh_token, creds.id_token!]) t.notOk(everything.includes(value), 'nothing readable in the database')
})

t.test('each refusal is a clear error and stores nothing', async (t) => {
  const before = await app.db.collection('clusters').countDocuments()
  const exec = stringify({ ...parse(sim.kubeconfigYaml('token')), users: [{ name: 'u', user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: '/bin/sh', args: ['-c', 'touch /tmp/pwned'] } } }] })
  let res = await create({ name: 'exec', auth_type: 'kubeconfig', credentials: { kubeconfig: exec } })
  t.equal(res.status, 400)
  t.match(res.body.error, /exec plugins are not allowed/)
  const file = stringify({ ...parse(sim.kubeconfigYaml('token')), users: [{ name: 'u', user: { 'token-file': '/etc/passwd' } }] })
  res = await create({ name: 'file', auth_type: 'kubeconfig', credentials: { kubeconfig: file } })
  t.equal(res.status, 400)
  t.match(res.body.error, /file paths are not allowed/)
  res = await create({ name: 'empty', server: sim.url, auth_type: 'token', credentials: {} })
  t.equal(res.status, 400)
  t.match(res.body.error, /credentials.token is required/)
  res = await create({ name: 'nocreds', server: sim.url, auth_type: 'certificate' })
  t.equal(res.status, 400)
  res = await create({ name: 'meta', server: 'https://169.254.169.254', auth_type: 'token', token: 'x' })
  t.equal(res.status, 400)
  t.match(res.body.error, /not allowed/)
  res = await create({ name: 'Bad_Name', server: sim.url, auth_type: 'token', token: 'x' })
  t.equal(res.status, 400)
  t.equal(await app.db.collection('clusters').countDocuments(), before)
  res = await create({ name: 'tok', server: sim.url, auth_type: 'token', token: 'x' })
  t.equal(res.status, 409, 'names are unique per owner')
})

t.test('a CA that did not sign the server: 502 naming the TLS failure', async (t) => {
  const other = await createPki(['127.0.0.1'])
  t.equal((await create({ name: 'wrong-ca', server: sim.url, auth_type: 'token', credentials: { token: sim.identities.admin.token, ca_data: other.ca.certPem } })).status, 201)
  const res = await test('wrong-ca')
  t.equal(res.status, 502)
  t.match(res.body.error, /^TLS verification failed \([A-Z_]+\): the cluster's certificate is not trusted; check ca_data$/)
  t.equal((await create({ name: 'no-ca', server: sim.url, auth_type: 'token', token: sim.identities.admin.token })).status, 201)
  t.match((await test('no-ca')).body.error, /TLS verification failed/, 'no CA: the system roots do not trust it either')
  t.equal((await create({ name: 'down', server: 'https://127.0.0.1:1', auth_type: 'token', token: 'x' })).status, 201)
  t.match((await test('down')).body.error, /cannot reach the cluster: connection refused/)
})

t.test('refresh, status, metrics and connection logs', async (t) => {
  const refreshed = await call('POST', '/v1/api/clusters/tok/refresh')
  t.equal(refreshed.status, 200)
  t.match(refreshed.body.metadata, { version: 'v1.32.0-kube-sim', platform: 'linux/amd64', node_count: 2 })
  t.ok(refreshed.body.metadata.namespaces.includes('kube-system'))
  t.match((await call('GET', '/v1/api/clusters/tok/status')).body, { name: 'tok', status: 'connected', version: 'v1.32.0-kube-sim' })
  const metrics = await call('GET', '/v1/api/clusters/tok/metrics')
  t.equal(metrics.status, 200)
  t.match(metrics.body, { available: true, capacity: { cpu_cores: Number, memory_bytes: Number } })
  t.ok(metrics.body.capacity.cpu_cores > 0)
  t.equal(metrics.body.nodes.length, 2)
  const log = await call('GET', '/v1/api/clusters/tok/logs?limit=50')
  // The every-minute health check may have run in between; these are the user's own actions, in order.
  const actions = log.body.logs.map((l: { action: string }) => l.action).reverse().filter((a: string) => a !== 'health_check')
  t.same(actions, ['create', 'test', 'refresh'])
  t.ok(log.body.logs.every((l: { success: boolean }) => l.success))
})

t.test('new credentials replace the old ones only after they work', async (t) => {
  let res = await call('PUT', '/v1/api/clusters/tok/credentials', { token: 'wrong-token', ca_data: sim.caPem })
  t.equal(res.status, 502)
  t.match(res.body.error, /old ones are kept/)
  t.equal((await test('tok')).status, 200, 'the old credentials still work')
  res = await call('PUT', '/v1/api/clusters/tok/credentials', { auth_type: 'certificate', client_cert_data: certPem, client_key_data: keyPem, ca_data: sim.caPem })
  t.equal(res.status, 200)
  t.equal(res.body.auth_type, 'certificate')
  t.equal((await test('tok')).status, 200)
})

t.test('credentials that no longer open: test, refresh and metrics say so (409), and new credentials mend it', async (t) => {
  t.equal((await create({ name: 'sealed-away', server: sim.url, auth_type: 'token', credentials: { token: sim.identities.admin.token, ca_data: sim.caPem } })).status, 201)
  // Sealed under a key this server does not have, as after ENCRYPTION_KEY was replaced without rotation.
  await app.db.collection('clusters').updateOne({ name: 'sealed-away' }, { $set: { credentials_sealed: 'sealed:v1:unknownkey00:AAAAAAAAAAAAAAAA:AAAA:AAAAAAAAAAAAAAAAAAAAAA' } })
  const expected = 'the stored credentials of cluster "sealed-away" cannot be opened (was ENCRYPTION_KEY changed?); replace them with PUT /v1/api/clusters/sealed-away/credentials'
  for (const [method, path] of [['POST', 'test'], ['POST', 'refresh'], ['GET', 'metrics']] as const) {
    const res = await call(method, `/v1/api/clusters/sealed-away/${path}`)
    t.equal(res.status, 409, path)
    t.same(res.body, { error: expected }, path)
  }
  t.match((await call('GET', '/v1/api/clusters/sealed-away/status')).body, { status: 'error', status_message: expected }, 'the stored status says so too')
  t.equal((await call('PUT', '/v1/api/clusters/sealed-away/credentials', { token: sim.identities.admin.token, ca_data: sim.caPem })).status, 200)
  t.equal((await test('sealed-away')).status, 200, 'replaced credentials work')
})

t.test('default cluster', async (t) => {
  t.equal((await call('GET', '/v1/api/clusters/default')).body.name, 'tok', 'the first cluster added')
  t.equal((await call('PUT', '/v1/api/clusters/sa/default')).body.is_default, true)
  t.equal((await call('PUT', '/v1/api/clusters/mtls/default')).body.is_default, true)
  t.equal((await call('GET', '/v1/api/clusters/default')).body.name, 'mtls')
  t.equal((await call('GET', '/v1/api/clusters/sa')).body.is_default, false, 'only one default')
})

t.test('no credential ever reaches a reply or a log line', async (t) => {
  const everything = bodies.join('\n') + logs.join('\n')
  for (const secret of secrets) t.notOk(everything.includes(secret), `secret ${secret.slice(0, 6)}… is nowhere`)
  t.notOk(everything.includes('refresh-me'))
})

t.test('the address policy is applied on every connection, not only when the server is saved', async (t) => {
  // A host name that resolved to a private address when saved and to the metadata address now.
  let answer = '127.0.0.1'
  const policy = app.outboundPolicy as unknown as { resolve: (host: string) => Promise<string[]> }
  const original = policy.resolve
  policy.resolve = async (host) => (host === 'rebind.test' ? [answer] : original(host))
  t.teardown(() => { policy.resolve = original })
  t.equal((await create({ name: 'rebind', server: 'https://rebind.test:6443', auth_type: 'token', token: 'x' })).status, 201)
  answer = '169.254.169.254'
  const res = await test('rebind')
  t.equal(res.status, 502)
  t.match(res.body.error, /169\.254\.169\.254 is not allowed/)
})
