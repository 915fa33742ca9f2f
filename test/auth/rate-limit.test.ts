// Sign-in rate limits: per email address on login and register, per client address on login, register,
// refresh and the OAuth exchange. Small limits here; the defaults are in src/config.ts.
import t from 'tap'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'

const { app } = await startTestApp(t, { AUTH_RATE_LIMIT_PER_IP: 6, AUTH_RATE_LIMIT_PER_EMAIL: 3, AUTH_RATE_LIMIT_WINDOW_MS: 60_000 })
const victim = await registerUser(app)
let ip = 10
const nextIp = () => `203.0.113.${ip++}`
const login = (email: string, remoteAddress: string, password = 'wrong-password') =>
  app.inject({ method: 'POST', url: '/v1/api/auth/login', payload: { email, password }, remoteAddress })

t.test('login: a 4th attempt on one email within the window is 429, from any address', async (t) => {
  const codes = []
  for (let i = 0; i < 3; i++) codes.push((await login(victim.email, nextIp())).statusCode)
  t.same(codes, [401, 401, 401])
  const res = await login(victim.email.toUpperCase(), nextIp(), victim.password)
  t.equal(res.statusCode, 429, 'even with the right password, and whatever the case of the address')
  t.same(Object.keys(res.json()), ['error'])
  t.match(res.json().error, /too many requests/)
  t.ok(Number(res.headers['retry-after']) > 0, 'Retry-After says when')
  t.equal((await login('someone-else@example.com', nextIp())).statusCode, 401, 'other emails are unaffected')
})

t.test('login: one address cycling through emails is stopped by the per-address limit', async (t) => {
  const from = nextIp()
  const codes = []
  for (let i = 0; i < 7; i++) codes.push((await login(`spray${i}@example.com`, from)).statusCode)
  t.same(codes, [401, 401, 401, 401, 401, 401, 429])
  t.equal((await login('spray-other@example.com', nextIp())).statusCode, 401, 'another address is unaffected')
})

t.test('register, refresh and the OAuth exchange are limited per address too', async (t) => {
  const routes: Array<[string, object | undefined, Record<string, string>]> = [
    ['/v1/api/auth/register', { email: 'x@example.com', password: 'short', name: 'X' }, {}],
    ['/v1/api/auth/refresh', undefined, { authorization: 'Bearer not.a.token' }],
    ['/v1/api/auth/oauth/exchange', { code: 'nope' }, {}],
  ]
  for (const [url, payload, headers] of routes) {
    const from = nextIp()
    const codes = []
    for (let i = 0; i < 7; i++) codes.push((await app.inject({ method: 'POST', url, headers, remoteAddress: from, ...(payload && { payload }) })).statusCode)
    t.equal(codes.filter((c) => c === 429).length, 1, `${url}: the 7th request is limited (${codes.join(',')})`)
    t.equal(codes[6], 429)
  }
})

t.test('register: a 4th attempt for one email is 429', async (t) => {
  const codes = []
  for (let i = 0; i < 4; i++) {
    codes.push((await app.inject({ method: 'POST', url: '/v1/api/auth/register', payload: { email: 'target@example.com', password: 'password-123', name: 'T', invite_code: 'guess-number-' + i }, remoteAddress: nextIp() })).statusCode)
  }
  t.same(codes, [403, 403, 403, 429])
})
