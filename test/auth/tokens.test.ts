// Tokens: what is accepted (HS256 with our key, issuer and audience, unexpired, for a user that still
// exists), what refresh accepts (an expired but genuine token within 7 days of sign-in, keeping auth_time),
// and that the stored user — not the token — decides existence and role.
import t from 'tap'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'
import { claimsFor, DAY, HOUR, hmacToken, now, rsaToken, unsignedToken } from './craft.ts'

const SECRET = 'test-secret-'.padEnd(48, 'x')
const { app, logs } = await startTestApp(t, { JWT_SECRET: SECRET })
const admin = await registerUser(app)
const alice = await registerUser(app)
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
const profile = (token: string) => app.inject({ url: '/v1/api/profile', headers: bearer(token) })
const refresh = (token: string) => app.inject({ method: 'POST', url: '/v1/api/auth/refresh', headers: bearer(token) })
const decode = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString())

t.test('an issued token carries sub, role, email, iat, exp = iat + 24 h, auth_time, iss and aud', async (t) => {
  const header = JSON.parse(Buffer.from(alice.token.split('.')[0], 'base64url').toString())
  t.equal(header.alg, 'HS256')
  const c = decode(alice.token)
  t.match(c, { sub: alice.user.id, role: 'user', email: alice.email, iss: 'cluster-workflow-orchestrator', aud: 'cluster-workflow-orchestrator-api' })
  t.equal(c.exp - c.iat, 24 * HOUR)
  t.equal(c.auth_time, c.iat)
  t.equal((await profile(alice.token)).statusCode, 200)
  t.equal((await profile(hmacToken(claimsFor(alice.user), SECRET))).statusCode, 200, 'a token built like ours is accepted (so the refusals below are about the one change)')
})

t.test('forged and unacceptable tokens answer 401 {error}', async (t) => {
  const claims = claimsFor(alice.user)
  const cases: Record<string, string> = {
    'alg none': unsignedToken(claims),
    'alg none with a signature': unsignedToken(claims) + 'abc',
    'wrong key': hmacToken(claims, 'another-secret-'.padEnd(48, 'y')),
    'HS512 with our key': hmacToken(claims, SECRET, 'HS512'),
    'HS384 with our key': hmacToken(claims, SECRET, 'HS384'),
    'RS256': rsaToken(claims),
    'wrong audience': hmacToken({ ...claims, aud: 'someone-else' }, SECRET),
    'wrong issuer': hmacToken({ ...claims, iss: 'https://evil.example' }, SECRET),
    'no issuer': hmacToken({ ...claims, iss: undefined }, SECRET),
    'expired': hmacToken({ ...claims, iat: now() - 2 * DAY, exp: now() - DAY, auth_time: now() - 2 * DAY }, SECRET),
    'no auth_time': hmacToken({ ...claims, auth_time: undefined }, SECRET),
    'subject is not a user id': hmacToken({ ...claims, sub: 'admin' }, SECRET),
    'unknown user': hmacToken({ ...claims, sub: '0123456789abcdef01234567' }, SECRET),
    'tampered payload': alice.token.split('.')[0] + '.' + Buffer.from(JSON.stringify({ ...decode(alice.token), role: 'admin' })).toString('base64url') + '.' + alice.token.split('.')[2],
    'garbage': 'not.a.jwt',
  }
  for (const [name, token] of Object.entries(cases)) {
    const res = await profile(token)
    t.equal(res.statusCode, 401, name)
    t.same(Object.keys(res.json()), ['error'], `${name}: body is {error}`)
  }
  t.equal((await profile(cases.expired)).json().error, 'token expired', 'an expired token says so, so the client knows to refresh')
})

t.test('a token issued in the future is refused (beyond 60 s of clock skew), for requests and for refresh', async (t) => {
  const at = (iat: number) => hmacToken(claimsFor(alice.user, { iat, auth_time: iat, exp: iat + DAY }), SECRET)
  for (const ahead of [61, 120, HOUR, 365 * DAY]) {
    const res = await profile(at(now() + ahead))
    t.equal(res.statusCode, 401, `iat ${ahead} s ahead`)
    t.same(res.json(), { error: 'invalid token' })
    t.equal((await refresh(at(now() + ahead))).statusCode, 401, `refresh, iat ${ahead} s ahead`)
  }
  // A token from a replica whose clock runs a little fast still works.
  t.equal((await profile(at(now() + 30))).statusCode, 200, 'iat 30 s ahead: within the skew')
  t.equal((await profile(at(now()))).statusCode, 200)
})

t.test('the Authorization header must be "Bearer <token>"; the token query parameter is not accepted here', async (t) => {
  for (const authorization of [`Basic ${alice.token}`, alice.token, 'Bearer', `Bearer ${alice.token} extra`]) {
    const res = await app.inject({ url: '/v1/api/profile', headers: { authorization } })
    t.equal(res.statusCode, 401, authorization.slice(0, 12))
  }
  t.equal((await app.inject({ url: `/v1/api/profile?token=${alice.token}` })).statusCode, 401)
  t.equal((await app.inject({ url: '/v1/api/profile', headers: { authorization: `bearer ${alice.token}` } })).statusCode, 200, 'the scheme is case-insensitive')
})

t.test('refresh accepts an expired token while the sign-in is at most 7 days old, and keeps auth_time', async (t) => {
  const signedIn = now() - 6 * DAY
  const old = hmacToken(claimsFor(alice.user, { auth_time: signedIn, iat: now() - 2 * DAY, exp: now() - DAY }), SECRET)
  t.equal((await profile(old)).statusCode, 401, 'the expired token itself no longer works')
  const res = await refresh(old)
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.match(body.user, { id: alice.user.id, email: alice.email, role: 'user' })
  const c = decode(body.token)
  t.equal(c.auth_time, signedIn, 'auth_time is kept: refreshing does not extend the window')
  t.ok(c.exp > now() + 23 * HOUR, 'a new 24-hour lifetime')
  t.equal((await profile(body.token)).statusCode, 200)
  t.equal(res.headers['cache-control'], 'no-store')

  const chained = await refresh(body.token)
  t.equal(decode(chained.json().token).auth_time, signedIn, 'still the same sign-in after another refresh')
})

t.test('refresh is refused once the sign-in is more than 7 days old, even for an unexpired token', async (t) => {
  const expired = hmacToken(claimsFor(alice.user, { auth_time: now() - 7 * DAY - 60, iat: now() - 2 * DAY, exp: now() - DAY }), SECRET)
  let res = await refresh(expired)
  t.equal(res.statusCode, 401)
  t.match(res.json().error, /7 days/)
  const fresh = hmacToken(claimsFor(alice.user, { auth_time: now() - 8 * DAY, iat: now() - HOUR, exp: now() + HOUR }), SECRET)
  res = await refresh(fresh)
  t.equal(res.statusCode, 401, 'a token re-signed late cannot carry an old sign-in forward')
  const justInside = hmacToken(claimsFor(alice.user, { auth_time: now() - 7 * DAY + 120, iat: now() - 3 * DAY, exp: now() - 2 * DAY }), SECRET)
  t.equal((await refresh(justInside)).statusCode, 200, 'just inside the window')
})

t.test('refresh verifies everything but expiry', async (t) => {
  const base = claimsFor(alice.user, { iat: now() - 2 * DAY, exp: now() - DAY, auth_time: now() - 2 * DAY })
  const cases: Record<string, string> = {
    'no token': '',
    'alg none': unsignedToken(base),
    'wrong key': hmacToken(base, 'another-secret-'.padEnd(48, 'y')),
    'HS512': hmacToken(base, SECRET, 'HS512'),
    'wrong audience': hmacToken({ ...base, aud: 'x' }, SECRET),
    'wrong issuer': hmacToken({ ...base, iss: 'x' }, SECRET),
    'auth_time in the future': hmacToken({ ...base, auth_time: now() + DAY }, SECRET),
    'auth_time after iat': hmacToken({ ...base, auth_time: base.iat + 10 }, SECRET),
    'unknown user': hmacToken({ ...base, sub: '0123456789abcdef01234567' }, SECRET),
  }
  for (const [name, token] of Object.entries(cases)) {
    const res = await app.inject({ method: 'POST', url: '/v1/api/auth/refresh', headers: token ? bearer(token) : {} })
    t.equal(res.statusCode, 401, name)
  }
})

t.test('a deleted user\'s token stops working, and it cannot be refreshed', async (t) => {
  const bob = await registerUser(app)
  t.equal((await profile(bob.token)).statusCode, 200)
  await app.users.delete(bob.user.id)
  t.equal((await profile(bob.token)).statusCode, 401)
  t.equal((await refresh(bob.token)).statusCode, 401)
})

t.test('the stored role decides: a demoted admin gets 403, a promoted user gets in', async (t) => {
  const carol = await registerUser(app, { role: 'admin' })
  const settings = () => app.inject({ url: '/v1/api/settings/regenerate-setting', headers: bearer(carol.token) })
  t.equal((await settings()).statusCode, 200)
  await app.users.setRole(carol.user.id, 'user')
  const res = await settings()
  t.equal(res.statusCode, 403, 'the old token still says admin, the database does not')
  t.same(res.json(), { error: 'admin role required' })
  const refreshed = await refresh(carol.token)
  t.equal(decode(refreshed.json().token).role, 'user', 'refresh issues the current role')
  await app.users.setRole(carol.user.id, 'admin')
  t.equal((await settings()).statusCode, 200)
})

t.test('a role or existence change made directly in the database applies within the cache time', async (t) => {
  const dave = await registerUser(app, { role: 'admin' })
  const settings = () => app.inject({ url: '/v1/api/settings/regenerate-setting', headers: bearer(dave.token) })
  t.equal((await settings()).statusCode, 200)
  await app.db.collection('users').updateOne({ email: dave.email }, { $set: { role: 'user' } })
  const deadline = Date.now() + app.config.AUTH_USER_CACHE_MS + 1000
  let status = 200
  while (status === 200 && Date.now() < deadline) {
    status = (await settings()).statusCode
    if (status === 200) await new Promise((r) => setTimeout(r, 100))
  }
  t.equal(status, 403, `demotion seen within AUTH_USER_CACHE_MS (${app.config.AUTH_USER_CACHE_MS} ms)`)
})

t.test('tokens never reach the log', async (t) => {
  await app.inject({ url: `/v1/api/profile?token=${alice.token}`, headers: bearer(alice.token) })
  const text = logs.join('')
  t.notOk(text.includes(alice.token.split('.')[2]), 'no token signature in any log line')
  t.notOk(text.includes(alice.password), 'no password in any log line')
})

void admin
