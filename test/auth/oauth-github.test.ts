// GitHub sign-in (OAuth2 without ID tokens): the token request carries the PKCE verifier and the client
// credentials, the identity comes from the API, and only a verified email is used.
import t from 'tap'
import { createServer } from 'node:http'
import { once } from 'node:events'
import { createHash } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { startTestApp } from '../helpers/app.ts'

// A stand-in for github.com and api.github.com on loopback.
let emails: Array<{ email: string; primary: boolean; verified: boolean }> = []
const tokenRequests: Array<Record<string, string>> = []
const github = createServer(async (req, res) => {
  const url = new URL(req.url!, 'http://x')
  const send = (status: number, body: unknown) => { res.writeHead(status, { 'content-type': 'application/json' }); res.end(JSON.stringify(body)) }
  if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
    let raw = ''
    for await (const chunk of req) raw += chunk
    const body = Object.fromEntries(new URLSearchParams(raw))
    tokenRequests.push(body)
    if (body.code === 'refused') return send(200, { error: 'bad_verification_code' }) // GitHub answers errors with 200
    return send(200, { access_token: 'gho_test_access_token', token_type: 'bearer', scope: 'read:user,user:email' })
  }
  if (req.headers.authorization !== 'Bearer gho_test_access_token') return send(401, { message: 'Bad credentials' })
  if (url.pathname === '/api/user') return send(200, { id: 583231, login: 'octocat', name: null, avatar_url: 'https://avatars.example/u/583231' })
  if (url.pathname === '/api/user/emails') return send(200, emails)
  send(404, {})
}).listen(0, '127.0.0.1')
await once(github, 'listening')
t.teardown(() => github.close())
const base = `http://127.0.0.1:${(github.address() as AddressInfo).port}`

const { app } = await startTestApp(t, {
  OAUTH_PROVIDERS: JSON.stringify([{ name: 'github', type: 'github', client_id: 'gh-client', client_secret: 'gh-secret', base_url: base, api_url: `${base}/api`, trusted: true }]),
  PUBLIC_URL: 'http://api.test', FRONTEND_URL: 'http://app.test/',
})

async function signIn(code = 'good') {
  const start = await app.inject({ url: '/v1/api/auth/oauth/github/authorize' })
  t.equal(start.statusCode, 302)
  const authorize = new URL(start.headers.location as string)
  const res = await app.inject({ url: `/v1/api/auth/oauth/github/callback?code=${code}&state=${authorize.searchParams.get('state')}` })
  return { authorize, result: new URL(res.headers.location as string) }
}

t.test('authorize goes to GitHub with the GitHub scopes and PKCE', async (t) => {
  const { authorize } = await signIn('refused')
  t.equal(authorize.origin + authorize.pathname, `${base}/login/oauth/authorize`)
  t.equal(authorize.searchParams.get('scope'), 'read:user user:email')
  t.equal(authorize.searchParams.get('code_challenge_method'), 'S256')
  t.equal(authorize.searchParams.get('nonce'), null, 'no OIDC nonce for plain OAuth2')
})

t.test('a verified primary email signs in; the token request carried the verifier and credentials', async (t) => {
  emails = [{ email: 'old@example.com', primary: false, verified: false }, { email: 'Octo@Example.com', primary: true, verified: true }]
  const { authorize, result } = await signIn()
  t.equal(result.origin + result.pathname, 'http://app.test/auth/callback')
  const request = tokenRequests.at(-1)!
  t.match(request, { grant_type: 'authorization_code', code: 'good', client_id: 'gh-client', client_secret: 'gh-secret', redirect_uri: 'http://api.test/v1/api/auth/oauth/github/callback' })
  t.equal(createHash('sha256').update(request.code_verifier).digest('base64url'), authorize.searchParams.get('code_challenge'), 'the verifier matches the challenge')
  const res = await app.inject({ method: 'POST', url: '/v1/api/auth/oauth/exchange', payload: { code: result.searchParams.get('code') } })
  t.equal(res.statusCode, 200)
  t.match(res.json().user, { email: 'octo@example.com', name: 'octocat', role: 'admin', auth_provider: 'github', avatar_url: 'https://avatars.example/u/583231' })
})

t.test('no verified email: refused; a refused code: refused', async (t) => {
  // Unlink the GitHub account from the previous test so this is a first-time sign-in.
  await app.db.collection('user_identities').deleteMany({})
  emails = [{ email: 'someone@example.com', primary: true, verified: false }]
  let { result } = await signIn()
  t.equal(result.pathname, '/login')
  t.match(result.searchParams.get('error'), /GitHub email address is not verified/)
  ;({ result } = await signIn('refused'))
  t.equal(result.searchParams.get('error'), 'GitHub did not accept the sign-in')
})
