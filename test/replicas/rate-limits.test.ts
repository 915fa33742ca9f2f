// Sign-in rate limits across replicas: two replicas (two apps in shared mode on one database) count in the
// same place, so a client that alternates between them gets one budget, not two; the window starts at the
// first attempt, as in a single process.
import t from 'tap'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'

const limits = { REPLICA_MODE: 'shared', AUTH_RATE_LIMIT_PER_IP: 6, AUTH_RATE_LIMIT_PER_EMAIL: 3, AUTH_RATE_LIMIT_WINDOW_MS: 60_000 } as const
const a = await startTestApp(t, limits)
const b = await startTestApp(t, limits, { database: a.database })
const victim = await registerUser(a.app)
const login = (app: typeof a.app, email: string, remoteAddress: string) =>
  app.inject({ method: 'POST', url: '/v1/api/auth/login', payload: { email, password: 'wrong-password' }, remoteAddress })

t.test('attempts on one email spread over two replicas share one budget', async (t) => {
  const codes = []
  for (const [i, app] of [a.app, b.app, a.app].entries()) codes.push((await login(app, victim.email, `203.0.113.${i + 1}`)).statusCode)
  t.same(codes, [401, 401, 401])
  const fourth = await login(b.app, victim.email, '203.0.113.9')
  t.equal(fourth.statusCode, 429, 'the 4th attempt is refused on the other replica too')
  const retry = Number(fourth.headers['retry-after'])
  t.ok(retry > 0 && retry <= 60, `Retry-After within the window (${retry} s)`)
  t.equal((await login(a.app, 'someone-else@example.com', '203.0.113.10')).statusCode, 401, 'other emails are unaffected')
})

t.test('one address cycling emails over two replicas is stopped after its budget', async (t) => {
  const codes = []
  for (let i = 0; i < 7; i++) codes.push((await login(i % 2 ? b.app : a.app, `spray${i}@example.com`, '198.51.100.7')).statusCode)
  t.same(codes, [401, 401, 401, 401, 401, 401, 429])
})

t.test('concurrent first attempts on both replicas are all counted', async (t) => {
  const results = await Promise.all(Array.from({ length: 8 }, (_, i) => login(i % 2 ? b.app : a.app, 'race@example.com', `192.0.2.${i + 1}`)))
  const codes = results.map((r) => r.statusCode).sort()
  t.same(codes, [401, 401, 401, 429, 429, 429, 429, 429], 'exactly the budget gets through')
})
