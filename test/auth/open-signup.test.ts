// OPEN_SIGNUP=true: anyone may register without an invite code, and still only one first user is admin.
import t from 'tap'
import { startTestApp } from '../helpers/app.ts'

const { app } = await startTestApp(t, { OPEN_SIGNUP: true })

t.test('racing registrations all succeed; exactly one is admin', async (t) => {
  const results = await Promise.all(Array.from({ length: 6 }, (_, i) =>
    app.inject({ method: 'POST', url: '/v1/api/auth/register', payload: { email: `open${i}@example.com`, password: 'password-123', name: `Open ${i}` } })))
  t.same(results.map((r) => r.statusCode), [201, 201, 201, 201, 201, 201])
  t.equal(results.filter((r) => r.json().user.role === 'admin').length, 1)
})

t.test('methods says signup is open', async (t) => {
  const res = await app.inject({ url: '/v1/api/auth/methods' })
  t.same(res.json().builtin, { enabled: true, signup_enabled: true, invite_required: false })
})

t.test('a wrong invite code is ignored when signup is open', async (t) => {
  const res = await app.inject({ method: 'POST', url: '/v1/api/auth/register', payload: { email: 'late@example.com', password: 'password-123', name: 'Late', invite_code: 'whatever-code' } })
  t.equal(res.statusCode, 201)
  t.equal(res.json().user.role, 'user')
})
