// Register, login, methods and the profile, through HTTP.
import t from 'tap'
import { startTestApp } from '../helpers/app.ts'

const { app, logs } = await startTestApp(t, { JWT_SECRET: 'accounts-secret-'.padEnd(48, 'x') })
const post = (url: string, payload: object, headers: Record<string, string> = {}) => app.inject({ method: 'POST', url, payload, headers })
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
const USER_KEYS = ['auth_provider', 'avatar_url', 'created_at', 'email', 'id', 'linked_providers', 'name', 'role', 'updated_at']

let admin: { token: string; id: string }

t.test('before anyone registers, signup is open and the first user becomes admin', async (t) => {
  let res = await app.inject({ url: '/v1/api/auth/methods' })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { builtin: { enabled: true, signup_enabled: true, invite_required: false }, providers: [] })

  res = await post('/v1/api/auth/register', { email: '  Ada@Example.COM ', password: 'correct horse', name: ' Ada ' })
  t.equal(res.statusCode, 201)
  const body = res.json()
  t.same(Object.keys(body).sort(), ['email', 'id', 'token', 'user'])
  t.equal(body.email, 'ada@example.com', 'trimmed and lower-cased')
  t.equal(body.id, body.user.id)
  t.same(Object.keys(body.user).sort(), USER_KEYS, 'no password hash or other internals')
  t.match(body.user, { name: 'Ada', email: 'ada@example.com', role: 'admin', avatar_url: null, auth_provider: null, linked_providers: [] })
  t.equal(res.headers['cache-control'], 'no-store')
  admin = { token: body.token, id: body.id }

  res = await app.inject({ url: '/v1/api/auth/methods' })
  t.same(res.json().builtin, { enabled: true, signup_enabled: false, invite_required: true })
})

t.test('a taken email is 409, whatever its case', async (t) => {
  const { invite_code } = (await app.inject({ method: 'POST', url: '/v1/api/settings/generate-invite-code', headers: bearer(admin.token) })).json()
  const res = await post('/v1/api/auth/register', { email: 'ADA@example.com', password: 'another one', name: 'Imposter', invite_code })
  t.equal(res.statusCode, 409)
  t.same(res.json(), { error: 'an account with this email already exists' })
})

t.test('registration input is checked field by field', async (t) => {
  const good = { email: 'bob@example.com', password: 'long enough', name: 'Bob' }
  const cases: Array<[object, RegExp]> = [
    [{ ...good, email: 'not-an-email' }, /email/],
    [{ ...good, password: 'short' }, /password/],
    [{ ...good, password: 'x'.repeat(129) }, /password/],
    [{ ...good, name: '' }, /name/],
    [{ ...good, name: '   ' }, /name/],
    [{ email: good.email, password: good.password }, /name/],
    [{ ...good, role: 'admin' }, /additional property "role"/],
  ]
  for (const [payload, message] of cases) {
    const res = await post('/v1/api/auth/register', payload)
    t.equal(res.statusCode, 400, JSON.stringify(payload).slice(0, 60))
    t.match(res.json().error, message)
  }
  t.equal((await post('/v1/api/auth/register', { ...good, password: 'x'.repeat(128), invite_code: (await app.invites.generate()).invite_code })).statusCode, 201, '128 characters is fine')
})

t.test('login answers {token, user}; a wrong password and an unknown email are the same 401', async (t) => {
  let res = await post('/v1/api/auth/login', { email: 'ADA@example.com ', password: 'correct horse' })
  t.equal(res.statusCode, 200)
  t.same(Object.keys(res.json()).sort(), ['token', 'user'])
  t.match(res.json().user, { id: admin.id, name: 'Ada', email: 'ada@example.com', role: 'admin' })
  t.equal((await app.inject({ url: '/v1/api/profile', headers: bearer(res.json().token) })).statusCode, 200)

  res = await post('/v1/api/auth/login', { email: 'ada@example.com', password: 'wrong horse' })
  t.equal(res.statusCode, 401)
  t.same(res.json(), { error: 'invalid email or password' })
  res = await post('/v1/api/auth/login', { email: 'nobody@example.com', password: 'correct horse' })
  t.equal(res.statusCode, 401)
  t.same(res.json(), { error: 'invalid email or password' })
  res = await post('/v1/api/auth/login', { email: 'ada@example.com' })
  t.equal(res.statusCode, 400)
})

t.test('GET /profile returns the caller; PUT /profile changes name and picture only', async (t) => {
  let res = await app.inject({ url: '/v1/api/profile', headers: bearer(admin.token) })
  t.equal(res.statusCode, 200)
  t.match(res.json(), { id: admin.id, email: 'ada@example.com', role: 'admin' })

  res = await app.inject({ method: 'PUT', url: '/v1/api/profile', headers: bearer(admin.token), payload: { name: 'Ada L.', avatar_url: 'https://img.example/ada.png' } })
  t.equal(res.statusCode, 200)
  t.match(res.json(), { name: 'Ada L.', avatar_url: 'https://img.example/ada.png', email: 'ada@example.com' })
  t.ok(res.json().updated_at > res.json().created_at)

  res = await app.inject({ method: 'PUT', url: '/v1/api/profile', headers: bearer(admin.token), payload: { avatar_url: null } })
  t.equal(res.json().avatar_url, null)
  for (const payload of [{ role: 'user' }, { email: 'x@example.com' }, { avatar_url: 'javascript:alert(1)' }, { name: '' }, {}]) {
    res = await app.inject({ method: 'PUT', url: '/v1/api/profile', headers: bearer(admin.token), payload })
    t.equal(res.statusCode, 400, JSON.stringify(payload))
  }
  t.equal((await app.inject({ url: '/v1/api/profile', headers: bearer(admin.token) })).json().role, 'admin', 'role unchanged')
})

t.test('PUT /profile/password needs the current password; the new one works and the old one stops', async (t) => {
  const change = (payload: object) => app.inject({ method: 'PUT', url: '/v1/api/profile/password', headers: bearer(admin.token), payload })
  let res = await change({ current_password: 'wrong horse', new_password: 'battery staple' })
  t.equal(res.statusCode, 400)
  t.same(res.json(), { error: 'current_password is incorrect' })
  res = await change({ current_password: 'correct horse', new_password: 'short' })
  t.equal(res.statusCode, 400)
  res = await change({ current_password: 'correct horse', new_password: 'battery staple' })
  t.equal(res.statusCode, 204)
  t.equal(res.body, '')
  t.equal((await post('/v1/api/auth/login', { email: 'ada@example.com', password: 'correct horse' })).statusCode, 401)
  t.equal((await post('/v1/api/auth/login', { email: 'ada@example.com', password: 'battery staple' })).statusCode, 200)
  t.equal((await app.inject({ method: 'PUT', url: '/v1/api/profile/password', payload: { current_password: 'a', new_password: 'bbbbbbbbbb' } })).statusCode, 401, 'needs a token')
})

t.test('passwords are stored as argon2id hashes and never logged', async (t) => {
  const doc = await app.db.collection('users').findOne({ email: 'ada@example.com' })
  t.match(doc?.password_hash, /^\$argon2id\$/)
  const text = logs.join('')
  for (const secret of ['correct horse', 'battery staple', 'wrong horse']) t.notOk(text.includes(secret), `"${secret}" is not in the log`)
})
