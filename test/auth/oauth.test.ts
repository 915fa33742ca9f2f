// The OAuth2/OIDC sign-in end to end against a real OIDC provider on loopback (oauth2-mock-server):
// authorize → provider → callback → exchange → the token works; and every way it must fail.
import t from 'tap'
import { createHash, generateKeyPairSync } from 'node:crypto'
import { OAuth2Server, type MutableToken, type MutableResponse } from 'oauth2-mock-server'
import { SignJWT, decodeJwt } from 'jose'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'

const idp = new OAuth2Server()
await idp.issuer.keys.generate('RS256')
await idp.start(0, '127.0.0.1')
t.teardown(() => idp.stop())
const issuer = idp.issuer.url!

const FRONTEND = 'http://app.test'
const providers = [
  { name: 'corp', type: 'oidc', display_name: 'Corp SSO', issuer, client_id: 'cwo-client', client_secret: 'cwo-client-secret' },
  { name: 'partner', type: 'oidc', issuer, client_id: 'cwo-partner', client_secret: 'cwo-partner-secret', trusted: true },
  { name: 'broken', type: 'oidc', issuer: 'http://127.0.0.1:9', client_id: 'x', client_secret: 'y' },
]
const { app, logs } = await startTestApp(t, { OAUTH_PROVIDERS: JSON.stringify(providers), PUBLIC_URL: 'http://api.test', FRONTEND_URL: FRONTEND })

// What the provider says about the person signing in; each test sets it.
let person: Record<string, unknown> = {}
let tamper: ((body: Record<string, unknown>) => void) | undefined
idp.service.on('beforeTokenSigning', (token: MutableToken) => {
  if (!('scope' in token.payload)) Object.assign(token.payload, person) // the ID token (the access token has a scope)
})
idp.service.on('beforeResponse', (response: MutableResponse) => tamper?.(response.body as Record<string, unknown>))
t.afterEach(() => { tamper = undefined })

let subjects = 0
const newPerson = (extra: Record<string, unknown> = {}) => {
  subjects++
  person = { sub: `subject-${subjects}`, email: `person${subjects}@corp.example`, email_verified: true, name: `Person ${subjects}`, ...extra }
  return person
}

interface Flow { authorize: URL; callback: URL; result: URL }

async function startFlow(provider: string, query = ''): Promise<URL> {
  const res = await app.inject({ url: `/v1/api/auth/oauth/${provider}/authorize${query}` })
  if (res.statusCode !== 302) throw new Error(`authorize: ${res.statusCode} ${res.body}`)
  return new URL(res.headers.location as string)
}

/** The browser at the provider: it signs the person in and redirects back to our callback. */
async function atProvider(authorize: URL): Promise<URL> {
  const res = await fetch(authorize, { redirect: 'manual' })
  if (res.status !== 302) throw new Error(`provider: ${res.status} ${await res.text()}`)
  return new URL(res.headers.get('location')!)
}

async function callback(url: URL): Promise<URL> {
  const res = await app.inject({ url: url.pathname + url.search })
  if (res.statusCode !== 302) throw new Error(`callback: ${res.statusCode} ${res.body}`)
  return new URL(res.headers.location as string)
}

async function signIn(provider = 'corp', query = ''): Promise<Flow> {
  const authorize = await startFlow(provider, query)
  const cb = await atProvider(authorize)
  return { authorize, callback: cb, result: await callback(cb) }
}

const exchange = (code: string | null) => app.inject({ method: 'POST', url: '/v1/api/auth/oauth/exchange', payload: { code } })
const failure = (result: URL) => (result.origin + result.pathname === `${FRONTEND}/login` ? result.searchParams.get('error') : null)
const hash = (v: string) => createHash('sha256').update(v).digest('base64url')
const seen: string[] = []

t.test('GET /auth/methods lists the configured providers that answered discovery', async (t) => {
  const res = await app.inject({ url: '/v1/api/auth/methods' })
  t.same(res.json().providers, [
    { name: 'corp', display_name: 'Corp SSO', icon: 'key' },
    { name: 'partner', display_name: 'Single sign-on', icon: 'key' },
  ])
  t.ok(logs.some((l) => l.includes('"provider":"broken"') && l.includes('discovery failed')), 'the unreachable issuer is logged, not fatal')
  t.equal((await app.inject({ url: '/v1/api/auth/oauth/broken/authorize' })).statusCode, 404)
  t.equal((await app.inject({ url: '/v1/api/auth/oauth/nobody/authorize' })).statusCode, 404)
  t.equal((await app.inject({ url: '/v1/api/auth/oauth/nobody/callback?code=a&state=b' })).statusCode, 404)
})

t.test('authorize redirects to the provider with state, PKCE (S256), nonce and our callback', async (t) => {
  const url = await startFlow('corp')
  t.equal(url.origin, issuer)
  const q = url.searchParams
  t.equal(q.get('response_type'), 'code')
  t.equal(q.get('client_id'), 'cwo-client')
  t.equal(q.get('redirect_uri'), 'http://api.test/v1/api/auth/oauth/corp/callback')
  t.equal(q.get('scope'), 'openid email profile')
  t.equal(q.get('code_challenge_method'), 'S256')
  t.match(q.get('code_challenge'), /^[A-Za-z0-9_-]{43}$/)
  t.ok((q.get('state') ?? '').length >= 40)
  t.ok((q.get('nonce') ?? '').length >= 20)
  const stored = await app.db.collection('oauth_states').findOne({ _id: hash(q.get('state')!) as never })
  t.ok(stored, 'the state is stored under its hash')
  t.equal(await app.db.collection('oauth_states').countDocuments({ _id: q.get('state') as never }), 0, 'never in the clear')
  t.equal(stored!.provider, 'corp')
  t.ok(stored!.expires_at.getTime() - Date.now() > 9 * 60_000 && stored!.expires_at.getTime() - Date.now() <= 10 * 60_000, 'expires in 10 minutes')

  const json = await app.inject({ url: '/v1/api/auth/oauth/corp/authorize', headers: { accept: 'application/json' } })
  t.equal(json.statusCode, 200, 'a client asking for JSON gets the URL instead of a redirect')
  t.match(json.json().redirect_url, new RegExp(`^${issuer}/authorize\\?`))
})

t.test('TTL indexes expire states after 10 minutes and codes after 30 seconds (plus a check on read)', async (t) => {
  for (const name of ['oauth_states', 'oauth_codes']) {
    const indexes = await app.db.collection(name).indexes()
    t.ok(indexes.some((i) => i.key.expires_at === 1 && i.expireAfterSeconds === 0), `${name} has a TTL index on expires_at`)
  }
})

let firstUser: { id: string; token: string } | undefined

t.test('the full flow: the first person becomes admin; the token works on /profile', async (t) => {
  newPerson({ picture: 'https://img.corp.example/p.png' })
  const flow = await signIn('corp')
  t.equal(flow.callback.origin, 'http://api.test')
  t.equal(flow.result.origin + flow.result.pathname, `${FRONTEND}/auth/callback`, `redirected to the client (${failure(flow.result)})`)
  const code = flow.result.searchParams.get('code')!
  t.ok(code.length >= 40)
  seen.push(code, flow.callback.searchParams.get('state')!, flow.callback.searchParams.get('code')!)
  const doc = await app.db.collection('oauth_codes').findOne({ _id: hash(code) as never })
  t.ok(doc && doc.expires_at.getTime() - Date.now() <= 30_000, 'the code lives 30 seconds')

  const res = await exchange(code)
  t.equal(res.statusCode, 200)
  t.equal(res.headers['cache-control'], 'no-store')
  const { token, user } = res.json()
  t.match(user, { email: person.email, name: person.name, role: 'admin', auth_provider: 'corp', linked_providers: ['corp'], avatar_url: 'https://img.corp.example/p.png' })
  seen.push(token)
  const profile = await app.inject({ url: '/v1/api/profile', headers: { authorization: `Bearer ${token}` } })
  t.equal(profile.statusCode, 200)
  t.equal(profile.json().id, user.id)
  firstUser = { id: user.id, token }
  const login = await app.inject({ method: 'POST', url: '/v1/api/auth/login', payload: { email: user.email, password: 'any-password' } })
  t.same([login.statusCode, login.json()], [401, { error: 'invalid email or password' }], 'an account made by a provider has no password')
  const change = await app.inject({ method: 'PUT', url: '/v1/api/profile/password', headers: { authorization: `Bearer ${token}` }, payload: { current_password: 'x', new_password: 'new-password-1' } })
  t.equal(change.statusCode, 400, 'and cannot set one without proving it owns one')

  t.equal((await exchange(code)).statusCode, 401, 'the code is single use')
  t.same((await exchange(code)).json(), { error: 'invalid or expired code' })
})

t.test('signing in again finds the account by (provider, subject), even if the email changed', async (t) => {
  const again = { ...person, email: 'renamed@corp.example' }
  person = again
  const flow = await signIn('corp')
  const res = await exchange(flow.result.searchParams.get('code'))
  t.equal(res.json().user.id, firstUser!.id)
  t.equal(await app.db.collection('users').countDocuments({}), 1)
})

t.test('an unknown or expired code is 401', async (t) => {
  t.equal((await exchange('never-issued')).statusCode, 401)
  newPerson()
  person.sub = 'subject-1' // the first user again
  const flow = await signIn('corp')
  const code = flow.result.searchParams.get('code')!
  await app.db.collection('oauth_codes').updateOne({ _id: hash(code) as never }, { $set: { expires_at: new Date(Date.now() - 1000) } })
  const res = await exchange(code)
  t.equal(res.statusCode, 401, 'expired, though the TTL sweep has not removed it yet')
  t.equal((await exchange('')).statusCode, 400)
})

t.test('a forged, replayed, expired or misdirected state fails, redirecting to the login page', async (t) => {
  newPerson({ sub: 'subject-1' }) // an existing account, so only the state decides
  const authorize = await startFlow('corp')
  const cb = await atProvider(authorize)

  const forged = new URL(cb)
  forged.searchParams.set('state', 'forged-state-value-forged-state-value-forged')
  t.match(failure(await callback(forged)), /expired or was already used/, 'forged state')
  const missing = new URL(cb)
  missing.searchParams.delete('state')
  t.match(failure(await callback(missing)), /expired or was already used/, 'no state')

  const misdirected = new URL(cb)
  misdirected.pathname = '/v1/api/auth/oauth/partner/callback'
  t.match(failure(await callback(misdirected)), /expired or was already used/, 'a state is bound to its provider')

  const ok = await callback(cb)
  t.equal(ok.pathname, '/auth/callback', `the genuine callback still works once (${failure(ok)})`)
  t.match(failure(await callback(cb)), /expired or was already used/, 'replaying it fails')

  const late = await startFlow('corp')
  await app.db.collection('oauth_states').updateOne({ _id: hash(late.searchParams.get('state')!) as never }, { $set: { expires_at: new Date(Date.now() - 1000) } })
  t.match(failure(await callback(await atProvider(late))), /expired or was already used/, 'an expired state')
})

t.test('a refusal at the provider lands on the login page and spends the state', async (t) => {
  const authorize = await startFlow('corp')
  const cb = new URL('http://api.test/v1/api/auth/oauth/corp/callback')
  cb.searchParams.set('error', 'access_denied')
  cb.searchParams.set('error_description', '<script>alert(1)</script>')
  cb.searchParams.set('state', authorize.searchParams.get('state')!)
  const result = await callback(cb)
  t.equal(failure(result), 'sign-in was cancelled or refused at Corp SSO', 'our own text, not the provider\'s')
  t.equal(await app.db.collection('oauth_states').countDocuments({ _id: hash(authorize.searchParams.get('state')!) as never }), 0)
})

t.test('an ID token that does not verify is refused, and no account appears', async (t) => {
  // The mock sends its token response right after emitting beforeResponse (without awaiting handlers), so
  // each replacement ID token is made first, with the real nonce of that sign-in, and swapped in synchronously.
  async function withIdToken(make: (claims: Record<string, unknown>) => Promise<string | undefined> | string | undefined): Promise<URL> {
    const authorize = await startFlow('partner')
    const cb = await atProvider(authorize)
    const claims = { ...person, aud: 'cwo-partner', nonce: authorize.searchParams.get('nonce') }
    const idToken = await make(claims)
    tamper = ((body) => { if (idToken === undefined) delete body.id_token; else body.id_token = idToken })
    return callback(cb)
  }
  const users = await app.db.collection('users').countDocuments({})
  const kid = idp.issuer.keys.get()!.kid
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const genuine = (claims: Record<string, unknown>) => idp.issuer.buildToken({ scopesOrTransform: (_h, p) => Object.assign(p, claims) })
  const unsigned = (claims: Record<string, unknown>) => new SignJWT({ ...claims, iss: issuer }).setIssuedAt().setExpirationTime('1h')

  newPerson()
  t.equal((await withIdToken(genuine)).pathname, '/auth/callback', 'control: a genuine token made the same way is accepted')

  const cases: Record<string, (claims: Record<string, unknown>) => Promise<string | undefined> | string | undefined> = {
    'signed by another key with the provider\'s kid': (c) => unsigned(c).setProtectedHeader({ alg: 'RS256', kid }).sign(privateKey),
    'alg none': async (c) => {
      const genuineToken = await genuine(c)
      return `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${genuineToken.split('.')[1]}.`
    },
    'HS256 keyed with the client secret': (c) => unsigned(c).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('cwo-partner-secret')),
    'payload altered after signing': async (c) => {
      const [h, , sig] = (await genuine(c)).split('.')
      return `${h}.${Buffer.from(JSON.stringify({ ...decodeJwt(await genuine(c)), sub: 'subject-1' })).toString('base64url')}.${sig}`
    },
    'no ID token at all': () => undefined,
  }
  for (const [name, make] of Object.entries(cases)) {
    newPerson()
    t.match(failure(await withIdToken(make)), /identity token/, name)
  }
  t.equal(await app.db.collection('users').countDocuments({}), users + 1, 'only the control created an account')
})

t.test('wrong audience, wrong issuer, expired and wrong nonce are each refused', async (t) => {
  const users = await app.db.collection('users').countDocuments({})
  const cases: Record<string, Record<string, unknown>> = {
    'audience of another client': { aud: 'someone-else' },
    'issuer of another provider': { iss: 'https://evil.example' },
    'expired': { exp: Math.floor(Date.now() / 1000) - 3600, iat: Math.floor(Date.now() / 1000) - 7200 },
    'nonce of another sign-in': { nonce: 'not-the-nonce' },
  }
  for (const [name, claims] of Object.entries(cases)) {
    newPerson(claims)
    t.match(failure((await signIn('corp')).result), /identity token/, name)
  }
  t.equal(await app.db.collection('users').countDocuments({}), users)
})

t.test('an unverified email neither links to an existing account nor creates one', async (t) => {
  const existing = await registerUser(app, { email: 'victim@corp.example' })
  newPerson({ email: 'victim@corp.example', email_verified: false })
  t.match(failure((await signIn('partner')).result), /email address is not verified/, 'no link to the account holding the address')
  newPerson({ email_verified: false })
  t.match(failure((await signIn('partner')).result), /email address is not verified/, 'no new account either, even from a trusted provider')
  newPerson({ email: undefined })
  t.match(failure((await signIn('partner')).result), /did not share an email address/)
  const doc = await app.db.collection('users').findOne({ email: 'victim@corp.example' })
  t.same(doc!.linked_providers, [], 'the victim account is untouched')
  t.equal(await app.db.collection('user_identities').countDocuments({ user_id: doc!._id }), 0)
  void existing
})

t.test('a verified email links the provider to the existing account', async (t) => {
  const bob = await registerUser(app, { email: 'bob@corp.example' })
  newPerson({ email: 'Bob@Corp.example', email_verified: true })
  const res = await exchange((await signIn('corp')).result.searchParams.get('code'))
  t.equal(res.statusCode, 200)
  t.equal(res.json().user.id, bob.user.id, 'the same account')
  t.same(res.json().user.linked_providers, ['corp'])
  t.equal(res.json().user.auth_provider, null, 'still a password account')
  t.equal((await app.inject({ method: 'POST', url: '/v1/api/auth/login', payload: { email: bob.email, password: bob.password } })).statusCode, 200, 'the password still works')
})

t.test('creating an account needs an invite code, unless the provider is trusted', async (t) => {
  newPerson()
  t.equal(failure((await signIn('corp')).result), 'an invite code is required to sign up')
  t.equal(await app.db.collection('users').countDocuments({ email: person.email }), 0)
  t.equal(failure((await signIn('corp', '?invite_code=WRONG-WRONG-WRONG')).result), 'invalid invite code')

  const { invite_code } = await app.invites.generate()
  const invited = await signIn('corp', `?invite_code=${encodeURIComponent(invite_code)}`)
  const res = await exchange(invited.result.searchParams.get('code'))
  t.equal(res.statusCode, 200, 'the invite code given to authorize is used at the callback')
  t.match(res.json().user, { email: person.email, role: 'user', auth_provider: 'corp' })
  seen.push(invite_code)

  newPerson()
  const trusted = await exchange((await signIn('partner')).result.searchParams.get('code'))
  t.equal(trusted.statusCode, 200, 'a trusted provider creates accounts without an invite')
  t.match(trusted.json().user, { email: person.email, role: 'user', auth_provider: 'partner' })
})

t.test('codes, states, tokens and client secrets never reach the log', async (t) => {
  const text = logs.join('')
  for (const secret of [...seen, 'cwo-client-secret', 'cwo-partner-secret']) t.notOk(text.includes(secret), `${secret.slice(0, 8)}… is not logged`)
  t.ok(text.includes('/v1/api/auth/oauth/corp/callback?'), 'the callback requests are logged (redacted)')
})
