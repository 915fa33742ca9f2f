// Registries through the KubeOrch UI adapter (CONTRACT.md §2.12, §8 row 18; OBSERVED rows 20, 20b): the UI's
// own bodies (nested `credentials`, camelCase), `{registry}` wrappers, list items whose `registryType` and
// `status` stay in the sets the registries page switches on, a connection test that answers non-2xx when
// the registry refuses (the UI marks the registry by the status code), and credentials in no reply.
import t, { type Test } from 'tap'
import { randomBytes } from 'node:crypto'
import { startTestApp } from '../../helpers/app.ts'
import { registerUser, type TestUser } from '../../helpers/auth.ts'
import { startFakeRegistry } from '../../registries/fake-registry.ts'
import { startTestRegistry } from '../../helpers/test-registry.ts'

const { app, logs } = await startTestApp(t, { ALLOW_INSECURE_CLUSTERS: true })
const admin = await registerUser(app, { role: 'admin' })
const user = await registerUser(app, { role: 'user' })

const PASSWORD = `pw-${randomBytes(9).toString('hex')}`
const fake = await startFakeRegistry({ mode: 'basic', username: 'ada', password: PASSWORD })
t.teardown(() => fake.close())

const bodies: string[] = []
const testRegistry = await startTestRegistry({ auth: 'bearer' })
t.teardown(() => testRegistry.close())
const K = '/kubeorch/v1/api'
async function call(who: TestUser, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) {
  const res = await app.inject({ method, url: `${K}${url}`, headers: who.headers, ...(payload && { payload }) })
  bodies.push(res.body)
  return { status: res.statusCode, body: res.body ? res.json() : null }
}

const REGISTRY_TYPES = ['dockerhub', 'ghcr', 'ecr', 'gcr', 'acr', 'custom']
const STATUSES = ['connected', 'disconnected', 'error', 'unknown']
function assertUiRegistry(t: Test, r: any) {
  t.type(r.id, 'string')
  t.type(r.name, 'string')
  t.ok(REGISTRY_TYPES.includes(r.registryType), `registryType ${r.registryType} is in the UI's set`)
  t.ok(STATUSES.includes(r.status), `status ${r.status} is in the UI's set`)
  t.type(r.registryUrl, 'string')
  t.type(r.isDefault, 'boolean')
  t.ok(r.lastCheck === null || typeof r.lastCheck === 'string', 'lastCheck is a timestamp or null')
  t.ok(!Number.isNaN(Date.parse(r.createdAt)) && !Number.isNaN(Date.parse(r.updatedAt)), 'createdAt and updatedAt are timestamps')
}

let localId = ''

t.test('Add registry with the UI\'s exact body (OBSERVED 20b) → {registry}; the list carries the UI\'s fields', async (t) => {
  // Verbatim from OBSERVED.md "Add registry", with the loopback registry's address and password.
  const res = await call(admin, 'POST', '/admin/registries', { name: 'local-registry', registryType: 'custom', registryUrl: fake.url, credentials: { username: 'ada', password: PASSWORD } })
  t.equal(res.status, 201, JSON.stringify(res.body))
  assertUiRegistry(t, res.body.registry)
  t.match(res.body.registry, { name: 'local-registry', registryType: 'custom', registryUrl: fake.url, status: 'connected', isDefault: true, lastCheck: String })
  localId = res.body.registry.id

  const list = await call(user, 'GET', '/registries')
  t.equal(list.status, 200)
  t.equal(list.body.registries.length, 1)
  for (const r of list.body.registries) assertUiRegistry(t, r)
  t.equal(list.body.registries[0].id, localId)
})

t.test('Add registry: the card shows the connection test\'s outcome at once, not "Unknown" (OBSERVED.md, last section)', async (t) => {
  const res = await call(admin, 'POST', '/admin/registries', { name: 'builds', registryType: 'custom', registryUrl: testRegistry.url, credentials: { username: testRegistry.username, password: testRegistry.password } })
  t.equal(res.status, 201, JSON.stringify(res.body))
  assertUiRegistry(t, res.body.registry)
  t.match(res.body.registry, { status: 'connected', lastCheck: String, status_message: /connected as / })
  t.ok(testRegistry.requests.some((r) => r.path === '/v2/' && r.auth === 'bearer' && r.status === 200), 'the add logged in to the registry')
  const listed = (await call(user, 'GET', '/registries')).body.registries.find((r: any) => r.id === res.body.registry.id)
  t.match(listed, { status: 'connected', lastCheck: res.body.registry.lastCheck }, 'the list after the add shows the same')
  const one = await app.inject({ method: 'GET', url: `/v1/api/registries/${res.body.registry.id}`, headers: user.headers })
  t.match(one.json(), { status: 'connected', last_checked_at: res.body.registry.lastCheck }, 'and so does /v1/api')

  // A login the registry refuses: still added, marked error with the reason, on both prefixes.
  const wrong = await call(admin, 'POST', '/admin/registries', { name: 'builds-wrong', registryType: 'custom', registryUrl: testRegistry.url, credentials: { username: testRegistry.username, password: 'not-it' } })
  t.equal(wrong.status, 201)
  t.match(wrong.body.registry, { status: 'error', lastCheck: String, status_message: /refused/ })
  const v1 = await app.inject({ method: 'POST', url: '/v1/api/admin/registries', headers: admin.headers, payload: { name: 'builds-v1', registry_type: 'custom', url: testRegistry.url, username: testRegistry.username, password: testRegistry.password } })
  t.match(v1.json(), { status: 'connected', last_checked_at: String })
  for (const id of [res.body.registry.id, wrong.body.registry.id, v1.json().id]) t.equal((await call(admin, 'DELETE', `/admin/registries/${id}`)).status, 204)
})

t.test('each registry type\'s credential keys map onto a login; types beyond the UI\'s show as custom', async (t) => {
  const gcr = await call(admin, 'POST', '/admin/registries', { name: 'gcr', registryType: 'gcr', credentials: { serviceAccountJson: JSON.stringify({ type: 'service_account', private_key: 'k' }) } })
  t.equal(gcr.status, 201, JSON.stringify(gcr.body))
  t.match(gcr.body.registry, { registryType: 'gcr', registryUrl: 'https://gcr.io', username: '_json_key', has_credentials: true })
  const acr = await call(admin, 'POST', '/admin/registries', { name: 'acr', registryType: 'acr', registryUrl: 'https://team.azurecr.io', credentials: { tenantId: 'tenant', clientId: 'app-id', clientSecret: 'sp-secret' } })
  t.equal(acr.status, 201, JSON.stringify(acr.body))
  t.match(acr.body.registry, { registryType: 'acr', username: 'app-id', has_credentials: true })
  const hub = await call(admin, 'POST', '/admin/registries', { name: 'hub', registryType: 'dockerhub', registryUrl: '', credentials: { username: '', password: '' } })
  t.equal(hub.status, 201, 'untouched form inputs ("") mean absent')
  t.match(hub.body.registry, { registryType: 'dockerhub', has_credentials: false })
  // A quay registry made through /v1/api: the UI has no such type, so it reads custom (anything else crashes the page).
  const quay = await app.inject({ method: 'POST', url: '/v1/api/admin/registries', headers: admin.headers, payload: { name: 'quay', registry_type: 'quay' } })
  t.equal(quay.statusCode, 201)
  const list = await call(user, 'GET', '/registries')
  t.equal(list.body.registries.length, 5)
  for (const r of list.body.registries) assertUiRegistry(t, r)
  t.equal(list.body.registries.find((r: any) => r.name === 'quay').registryType, 'custom')
  t.equal(list.body.registries.find((r: any) => r.name === 'quay').registry_type, 'quay', 'our own field stays')
})

t.test('credentials without a counterpart are refused with a clear 400, nothing stored', async (t) => {
  const ecr = await call(admin, 'POST', '/admin/registries', { name: 'ecr', registryType: 'ecr', registryUrl: 'https://1234.dkr.ecr.eu-west-1.amazonaws.com', credentials: { accessKeyId: 'AKIA', secretAccessKey: 'sk', region: 'eu-west-1' } })
  t.equal(ecr.status, 400)
  t.match(ecr.body.error, /ECR access keys .* not supported/)
  t.equal(ecr.body.message, ecr.body.error)
  for (const [body, why] of [
    [{ name: 'x', registryType: 'custom', registryUrl: fake.url, credentials: { username: 'a', password: 'b', serviceAccountJson: '{}' } }, /one login/],
    [{ name: 'x', registryType: 'gcr', credentials: { serviceAccountJson: 'not json' } }, /service account key/],
    [{ name: 'x', registryType: 'custom', registryUrl: fake.url, credentials: { apiKey: 'k' } }, /apiKey/],
    [{ name: 'x', registryType: 'custom', registryUrl: fake.url, credentials: 'ada:pw' }, /credentials must be an object/],
    [{ name: 'x', registryType: 'nexus', registryUrl: fake.url }, /registry_type/],
    [{ name: 'x', registryType: 'custom', registryUrl: fake.url, credentials: { password: 'p' } }, /needs a username/],
  ] as const) {
    const res = await call(admin, 'POST', '/admin/registries', body)
    t.equal(res.status, 400, JSON.stringify(body))
    t.match(res.body, { error: why, message: String })
  }
  const list = await call(user, 'GET', '/registries')
  t.notOk(list.body.registries.some((r: any) => r.name === 'ecr' || r.name === 'x'), 'nothing half-written')
})

t.test('the connection test: 2xx with message when it connects, a non-2xx with the reason when refused', async (t) => {
  const ok = await call(admin, 'POST', `/admin/registries/${localId}/test`)
  t.equal(ok.status, 200, JSON.stringify(ok.body))
  t.type(ok.body.message, 'string')
  // Wrong password: the UI marks the registry error only on a failed request.
  const edit = await call(admin, 'PUT', `/admin/registries/${localId}`, { name: 'local-registry', registryUrl: fake.url, credentials: { username: 'ada', password: 'wrong-password' } })
  t.equal(edit.status, 200, JSON.stringify(edit.body))
  assertUiRegistry(t, edit.body.registry)
  t.match(edit.body.registry, { status: 'error', lastCheck: String }, 'a new login is tested at once')
  const refused = await call(admin, 'POST', `/admin/registries/${localId}/test`)
  t.equal(refused.status, 502)
  t.type(refused.body.error, 'string')
  t.equal(refused.body.message, refused.body.error)
  const list = await call(user, 'GET', '/registries')
  t.equal(list.body.registries.find((r: any) => r.id === localId).status, 'error', 'the outcome is stored')
  t.type(list.body.registries.find((r: any) => r.id === localId).lastCheck, 'string')
})

t.test('update with the UI body, set default, delete; admin only; unknown id 404', async (t) => {
  const renamed = await call(admin, 'PUT', `/admin/registries/${localId}`, { name: 'local', credentials: { username: 'ada', password: PASSWORD } })
  t.equal(renamed.status, 200)
  t.equal(renamed.body.registry.name, 'local')
  const list = await call(user, 'GET', '/registries')
  const other = list.body.registries.find((r: any) => r.name === 'hub')
  const def = await call(admin, 'PUT', `/admin/registries/${other.id}/default`)
  t.equal(def.status, 200)
  t.equal(def.body.registry.isDefault, true)
  const after = await call(user, 'GET', '/registries')
  t.same(after.body.registries.filter((r: any) => r.isDefault).map((r: any) => r.id), [other.id], 'exactly one default')

  for (const [method, url, payload] of [
    ['POST', '/admin/registries', { name: 'y', registryType: 'custom', registryUrl: fake.url }],
    ['PUT', `/admin/registries/${localId}`, { name: 'z' }],
    ['DELETE', `/admin/registries/${localId}`, undefined],
    ['POST', `/admin/registries/${localId}/test`, undefined],
    ['PUT', `/admin/registries/${localId}/default`, undefined],
  ] as const) {
    const res = await call(user, method, url, payload)
    t.equal(res.status, 403, `${method} ${url} needs an admin`)
    t.match(res.body, { error: String, message: String })
  }
  const missing = await call(admin, 'DELETE', '/admin/registries/0123456789abcdef01234567')
  t.equal(missing.status, 404)
  t.match(missing.body, { error: String, message: String })
  const del = await call(admin, 'DELETE', `/admin/registries/${localId}`)
  t.equal(del.status, 204)
  t.notOk((await call(user, 'GET', '/registries')).body.registries.some((r: any) => r.id === localId))
})

t.test('no reply and no log line carries a password, secret or key', async (t) => {
  const everything = `${bodies.join('\n')}\n${logs.join('')}`
  for (const secret of [PASSWORD, 'wrong-password', 'sp-secret', 'private_key', 'secretAccessKey":"sk']) t.notOk(everything.includes(secret), `${secret} appears nowhere`)
})
