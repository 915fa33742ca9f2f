// Registries through HTTP: admin-only writes, reads for everyone signed in, write-only credentials (in no
// reply and no log line), unique names, exactly one default, and the connection test against registries
// running on loopback (plain http is allowed here by ALLOW_INSECURE_CLUSTERS).
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { startTestApp } from '../helpers/app.ts'
import { registerUser, type TestUser } from '../helpers/auth.ts'
import { startFakeRegistry } from './fake-registry.ts'

const { app, logs } = await startTestApp(t, { ALLOW_INSECURE_CLUSTERS: true })
const admin = await registerUser(app)
const user = await registerUser(app, { role: 'user' })
t.equal(admin.user.role, 'admin', 'the first user is the admin')

const PASSWORD = `pw-${randomBytes(9).toString('hex')}`
const TOKEN = `pat-${randomBytes(9).toString('hex')}`
const bearer = await startFakeRegistry({ mode: 'bearer', username: 'robot', password: PASSWORD })
const basic = await startFakeRegistry({ mode: 'basic', username: 'ci', password: TOKEN })
t.teardown(() => Promise.all([bearer.close(), basic.close()]))

const bodies: string[] = []
type Method = 'GET' | 'POST' | 'PUT' | 'DELETE'
async function call(who: TestUser, method: Method, url: string, payload?: object) {
  const res = await app.inject({ method, url, headers: who.headers, ...(payload && { payload }) })
  bodies.push(res.body)
  return { status: res.statusCode, body: res.body ? res.json() : null }
}
const A = '/v1/api/admin/registries'
const U = '/v1/api/registries'

let local: { id: string }
let basicReg: { id: string }

t.test('an admin creates a registry, tested at once; the reply shows the login and the outcome but not the password', async (t) => {
  const res = await call(admin, 'POST', A, { name: 'Local', registry_type: 'custom', url: `${bearer.url}/`, username: 'robot', password: PASSWORD })
  t.equal(res.status, 201)
  t.match(res.body, {
    id: /^[0-9a-f]{24}$/, name: 'Local', registry_type: 'custom', url: bearer.url, host: `127.0.0.1:${bearer.port}`, username: 'robot',
    has_credentials: true, status: 'connected', status_message: 'connected as robot (token)', is_default: true, last_checked_at: String, created_at: String, updated_at: String,
  })
  t.ok(bearer.requests.some((r) => r.path === '/v2/' && r.authorization?.startsWith('Bearer ')), 'the add did the handshake with the login')
  const read = (await call(user, 'GET', `${U}/${res.body.id}`)).body
  t.match(read, { status: 'connected', status_message: 'connected as robot (token)', last_checked_at: res.body.last_checked_at }, 'stored as answered')
  t.match((await call(user, 'GET', U)).body.registries, [{ id: res.body.id, status: 'connected' }], 'the list shows it too')
  t.notOk('password' in res.body || 'token' in res.body || 'credentials_sealed' in res.body)
  local = res.body
  const stored = await app.db.collection('registries').findOne({ _id: local.id as never })
  t.match(stored?.credentials_sealed, /^sealed:v1:/, 'stored sealed')
  t.notOk(JSON.stringify(stored).includes(PASSWORD), 'not stored in the clear')

  const other = await call(admin, 'POST', A, { name: 'Basic only', registry_type: 'harbor', url: basic.url, username: 'ci', token: TOKEN })
  t.equal(other.status, 201)
  t.equal(other.body.is_default, false, 'the first registry stays the default')
  t.match(other.body, { status: 'connected', status_message: 'connected as ci (basic auth)' })
  basicReg = other.body

  // A registry that refuses the login, or cannot be reached, is still added: with the reason.
  const refused = await call(admin, 'POST', A, { name: 'Wrong login', registry_type: 'custom', url: basic.url, username: 'ci', password: 'not-it' })
  t.match(refused, { status: 201, body: { status: 'error', status_message: 'registry refused the credentials (401)', last_checked_at: String } })
  t.equal((await call(admin, 'DELETE', `${A}/${refused.body.id}`)).status, 204)
})

t.test('input is checked', async (t) => {
  const cases: Array<[object, number, RegExp]> = [
    [{ name: 'x', registry_type: 'custom' }, 400, /url is required for custom registries/],
    [{ name: 'x', registry_type: 'ecr' }, 400, /url is required for ecr registries/],
    [{ name: 'x', registry_type: 'nexus', url: bearer.url }, 400, /registry_type/],
    [{ name: 'x', registry_type: 'custom', url: bearer.url, password: 'p' }, 400, /needs a username/],
    [{ name: 'x', registry_type: 'custom', url: bearer.url, username: 'u', password: 'p', token: 't' }, 400, /either password or token/],
    [{ name: '   ', registry_type: 'custom', url: bearer.url }, 400, /name/],
    [{ name: 'x', registry_type: 'custom', url: 'http://169.254.169.254' }, 400, /url address 169\.254\.169\.254 is not allowed/],
    [{ name: 'x', registry_type: 'custom', url: 'http://[fe80::1]:5000' }, 400, /not allowed/],
    [{ name: 'x', registry_type: 'custom', url: 'ftp://127.0.0.1' }, 400, /url must use https or http/],
    [{ name: 'x', registry_type: 'custom', url: 'http://u:p@127.0.0.1' }, 400, /credentials in the URL/],
    [{ name: 'x', registry_type: 'custom', url: `${bearer.url}/?x=1` }, 400, /query/],
    [{ name: 'x', registry_type: 'custom', url: bearer.url, extra: 1 }, 400, /additional/],
    [{ name: 'LOCAL', registry_type: 'custom', url: bearer.url }, 409, /a registry named "LOCAL" exists/],
  ]
  for (const [payload, status, error] of cases) {
    const res = await call(admin, 'POST', A, payload)
    t.equal(res.status, status, JSON.stringify(payload))
    t.match(res.body, { error }, JSON.stringify(payload))
  }
  const rename = await call(admin, 'PUT', `${A}/${basicReg.id}`, { name: 'local' })
  t.equal(rename.status, 409, 'renaming onto another name is a conflict too')
  t.equal((await call(admin, 'PUT', `${A}/${basicReg.id}`, {})).status, 400, 'an empty update is refused')
  t.equal((await call(admin, 'PUT', `${A}/${basicReg.id}`, { registry_type: 'acr' })).status, 400, 'a type without a default url needs one')
})

t.test('every signed-in user reads registries; lookup is not taken for an id', async (t) => {
  for (const who of [admin, user]) {
    const list = await call(who, 'GET', `${U}?sort=name&order=asc`)
    t.equal(list.status, 200)
    t.match(list.body, { total: 2, page: 1, limit: 20 })
    t.same(list.body.registries.map((r: { name: string }) => r.name), ['Basic only', 'Local'])
    const one = await call(who, 'GET', `${U}/${local.id}`)
    t.match(one, { status: 200, body: { id: local.id, name: 'Local' } })
  }
  t.match(await call(user, 'GET', `${U}?search=${encodeURIComponent(`127.0.0.1:${basic.port}`)}`), { status: 200, body: { total: 1, registries: [{ name: 'Basic only' }] } })
  t.match(await call(user, 'GET', `${U}?search=.*`), { status: 200, body: { total: 0 } }, 'search is literal')
  t.match(await call(user, 'GET', `${U}?registry_type=harbor`), { body: { total: 1 } })
  t.equal((await call(user, 'GET', `${U}?sort=password`)).status, 400)
  t.match(await call(user, 'GET', `${U}/0123456789abcdef01234567`), { status: 404, body: { error: 'registry not found' } })
  t.match(await call(user, 'GET', `${U}/not-an-id`), { status: 404, body: { error: 'registry not found' } })
  const lookup = await call(user, 'GET', `${U}/lookup?image=${encodeURIComponent(`127.0.0.1:${bearer.port}/team/app:1`)}`)
  t.match(lookup, { status: 200, body: { id: local.id } }, '/lookup reaches the lookup route')
  t.equal((await call(user, 'GET', `${U}/lookup`)).status, 400, 'image is required')
})

t.test('a plain user gets 403 on every admin route and changes nothing', async (t) => {
  const before = JSON.stringify((await call(admin, 'GET', U)).body)
  const contacted = bearer.requests.length
  const attempts: Array<[Method, string, object?]> = [
    ['POST', A, { name: 'mine', registry_type: 'custom', url: bearer.url }],
    ['PUT', `${A}/${local.id}`, { name: 'renamed' }],
    ['DELETE', `${A}/${local.id}`],
    ['POST', `${A}/${local.id}/test`],
    ['PUT', `${A}/${basicReg.id}/default`],
  ]
  for (const [method, url, payload] of attempts) {
    t.match(await call(user, method, url, payload), { status: 403, body: { error: 'admin role required' } }, `${method} ${url}`)
  }
  t.equal(JSON.stringify((await call(admin, 'GET', U)).body), before)
  t.equal(bearer.requests.length, contacted, 'the registry was not contacted')
})

t.test('the connection test: bearer challenge, refused credentials, basic-only registry', async (t) => {
  const ok = await call(admin, 'POST', `${A}/${local.id}/test`)
  t.same(ok, { status: 200, body: { status: 'connected', message: 'connected as robot (token)' } })
  const after = (await call(user, 'GET', `${U}/${local.id}`)).body
  t.match(after, { status: 'connected', status_message: 'connected as robot (token)', last_checked_at: String })
  t.ok(Date.now() - Date.parse(after.last_checked_at) < 60_000)

  const wrong = await call(admin, 'PUT', `${A}/${local.id}`, { password: 'not-the-password' })
  t.match(wrong, { status: 200, body: { status: 'error', status_message: 'registry refused the credentials (401)', has_credentials: true, username: 'robot', last_checked_at: String } }, 'new credentials are tested at once')
  const refused = await call(admin, 'POST', `${A}/${local.id}/test`)
  t.equal(refused.status, 200, 'a failing registry is a result, not a failed request')
  t.equal(refused.body.status, 'error')
  t.match(refused.body.message, /refused/)
  t.match((await call(admin, 'GET', `${U}/${local.id}`)).body, { status: 'error', status_message: 'registry refused the credentials (401)' })

  t.equal((await call(admin, 'PUT', `${A}/${local.id}`, { password: PASSWORD })).status, 200)
  t.equal((await call(admin, 'POST', `${A}/${local.id}/test`)).body.status, 'connected', 'the right password again')

  t.same((await call(admin, 'POST', `${A}/${basicReg.id}/test`)).body, { status: 'connected', message: 'connected as ci (basic auth)' })
  t.equal((await call(admin, 'POST', `${A}/0123456789abcdef01234567/test`)).status, 404)
})

t.test('credentials are replaced only when given', async (t) => {
  const renamed = await call(admin, 'PUT', `${A}/${local.id}`, { name: 'Local registry' })
  t.match(renamed.body, { name: 'Local registry', has_credentials: true, status: 'connected' }, 'a rename keeps the login and the status')
  t.equal((await call(admin, 'POST', `${A}/${local.id}/test`)).body.status, 'connected')
  const relogin = await call(admin, 'PUT', `${A}/${local.id}`, { username: 'someone-else' })
  t.match(relogin.body, { username: 'someone-else', has_credentials: true, status: 'error' }, 'tested with the new user name')
  t.match((await call(admin, 'POST', `${A}/${local.id}/test`)).body, { status: 'error', message: 'registry refused the credentials (401)' }, 'the stored secret, the new user name')
  t.equal((await call(admin, 'PUT', `${A}/${local.id}`, { username: 'robot' })).status, 200)
  t.equal((await call(admin, 'POST', `${A}/${local.id}/test`)).body.status, 'connected', 'the stored secret survived both renames')
  t.equal((await call(admin, 'PUT', `${A}/${local.id}`, { clear_credentials: true, password: 'x' })).status, 400)
  const cleared = await call(admin, 'PUT', `${A}/${local.id}`, { clear_credentials: true })
  t.match(cleared.body, { has_credentials: false, username: null })
  t.match((await call(admin, 'POST', `${A}/${local.id}/test`)).body, { status: 'error', message: /refused anonymous access/ })
  t.equal((await call(admin, 'PUT', `${A}/${local.id}`, { password: PASSWORD })).status, 400, 'a password without any username')
  t.equal((await call(admin, 'PUT', `${A}/${local.id}`, { username: 'robot', password: PASSWORD })).body.has_credentials, true)
  t.equal((await call(admin, 'PUT', `${A}/${local.id}`, { url: 'http://169.254.169.254:5000' })).status, 400, 'a new url passes the policy')
  t.equal((await call(admin, 'PUT', `${A}/0123456789abcdef01234567`, { name: 'x' })).status, 404)
})

t.test('exactly one default, whatever happens', async (t) => {
  const defaults = async () => (await call(user, 'GET', U)).body.registries.filter((r: { is_default: boolean }) => r.is_default).map((r: { id: string }) => r.id)
  t.same(await defaults(), [local.id])
  const third = (await call(admin, 'POST', A, { name: 'Third', registry_type: 'custom', url: basic.url, is_default: true })).body
  t.equal(third.is_default, true, 'created as the default')
  t.same(await defaults(), [third.id])
  const set = await call(admin, 'PUT', `${A}/${basicReg.id}/default`)
  t.match(set, { status: 200, body: { id: basicReg.id, is_default: true } })
  t.same(await defaults(), [basicReg.id])
  await Promise.all([local.id, third.id, basicReg.id, local.id].map((id) => call(admin, 'PUT', `${A}/${id}/default`)))
  t.equal((await defaults()).length, 1, 'racing switches leave one default')
  t.equal((await call(admin, 'PUT', `${A}/0123456789abcdef01234567/default`)).status, 404)

  await call(admin, 'PUT', `${A}/${third.id}/default`)
  t.equal((await call(admin, 'DELETE', `${A}/${third.id}`)).status, 204)
  t.same(await defaults(), [local.id], 'deleting the default makes the oldest remaining one the default')
  t.equal((await call(user, 'GET', `${U}/${third.id}`)).status, 404)
  t.equal((await call(admin, 'DELETE', `${A}/${third.id}`)).status, 404, 'deleting twice')
})

t.test('registries show up in global search for every user', async (t) => {
  const res = await call(user, 'GET', '/v1/api/search?q=basic')
  t.equal(res.status, 200)
  t.same(res.body.registries, [{ id: basicReg.id, name: 'Basic only' }])
  t.same((await call(user, 'GET', `/v1/api/search?q=${bearer.port}`)).body.registries, [{ id: local.id, name: 'Local registry' }], 'by url')
})

t.test('no reply and no log line carries a password, token or issued token', async (t) => {
  t.ok(bodies.length > 50, `${bodies.length} replies collected`)
  const everything = bodies.join('\n')
  const logText = logs.join('')
  t.ok(logText.length > 0, 'something was logged')
  for (const secret of [PASSWORD, TOKEN, bearer.token, Buffer.from(`robot:${PASSWORD}`).toString('base64')]) {
    t.notOk(everything.includes(secret), 'not in any reply')
    t.notOk(logText.includes(secret), 'not in the log')
  }
})
