// Request logging at the production level: one line per request, with what an operator needs (id, method,
// URL, client, status, time) and no secret; and nothing at all, not even a per-request logger, when off.
import t from 'tap'
import { Writable } from 'node:stream'
import Fastify from 'fastify'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'
import { fastifyOptions } from '../../src/fastify-options.ts'
import { testConfig } from '../../src/config.ts'

const { app, logs } = await startTestApp(t)
const user = await registerUser(app)
const lines = (from: number) => logs.slice(from).map((l) => JSON.parse(l) as Record<string, any>)

t.test('a request is logged once, when it completes, with its id, method, redacted URL, status and time', async (t) => {
  const from = logs.length
  // An unknown query parameter is refused (400), after the token check: the line still records it.
  const res = await app.inject({ url: '/v1/api/workflows?limit=5&token=query-secret-123', headers: user.headers })
  t.equal(res.statusCode, 400)
  const mine = lines(from)
  t.equal(mine.length, 1, 'one line, not an arrival line and a completion line')
  const [line] = mine
  t.match(line, { level: 30, msg: 'request completed', reqId: String, req: { method: 'GET', ip: String }, res: { statusCode: 400 }, responseTime: Number })
  t.equal(line.req.id, line.reqId)
  t.equal(line.req.url, '/v1/api/workflows?limit=5&token=[REDACTED]', 'secret query values are replaced')
  t.notOk(logs.slice(from).join('').includes('query-secret-123'))
})

t.test('no token, password or secret query value reaches the log', async (t) => {
  const from = logs.length
  await app.inject({ method: 'POST', url: '/v1/api/auth/login', payload: { email: user.email, password: user.password } })
  await app.inject({ url: '/v1/api/workflows?code=oauth-code-456', headers: { authorization: 'Bearer not.a.valid-token-789' } })
  await app.inject({ url: '/v1/api/profile', headers: user.headers })
  const text = logs.slice(from).join('')
  t.equal(lines(from).filter((l) => l.msg === 'request completed').length, 3)
  for (const secret of [user.password, user.token, 'oauth-code-456', 'not.a.valid-token-789']) t.notOk(text.includes(secret), `${secret.slice(0, 6)}… is not logged`)
  t.match(text, /"statusCode":401/, 'the refused request is logged')
})

t.test('responses still carry the security headers', async (t) => {
  for (const res of [await app.inject({ url: '/v1/api/profile', headers: user.headers }), await app.inject({ url: '/v1/api/profile' }), await app.inject({ url: '/nowhere' })]) {
    t.equal(res.headers['x-content-type-options'], 'nosniff', `${res.statusCode}`)
    t.equal(res.headers['referrer-policy'], 'no-referrer', `${res.statusCode}`)
  }
})

t.test('at level silent nothing is written and no per-request logger is built', async (t) => {
  const written: string[] = []
  const logStream = new Writable({ write(chunk, _e, done) { written.push(String(chunk)); done() } })
  const bare = Fastify(fastifyOptions(testConfig({ LOG_LEVEL: 'silent' }), { logStream }))
  bare.get('/x', async (request) => { request.log.error({ password: 'p' }, 'would be logged'); return { same: request.log === bare.log } })
  t.teardown(() => bare.close())
  const res = await bare.inject({ url: '/x' })
  t.same(res.json(), { same: true }, 'the request shares the server\'s (null) logger')
  t.same(written, [])
})

t.test('at level info a handler\'s own log lines carry the request id and are redacted', async (t) => {
  const written: string[] = []
  const logStream = new Writable({ write(chunk, _e, done) { written.push(String(chunk)); done() } })
  const server = Fastify(fastifyOptions(testConfig({ LOG_LEVEL: 'info' }), { logStream }))
  server.get('/x', async (request) => { request.log.info({ password: 'hunter2', body: { token: 'tok-123' } }, 'inside'); return {} })
  t.teardown(() => server.close())
  await server.inject({ url: '/x' })
  await server.inject({ url: '/x' })
  const parsed = written.map((l) => JSON.parse(l) as Record<string, any>)
  const inside = parsed.filter((l) => l.msg === 'inside')
  const done = parsed.filter((l) => l.msg === 'request completed')
  t.equal(inside.length, 2)
  t.same(inside.map((l) => l.reqId), done.map((l) => l.reqId), 'the same id as the request\'s access line')
  t.not(inside[0].reqId, inside[1].reqId)
  t.equal(inside[0].password, '[REDACTED]')
  t.equal(inside[0].body.token, '[REDACTED]')
  t.notOk(written.join('').includes('hunter2') || written.join('').includes('tok-123'))
})
