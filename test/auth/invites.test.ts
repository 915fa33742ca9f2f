// The first-admin race, invite codes after the first user (shown once when generated, stored as a hash,
// compared in constant time; a plain-text code from an older version still admits and is migrated), and
// the four admin-only settings endpoints.
import t from 'tap'
import { createHash } from 'node:crypto'
import { startTestApp } from '../helpers/app.ts'

// Many signups from one address in this file: the sign-in rate limit (tested in rate-limit.test.ts) is raised.
const { app, logs } = await startTestApp(t, { AUTH_RATE_LIMIT_PER_IP: 1000 })
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

const generate = async () => (await asAdmin('POST', 'generate-invite-code')).json() as { invite_code: string; hint: string; created_at: string }
const status = async () => (await asAdmin('GET', 'invite-code')).json() as { invite_code: null; hint: string | null; created_at: string | null }
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')
const storedCode = () => app.db.collection('settings').findOne({ _id: 'invite_code' as never })

t.test('until an admin generates one there is no code: nothing admits', async (t) => {
  t.same(await status(), { invite_code: null, hint: null, created_at: null })
  const res = await register('early@example.com', 'ANY-CODE-AT-ALL')
  t.equal(res.statusCode, 403)
  t.same(res.json(), { error: 'invalid invite code' })
})

t.test('after the first user, register needs a valid invite code (403 otherwise)', async (t) => {
  let res = await register('nocode@example.com')
  t.equal(res.statusCode, 403)
  t.same(res.json(), { error: 'an invite code is required to sign up' })
  res = await register('wrong@example.com', 'WRONG-CODE-12345')
  t.equal(res.statusCode, 403)
  t.same(res.json(), { error: 'invalid invite code' })
  const { invite_code } = await generate()
  res = await register('wrongcase@example.com', invite_code.toLowerCase())
  t.equal(res.statusCode, 403, 'codes are compared exactly')
  res = await register('invited@example.com', invite_code)
  t.equal(res.statusCode, 201)
  t.equal(res.json().user.role, 'user')
  t.equal((await register('invited2@example.com', ` ${invite_code} `)).statusCode, 201, 'without rotation the code stays valid (surrounding spaces ignored)')
})

t.test('a generated code is shown once: GET tells only its last characters and date; generating retires the old', async (t) => {
  const res = await asAdmin('POST', 'generate-invite-code')
  t.equal(res.statusCode, 201)
  t.equal(res.headers['cache-control'], 'no-store')
  const first = res.json()
  t.match(first, { invite_code: String, hint: String, created_at: String })
  t.ok(first.invite_code.length >= 10)
  t.equal(first.hint, first.invite_code.slice(-4))

  const shown = await asAdmin('GET', 'invite-code')
  t.equal(shown.statusCode, 200)
  t.equal(shown.headers['cache-control'], 'no-store')
  t.same(shown.json(), { invite_code: null, hint: first.hint, created_at: first.created_at }, 'never the code itself')
  t.notOk(shown.body.includes(first.invite_code))

  const second = await generate()
  t.not(second.invite_code, first.invite_code)
  t.same(await status(), { invite_code: null, hint: second.hint, created_at: second.created_at })
  t.equal((await register('old@example.com', first.invite_code)).statusCode, 403, 'the old code no longer works')
  t.equal((await register('new@example.com', second.invite_code)).statusCode, 201)

  const many = new Set<string>()
  for (let i = 0; i < 20; i++) many.add((await generate()).invite_code)
  t.equal(many.size, 20, 'no repeats')
})

t.test('the database holds the code\'s SHA-256 and last characters, never the code', async (t) => {
  const { invite_code, hint } = await generate()
  const doc = await storedCode()
  t.match(doc, { code_hash: sha256(invite_code), hint })
  t.notOk('code' in (doc ?? {}), 'no plain-text field')
  t.notOk(JSON.stringify(doc).includes(invite_code), 'the code appears nowhere in the stored document')
  t.equal((await register('hashed@example.com', invite_code)).statusCode, 201, 'and the code admits')
})

t.test('a plain-text code stored by an older version still admits, and is replaced by its hash on first use', async (t) => {
  const legacy = 'LEGACY-CODE-ABCD-1234'
  await app.db.collection('settings').replaceOne({ _id: 'invite_code' as never }, { code: legacy, created_at: new Date('2026-01-01T00:00:00Z') }, { upsert: true })
  t.equal((await register('legacy-wrong@example.com', 'LEGACY-CODE-ABCD-9999')).statusCode, 403)
  const doc = await storedCode()
  t.notOk('code' in (doc ?? {}), 'migrated on the first read')
  t.match(doc, { code_hash: sha256(legacy), hint: '1234' })
  t.equal((await register('legacy@example.com', legacy)).statusCode, 201, 'the old code still admits')
  t.same(await status(), { invite_code: null, hint: '1234', created_at: '2026-01-01T00:00:00.000Z' })
})

t.test('hostile invite codes are refused cleanly (403 or 400, never 5xx)', async (t) => {
  await generate()
  const cases: unknown[] = ['x'.repeat(128), 'x'.repeat(129), '   ', '\u0000\u0000', 'ℌ𝔢𝔩𝔩𝔬-☃-😀', '{"$ne":null}', 12345, null, ['a'], { $ne: null }, '']
  for (const [i, invite_code] of cases.entries()) {
    const res = await app.inject({ method: 'POST', url: '/v1/api/auth/register', payload: { email: `hostile${i}@example.com`, password: 'password-123', name: 'H', invite_code } })
    t.ok([400, 403].includes(res.statusCode), `${JSON.stringify(invite_code).slice(0, 20)}: ${res.statusCode}`)
    t.same(Object.keys(res.json()), ['error'])
  }
  t.equal(await app.db.collection('users').countDocuments({ email: /^hostile/ }), 0, 'nobody got in')
})

t.test('with regenerate_after_signup on, each signup rotates the code: a code admits one person', async (t) => {
  t.same((await asAdmin('GET', 'regenerate-setting')).json(), { regenerate_after_signup: false }, 'off by default')
  let res = await asAdmin('PUT', 'regenerate-setting', { regenerate_after_signup: true })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { regenerate_after_signup: true })
  t.same((await asAdmin('GET', 'regenerate-setting')).json(), { regenerate_after_signup: true })
  t.equal((await asAdmin('PUT', 'regenerate-setting', { regenerate_after_signup: 'yes' })).statusCode, 400)
  t.equal((await asAdmin('PUT', 'regenerate-setting', {})).statusCode, 400)

  const { invite_code: code, hint } = await generate()
  t.equal((await register('rot1@example.com', code)).statusCode, 201)
  const rotated = await status()
  t.not(rotated.hint, hint, 'rotated after the signup (to a code shown to nobody)')
  t.notOk(JSON.stringify(await storedCode()).includes(code))
  t.equal((await register('rot2@example.com', code)).statusCode, 403, 'the used code is spent')

  const { invite_code: next } = await generate()

  const racers = await Promise.all(Array.from({ length: 5 }, (_, i) => register(`rotrace${i}@example.com`, next)))
  t.equal(racers.filter((r) => r.statusCode === 201).length, 1, 'five racing signups with one code: exactly one gets in')
  t.equal(await app.db.collection('users').countDocuments({ email: /^rotrace/ }), 1, 'the others left nothing behind')

  const failed = await register('rot3@example.com', 'nope-nope-nope')
  t.equal(failed.statusCode, 403)
  t.equal((await asAdmin('PUT', 'regenerate-setting', { regenerate_after_signup: false })).statusCode, 200)
  const stable = await generate()
  t.equal((await register('stable1@example.com', stable.invite_code)).statusCode, 201)
  t.equal((await status()).hint, stable.hint, 'off again: no rotation')
  t.equal((await register('stable2@example.com', stable.invite_code)).statusCode, 201, 'and the code still admits')
})

t.test('all four settings endpoints are admin only', async (t) => {
  const user = await register('plain@example.com', (await generate()).invite_code)
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
  const code = (await generate()).invite_code
  await register('logged@example.com', code)
  t.notOk(logs.join('').includes(code))
})
