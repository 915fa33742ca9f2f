// Hostile input on the auth routes (issue 22, item 7): a register email must satisfy the `format: email` it
// declares (surrounding spaces aside), and an OAuth callback whose URL is larger than Node's header limit
// is answered 431 {error}, as its schema documents. A real socket for the latter: inject never goes
// through Node's HTTP parser, which is what answers.
import t from 'tap'
import { connect } from 'node:net'
import { once } from 'node:events'
import { startTestApp } from '../helpers/app.ts'

const { app } = await startTestApp(t, { AUTH_RATE_LIMIT_PER_IP: 1000, AUTH_RATE_LIMIT_PER_EMAIL: 1000 })
const register = (email: unknown) => app.inject({ method: 'POST', url: '/v1/api/auth/register', payload: { email, password: 'password-123', name: 'Eve' } })

t.test('register refuses an email that fails format: email (400 naming the field), and creates nothing', async (t) => {
  const bad = ['a..b@example.com', 'a@example..com', '"@example.com', 'a@-example.com', 'a@exa_mple.com', 'plain', 'a@b', 'a b@example.com',
    '.a@example.com', 'a.@example.com', 'a@example.com.', '@example.com', 'a@', 'ä@example.com', `${'a'.repeat(250)}@x.io`, 'a@@example.com', 'a@exam\nple.com']
  for (const email of bad) {
    const res = await register(email)
    t.equal(res.statusCode, 400, JSON.stringify(email).slice(0, 40))
    t.match(res.json(), { error: /^body\/email must / })
  }
  t.equal(await app.db.collection('users').countDocuments({}), 0, 'no account was created')
})

t.test('a valid email with spaces around it is accepted, trimmed and lower-cased', async (t) => {
  const res = await register('  Eve@Example.COM  ')
  t.equal(res.statusCode, 201)
  t.equal(res.json().email, 'eve@example.com')
  t.equal(res.json().user.email, 'eve@example.com')
})

t.test('an OAuth callback larger than the header limit is answered 431 {error}, and the route documents it', async (t) => {
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  const chunks: Buffer[] = []
  socket.on('data', (c: Buffer) => chunks.push(c))
  const closed = once(socket, 'close')
  socket.write(`GET /v1/api/auth/oauth/github/callback?code=${'c'.repeat(20_000)}&state=s HTTP/1.1\r\nHost: x\r\n\r\n`)
  await closed
  const reply = Buffer.concat(chunks).toString()
  t.match(reply, /^HTTP\/1\.1 431 /)
  t.same(JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4)), { error: 'request headers are too large' })

  const doc = app.swagger() as unknown as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> }
  const callback = Object.entries(doc.paths).find(([path]) => path.endsWith('/oauth/{provider}/callback'))?.[1]
  t.ok(callback?.get.responses['431'], 'the callback\'s responses include 431')
})
