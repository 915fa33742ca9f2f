// The first-admin race, invite codes after the first user, and the four admin-only settings endpoints.
import t from 'tap'
import { startTestApp } from '../helpers/app.ts'

const { app, logs } = await startTestApp(t)
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
const register = (email: string, invite_code?: string) =>
  app.inject({ method: 'POST', url: '/v1/api/auth/register', payload: { email, password: 'password-123', name: email.split('@')[0], ...(invite_code !== undefined && { invite_code }) } })

let adminToken = ''
const asAdmin = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => app.inject({ method, url: `/v1/api/settings/${url}`, headers: bearer(adminToken), ...(payload && { payload }) })

t.test('concurrent first registrations yield exactly one admin; the others need an invite code', async (t) => {
  const results = await Promise.all(Array.from({ length: 8 }, (_, i) => register(`racer${i}@example.com`)))
  const created = results.filter((r) => r.statusCode === 201)
  t.equal(created.length, 1, 'one registration wins the first-user slot')
  t.equal(created[0].json().user.role, 'admin')
  for (const r of results.filter((r) => r.statusCode !== 201)) {
    t.equal(r.statusCode, 403)
    t.same(r.json(), { error: 'an invite code is required to sign up' })
  }
  t.equal(await app.db.collection('users').countDocuments({}), 1, 'the losers left no account behind')
  t.equal(await app.db.collection('users').countDocuments({ role: 'admin' }), 1)
  adminToken = created[0].json().token
})

t.test('after the first user, register needs a valid invite code (403 otherwise)', async (t) => {
  let res = await register('nocode@example.com')
  t.equal(res.statusCode, 403)
  t.same(res.json(), { error: 'an invite code is required to sign up' })
  res = await register('wrong@example.com', 'WRONG-CODE-12345')
  t.equal(res.statusCode, 403)
  t.same(res.json(), { error: 'invalid invite code' })
  const { invite_code } = (await asAdmin('GET', 'invite-code')).json()
  res = await register('wrongcase@example.com', invite_code.toLowerCase())
  t.equal(res.statusCode, 403, 'codes are compared exactly')
  res = await register('invited@example.com', invite_code)
  t.equal(res.statusCode, 201)
  t.equal(res.json().user.role, 'user')
  t.equal((await register('invited2@example.com', ` ${invite_code} `)).statusCode, 201, 'without rotation the code stays valid (surrounding spaces ignored)')
})

t.test('the invite code is random, at least 10 characters, and generating a new one retires the old', async (t) => {
  const first = await asAdmin('GET', 'invite-code')
  t.equal(first.statusCode, 200)
  t.match(first.json(), { invite_code: String, created_at: String })
  t.ok(first.json().invite_code.length >= 10)
  t.equal(first.headers['cache-control'], 'no-store')
  t.equal((await asAdmin('GET', 'invite-code')).json().invite_code, first.json().invite_code, 'stable until regenerated')

  const generated = await asAdmin('POST', 'generate-invite-code')
  t.equal(generated.statusCode, 201)
  t.not(generated.json().invite_code, first.json().invite_code)
  t.ok(generated.json().invite_code.length >= 10)
  t.equal((await asAdmin('GET', 'invite-code')).json().invite_code, generated.json().invite_code)

  t.equal((await register('old@example.com', first.json().invite_code)).statusCode, 403, 'the old code no longer works')
  t.equal((await register('new@example.com', generated.json().invite_code)).statusCode, 201)

  const many = new Set<string>()
  for (let i = 0; i < 20; i++) many.add((await asAdmin('POST', 'generate-invite-code')).json().invite_code)
  t.equal(many.size, 20, 'no repeats')
})

t.test('with regenerate_after_signup on, each signup rotates the code: a code admits one person', async (t) => {
  t.same((await asAdmin('GET', 'regenerate-setting')).json(), { regenerate_after_signup: false }, 'off by default')
  let res = await asAdmin('PUT', 'regenerate-setting', { regenerate_after_signup: true })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { regenerate_after_signup: true })
  t.same((await asAdmin('GET', 'regenerate-setting')).json(), { regenerate_after_signup: true })
  t.equal((await asAdmin('PUT', 'regenerate-setting', { regenerate_after_signup: 'yes' })).statusCode, 400)
  t.equal((await asAdmin('PUT', 'regenerate-setting', {})).statusCode, 400)

  const code = (await asAdmin('GET', 'invite-code')).json().invite_code
  t.equal((await register('rot1@example.com', code)).statusCode, 201)
  const next = (await asAdmin('GET', 'invite-code')).json().invite_code
  t.not(next, code, 'rotated after the signup')
  t.equal((await register('rot2@example.com', code)).statusCode, 403, 'the used code is spent')

  const racers = await Promise.all(Array.from({ length: 5 }, (_, i) => register(`rotrace${i}@example.com`, next)))
  t.equal(racers.filter((r) => r.statusCode === 201).length, 1, 'five racing signups with one code: exactly one gets in')
  t.equal(await app.db.collection('users').countDocuments({ email: /^rotrace/ }), 1, 'the others left nothing behind')

  const failed = await register('rot3@example.com', 'nope-nope-nope')
  t.equal(failed.statusCode, 403)
  t.equal((await asAdmin('PUT', 'regenerate-setting', { regenerate_after_signup: false })).statusCode, 200)
  const stable = (await asAdmin('GET', 'invite-code')).json().invite_code
  t.equal((await register('stable1@example.com', stable)).statusCode, 201)
  t.equal((await asAdmin('GET', 'invite-code')).json().invite_code, stable, 'off again: no rotation')
})

t.test('all four settings endpoints are admin only', async (t) => {
  const user = await register('plain@example.com', (await asAdmin('GET', 'invite-code')).json().invite_code)
  const token = user.json().token
  const calls: Array<['GET' | 'POST' | 'PUT', string, object?]> = [
    ['GET', 'invite-code'], ['POST', 'generate-invite-code'], ['GET', 'regenerate-setting'], ['PUT', 'regenerate-setting', { regenerate_after_signup: true }],
  ]
  for (const [method, url, payload] of calls) {
    const res = await app.inject({ method, url: `/v1/api/settings/${url}`, headers: bearer(token), ...(payload && { payload }) })
    t.equal(res.statusCode, 403, `${method} ${url} as a user`)
    t.same(res.json(), { error: 'admin role required' })
    t.equal((await app.inject({ method, url: `/v1/api/settings/${url}`, ...(payload && { payload }) })).statusCode, 401, `${method} ${url} without a token`)
  }
  t.same((await asAdmin('GET', 'regenerate-setting')).json(), { regenerate_after_signup: false }, 'nothing changed')
})

t.test('invite codes never reach the log', async (t) => {
  const code = (await asAdmin('GET', 'invite-code')).json().invite_code
  await register('logged@example.com', code)
  t.notOk(logs.join('').includes(code))
})
