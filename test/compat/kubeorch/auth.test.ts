// The KubeOrch UI's sign-up, sign-in, session, profile and invite-code calls against the adapter
// (CONTRACT.md §1, §2.1, §2.2, §2.13; OBSERVED.md rows 1, 2, 2b, 2c, 22, 24): each request as the UI sends
// it, each field the UI reads checked with its type, and the refusals with both `error` and `message`.
import t, { type Test } from 'tap'
import { OAuth2Server, type MutableToken } from 'oauth2-mock-server'
import { startTestApp } from '../../helpers/app.ts'

const idp = new OAuth2Server()
await idp.issuer.keys.generate('RS256')
await idp.start(0, '127.0.0.1')
t.teardown(() => idp.stop())

const FRONTEND = 'http://ui.test'
const providers = [{ name: 'corp', type: 'oidc', display_name: 'Corp SSO', issuer: idp.issuer.url!, client_id: 'ui-client', client_secret: 'ui-client-secret' }]
const { app } = await startTestApp(t, {
  OAUTH_PROVIDERS: JSON.stringify(providers), PUBLIC_URL: 'http://api.test', FRONTEND_URL: FRONTEND,
  // The per-email budget is small so the shared-budget test reaches it; per address it is out of the way.
  AUTH_RATE_LIMIT_PER_IP: 1000, AUTH_RATE_LIMIT_PER_EMAIL: 8,
})

const API = '/kubeorch/v1/api'
let person: Record<string, unknown> = {}
idp.service.on('beforeTokenSigning', (token: MutableToken) => {
  if (!('scope' in token.payload)) Object.assign(token.payload, person)
})

type Json = Record<string, unknown>
let ip = 1
/** A request as the UI's axios sends it (JSON, no bearer on /auth/*), each from its own address. */
async function ui(method: 'GET' | 'POST' | 'PUT', path: string, payload?: unknown, token?: string) {
  const res = await app.inject({
    method, url: `${API}${path}`, remoteAddress: `198.51.100.${ip++ % 250}`,
    headers: { ...(token && { authorization: `Bearer ${token}` }) }, ...(payload !== undefined && { payload: payload as Json }),
  })
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each test reads the fields it checks
  return { status: res.statusCode, body: (res.body ? res.json() : undefined) as Record<string, any>, headers: res.headers }
}

/** An error as the UI shows it: both keys, the same text (login and register read `message`). */
function refused(t: Test, res: { status: number; body: Json }, status: number, text?: RegExp) {
  t.equal(res.status, status)
  t.type(res.body.error, 'string')
  t.equal(res.body.message, res.body.error, 'message beside error')
  if (text) t.match(res.body.message, text)
}

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/
/** The session user the UI stores (CONTRACT.md §1 "Token storage"). */
function sessionUser(t: Test, user: Json, expected: Json) {
  t.match(user, expected)
  for (const key of ['id', 'name', 'email', 'role']) t.type(user[key], 'string', key)
  t.ok(['admin', 'user'].includes(user.role as string), 'role is one the UI knows')
  t.ok('avatarUrl' in user, 'avatarUrl is present')
  t.ok(user.avatarUrl === null || typeof user.avatarUrl === 'string', 'avatarUrl is a string or null')
  t.match(user.createdAt, ISO, 'createdAt is a timestamp')
  t.ok('authProvider' in user, 'authProvider is present (it hides the password section when set)')
  t.notOk('password_hash' in user || 'password' in user, 'no secret')
}

const ada = { name: 'Ada Lovelace', email: 'ada@example.com', password: 'analytical-engine-1' }
let adaToken = ''

t.test('GET /auth/methods before anyone exists: builtin form, signupEnabled, providers with displayName and icon', async (t) => {
  const res = await ui('GET', '/auth/methods')
  t.equal(res.status, 200)
  const { builtin, providers: list } = res.body as { builtin: Json; providers: Json[] }
  t.equal(builtin.enabled, true)
  t.equal(builtin.signupEnabled, true)
  t.equal(builtin.signup_enabled, true, 'ours kept: no invite needed yet')
  t.same(list.map((p) => [p.name, p.displayName, p.icon]), [['corp', 'Corp SSO', 'key']])
  t.ok(['github', 'google', 'lock', 'shield', 'globe', 'key'].includes(list[0].icon as string), 'an icon the UI draws')
})

t.test('POST /auth/register with the sign-up form body: 201 exactly, the first user is admin', async (t) => {
  const res = await ui('POST', '/auth/register', { ...ada, confirmPassword: ada.password })
  t.equal(res.status, 201, 'the UI moves on to /login only on 201 (OBSERVED.md row 1)')
  t.equal(res.headers['cache-control'], 'no-store')
  sessionUser(t, res.body.user, { email: ada.email, name: ada.name, role: 'admin', avatarUrl: null, authProvider: null })
})

t.test('GET /auth/methods once a user exists: sign-up stays enabled (with an invite code), so the link shows', async (t) => {
  const { builtin } = (await ui('GET', '/auth/methods')).body as { builtin: Json }
  t.equal(builtin.signupEnabled, true, 'the sign-up page is not "Registration disabled" for an invited person')
  t.equal(builtin.signup_enabled, false, 'ours: no longer open')
  t.equal(builtin.inviteRequired, true)
})

t.test('POST /auth/login: 200 exactly, token and the whole session user', async (t) => {
  const res = await ui('POST', '/auth/login', { email: ada.email, password: ada.password })
  t.equal(res.status, 200)
  t.type(res.body.token, 'string')
  sessionUser(t, res.body.user, { email: ada.email, name: ada.name, role: 'admin', avatarUrl: null })
  adaToken = res.body.token as string
  const stats = await ui('GET', '/dashboard/stats', undefined, adaToken)
  t.equal(stats.status, 200, 'the token opens the dashboard')
})

t.test('a wrong password is 401 with message, which is all the login page shows (OBSERVED.md row 2b)', async (t) => {
  refused(t, await ui('POST', '/auth/login', { email: ada.email, password: 'not-the-password' }), 401, /^invalid email or password$/)
  refused(t, await ui('POST', '/auth/login', { email: 'nobody@example.com', password: 'not-the-password' }), 401, /^invalid email or password$/)
  refused(t, await ui('POST', '/auth/login', { email: ada.email }), 400, /password/)
})

t.test('register refusals: confirmPassword that differs, unknown fields, no invite code; nothing is created', async (t) => {
  const grace = { name: 'Grace', email: 'grace@example.com', password: 'compiler-a0-1952' }
  refused(t, await ui('POST', '/auth/register', { ...grace, confirmPassword: 'compiler-a0-1953' }), 400, /confirmPassword does not match password/)
  refused(t, await ui('POST', '/auth/register', { ...grace, confirmPassword: 42 }), 400, /confirmPassword/)
  refused(t, await ui('POST', '/auth/register', { ...grace, confirmPassword: grace.password, nickname: 'amazing' }), 400, /nickname/)
  refused(t, await ui('POST', '/auth/register', { ...grace, email: 'not an address', confirmPassword: grace.password }), 400, /email/)
  refused(t, await ui('POST', '/auth/register', { ...grace, confirmPassword: grace.password }), 403, /invite code is required/)
  refused(t, await ui('POST', '/auth/register', { ...grace, confirmPassword: grace.password, inviteCode: 'guessed-code-123' }), 403, /invalid invite code/)
  t.equal(await app.db.collection('users').countDocuments({ email: grace.email }), 0, 'no account was made')
})

t.test('POST /auth/refresh: body {} and the old token as bearer give a new token and user', async (t) => {
  const res = await ui('POST', '/auth/refresh', {}, adaToken)
  t.equal(res.status, 200)
  t.type(res.body.token, 'string')
  sessionUser(t, res.body.user, { email: ada.email, role: 'admin' })
  t.equal((await ui('GET', '/dashboard/stats', undefined, res.body.token as string)).status, 200, 'the new token works')
  refused(t, await ui('POST', '/auth/refresh', {}), 401)
  refused(t, await ui('POST', '/auth/refresh', {}, 'not.a.token'), 401)
})

t.test('login attempts on /v1/api and on the adapter draw from one per-email budget', async (t) => {
  const email = 'budget@example.com'
  const canonical = () => app.inject({ method: 'POST', url: '/v1/api/auth/login', payload: { email, password: 'wrong-password' }, remoteAddress: `203.0.113.${ip++ % 250}` })
  for (let i = 0; i < 4; i++) t.equal((await canonical()).statusCode, 401, `attempt ${i + 1}, on /v1/api`)
  for (let i = 4; i < 8; i++) t.equal((await ui('POST', '/auth/login', { email, password: 'wrong-password' })).status, 401, `attempt ${i + 1}, on the adapter`)
  refused(t, await ui('POST', '/auth/login', { email, password: 'wrong-password' }), 429, /too many requests/)
  t.equal((await canonical()).statusCode, 429, 'and /v1/api is spent too')
})

t.test('PUT /profile {name}: the reply carries `user`, the whole session user with its role kept', async (t) => {
  const res = await ui('PUT', '/profile', { name: 'Ada King' }, adaToken)
  t.equal(res.status, 200)
  sessionUser(t, res.body.user, { name: 'Ada King', email: ada.email, role: 'admin', avatarUrl: null })
  t.equal(res.body.name, 'Ada King', 'the bare fields stay')
  const login = await ui('POST', '/auth/login', { email: ada.email, password: ada.password })
  t.equal(login.body.user.name, 'Ada King', 'stored')
  refused(t, await ui('PUT', '/profile', { name: '' }, adaToken), 400, /name/)
  refused(t, await ui('PUT', '/profile', {}, adaToken), 400)
  refused(t, await ui('PUT', '/profile', { name: 'X', role: 'admin' }, adaToken), 400, /role/)
  refused(t, await ui('PUT', '/profile', { name: 'X' }), 401)
})

t.test('PUT /profile/password {currentPassword, newPassword}: 2xx, then only the new one signs in', async (t) => {
  refused(t, await ui('PUT', '/profile/password', { currentPassword: 'wrong-one-123', newPassword: 'difference-engine-2' }, adaToken), 400, /incorrect/)
  refused(t, await ui('PUT', '/profile/password', { currentPassword: ada.password, newPassword: 'short' }, adaToken), 400, /new_password/)
  const res = await ui('PUT', '/profile/password', { currentPassword: ada.password, newPassword: 'difference-engine-2' }, adaToken)
  t.equal(res.status, 204)
  t.equal((await ui('POST', '/auth/login', { email: ada.email, password: ada.password })).status, 401)
  t.equal((await ui('POST', '/auth/login', { email: ada.email, password: 'difference-engine-2' })).status, 200)
  ada.password = 'difference-engine-2'
})

let inviteCode = ''

t.test('settings: regenerate-setting read and written in camelCase, a new code as inviteCode', async (t) => {
  const first = await ui('GET', '/settings/regenerate-setting', undefined, adaToken)
  t.equal(first.status, 200)
  t.equal(first.body.regenerateAfterSignup, false)
  t.equal(first.body.inviteCode, null, 'never read back: the service keeps a hash (the page shows its placeholder)')
  const generated = await ui('POST', '/settings/generate-invite-code', undefined, adaToken)
  t.equal(generated.status, 201)
  t.match(generated.body.inviteCode, /^\S{10,}$/)
  inviteCode = generated.body.inviteCode as string
  const after = await ui('GET', '/settings/regenerate-setting', undefined, adaToken)
  t.equal(after.body.inviteCodeHint, inviteCode.slice(-4), 'which code is current')

  const put = await ui('PUT', '/settings/regenerate-setting', { regenerateAfterSignup: true }, adaToken)
  t.equal(put.status, 200)
  t.equal(put.body.regenerateAfterSignup, true)
  t.equal((await ui('GET', '/settings/regenerate-setting', undefined, adaToken)).body.regenerateAfterSignup, true)
  refused(t, await ui('PUT', '/settings/regenerate-setting', { regenerateAfterSignup: 'yes' }, adaToken), 400, /regenerate_after_signup/)
  refused(t, await ui('PUT', '/settings/regenerate-setting', {}, adaToken), 400)
  refused(t, await ui('GET', '/settings/regenerate-setting'), 401)
})

t.test('the invite link: a second person signs up through /signup?invite=<code> and signs in as a user', async (t) => {
  const link = new URL(`${FRONTEND}/signup?invite=${inviteCode}`) // getInviteLink() in the UI
  const grace = { name: 'Grace Hopper', email: 'grace@example.com', password: 'compiler-a0-1952' }
  const res = await ui('POST', '/auth/register', { ...grace, confirmPassword: grace.password, inviteCode: link.searchParams.get('invite') })
  t.equal(res.status, 201)
  const login = await ui('POST', '/auth/login', { email: grace.email, password: grace.password })
  t.equal(login.status, 200)
  sessionUser(t, login.body.user, { email: grace.email, name: grace.name, role: 'user' })

  refused(t, await ui('GET', '/settings/regenerate-setting', undefined, login.body.token as string), 403)
  refused(t, await ui('POST', '/settings/generate-invite-code', undefined, login.body.token as string), 403)
  const again = await ui('POST', '/auth/register', { name: 'Mallory', email: 'mallory@example.com', password: 'reused-link-123', confirmPassword: 'reused-link-123', inviteCode })
  refused(t, again, 403, /invalid invite code/)
  t.not((await ui('GET', '/settings/regenerate-setting', undefined, adaToken)).body.inviteCodeHint, inviteCode.slice(-4), 'regenerate after signup replaced the code')
})

t.test('OAuth: authorize redirects as /v1/api does; the exchange gives token and the session user', async (t) => {
  const fresh = (await ui('POST', '/settings/generate-invite-code', undefined, adaToken)).body.inviteCode as string
  const start = await app.inject({ url: `${API}/auth/oauth/corp/authorize?inviteCode=${encodeURIComponent(fresh)}` })
  t.equal(start.statusCode, 302)
  const authorize = new URL(start.headers.location as string)
  const canonical = new URL((await app.inject({ url: '/v1/api/auth/oauth/corp/authorize' })).headers.location as string)
  t.equal(authorize.origin + authorize.pathname, canonical.origin + canonical.pathname, 'to the same provider page')
  for (const key of ['client_id', 'redirect_uri', 'scope', 'response_type', 'code_challenge_method']) t.equal(authorize.searchParams.get(key), canonical.searchParams.get(key), key)

  person = { sub: 'subject-ui-1', email: 'lin@corp.example', email_verified: true, name: 'Lin', picture: 'https://img.corp.example/lin.png' }
  const atProvider = await fetch(authorize, { redirect: 'manual' })
  const callback = new URL(atProvider.headers.get('location')!)
  const back = await app.inject({ url: callback.pathname + callback.search })
  const result = new URL(back.headers.location as string)
  t.equal(result.origin + result.pathname, `${FRONTEND}/auth/callback`, `the UI's callback page (${result.searchParams.get('error')})`)

  const res = await ui('POST', '/auth/oauth/exchange', { code: result.searchParams.get('code') })
  t.equal(res.status, 200)
  t.type(res.body.token, 'string')
  sessionUser(t, res.body.user, { email: 'lin@corp.example', name: 'Lin', role: 'user', authProvider: 'corp', avatarUrl: 'https://img.corp.example/lin.png' })
  refused(t, await ui('POST', '/auth/oauth/exchange', { code: result.searchParams.get('code') }), 401, /invalid or expired code/)
  refused(t, await ui('POST', '/auth/oauth/exchange', {}), 400, /code/)
  refused(t, await ui('GET', '/auth/oauth/nobody/authorize'), 404)
  refused(t, await ui('GET', '/auth/oauth/corp/authorize?returnTo=x'), 400, /return_to/)
})
