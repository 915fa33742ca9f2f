// The error handler on its own: one Fastify instance with the app's options and the errors plugin, plus
// scratch routes that fail in each way a real route can.
import t from 'tap'
import Fastify from 'fastify'
import { Writable } from 'node:stream'
import { connect } from 'node:net'
import { once } from 'node:events'
import { Type } from 'typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { fastifyOptions } from '../../src/fastify-options.ts'
import { validatorCompiler } from '../../src/validation.ts'
import { testConfig } from '../../src/config.ts'
import configPlugin from '../../plugins/config.ts'
import errorsPlugin from '../../plugins/errors.ts'
import rateLimitPlugin from '../../plugins/rate-limit.ts'
import { BadRequest, Conflict, Forbidden, NotFound, UpstreamError } from '../../src/errors.ts'

const config = testConfig({ LOG_LEVEL: 'info', BODY_LIMIT_BYTES: 2048, RATE_LIMIT_MAX: 2 })
const logs: string[] = []
const logStream = new Writable({ write(chunk, _e, done) { logs.push(String(chunk)); done() } })
const app = Fastify(fastifyOptions(config, { logStream })).withTypeProvider<TypeBoxTypeProvider>()
app.setValidatorCompiler(validatorCompiler)
await app.register(configPlugin, { config })
await app.register(errorsPlugin)
await app.register(rateLimitPlugin)

const thrown = { bad: new BadRequest('name is required'), forbidden: new Forbidden(), missing: new NotFound('workflow'),
  taken: new Conflict('a cluster with that name exists'), upstream: new UpstreamError('cluster did not answer') }
app.get('/typed/:kind', async (req) => { throw thrown[(req.params as { kind: keyof typeof thrown }).kind] })
app.get('/crash', async () => { throw new Error('driver said: connection to mongodb://admin:hunter2@db failed at Foo.bar (x.js:1:1)') })
app.post('/items', {
  schema: { body: Type.Object({ email: Type.String({ format: 'email' }), count: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }) },
}, async (req) => ({ ok: req.body.count }))
app.get('/limited', { config: { rateLimit: { max: 2, timeWindow: '1 minute' } } }, async () => ({ ok: true }))
app.post('/choices', {
  schema: { body: Type.Object({
    status: Type.Optional(Type.Union([Type.Literal('draft'), Type.Literal('published'), Type.Literal('archived')])),
    kind: Type.Optional(Type.Unsafe<string>({ type: 'string', enum: ['a', 'b'] })),
    ref: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    policy: Type.Optional(Type.Union([Type.Literal('Always'), Type.Literal('Never'), Type.Null()])),
  }, { additionalProperties: false }) },
}, async () => ({ ok: true }))
app.post('/free', { schema: { body: Type.Object({ doc: Type.Record(Type.String(), Type.Unknown()) }) } }, async (req) => req.body)
app.get('/things/:id', async (req) => req.params)
await app.ready()
t.teardown(() => app.close())


t.test('typed service errors map to their status codes with their message', async (t) => {
  const expected = { bad: 400, forbidden: 403, missing: 404, taken: 409, upstream: 502 }
  for (const [kind, status] of Object.entries(expected)) {
    const res = await app.inject({ url: `/typed/${kind}` })
    t.equal(res.statusCode, status, kind)
    t.same(Object.keys(res.json()), ['error'], 'body is exactly {error}')
    t.equal(res.json().error, thrown[kind as keyof typeof thrown].message)
  }
})

t.test('schema violations are 400 naming the field', async (t) => {
  let res = await app.inject({ method: 'POST', url: '/items', payload: { email: 'not-an-email', count: 1 } })
  t.equal(res.statusCode, 400)
  t.same(Object.keys(res.json()), ['error'], 'body is exactly {error}')
  t.match(res.json().error, /body\/email must match format "email"/)
  res = await app.inject({ method: 'POST', url: '/items', payload: { email: 'a@b.co' } })
  t.equal(res.statusCode, 400)
  t.match(res.json().error, /count/)
  res = await app.inject({ method: 'POST', url: '/items', payload: { email: 'a@b.co', count: 1, extra: true } })
  t.equal(res.statusCode, 400, 'unknown fields are refused, not silently dropped')
  t.equal(res.json().error, 'body must not have additional property "extra"')
  res = await app.inject({ method: 'POST', url: '/items', payload: { email: 'a@b.co', count: 2 } })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { ok: 2 })
})

t.test('malformed JSON is 400, a body over the limit 413, a foreign content type 415', async (t) => {
  let res = await app.inject({ method: 'POST', url: '/items', headers: { 'content-type': 'application/json' }, payload: '{"email":' })
  t.equal(res.statusCode, 400)
  t.same(res.json(), { error: 'body is not valid JSON' })
  res = await app.inject({ method: 'POST', url: '/items', payload: { email: 'a@b.co', count: 1, pad: 'x'.repeat(4096) } })
  t.equal(res.statusCode, 413)
  t.same(res.json(), { error: 'request body is larger than 2048 bytes' })
  res = await app.inject({ method: 'POST', url: '/items', headers: { 'content-type': 'application/xml' }, payload: '<a/>' })
  t.equal(res.statusCode, 415)
  t.same(Object.keys(res.json()), ['error'], 'body is exactly {error}')
})

t.test('an unexpected failure is a generic 500; its detail reaches the log only', async (t) => {
  const res = await app.inject({ url: '/crash' })
  t.equal(res.statusCode, 500)
  t.same(res.json(), { error: 'internal server error' })
  t.notMatch(res.body, /hunter2|driver|x\.js/)
  t.ok(logs.some((l) => l.includes('unhandled error') && l.includes('driver said')), 'the detail is logged')
  t.notOk(logs.some((l) => l.includes('hunter2')), 'a password inside the error text is scrubbed from the log')
})

t.test('rate-limited routes answer 429 with {error}', async (t) => {
  const codes = []
  for (let i = 0; i < 3; i++) codes.push((await app.inject({ url: '/limited' })).statusCode)
  t.same(codes, [200, 200, 429])
  const res = await app.inject({ url: '/limited' })
  t.same(Object.keys(res.json()), ['error'], 'body is exactly {error}')
  t.match(res.json().error, /too many requests/)
})

t.test('unknown routes are 404 {error} and never echo the query string', async (t) => {
  const res = await app.inject({ url: '/v1/api/nothing?token=supersecret' })
  t.equal(res.statusCode, 404)
  t.same(res.json(), { error: 'route GET /v1/api/nothing not found' })
})

t.test('JSON bodies are not coerced: null stays null and "1" is not a number', async (t) => {
  const res = await app.inject({ method: 'POST', url: '/items', payload: { email: 'a@b.co', count: '1' } })
  t.equal(res.statusCode, 400)
  t.match(res.json().error, /body\/count must be integer/)
})

t.test('validation messages name the field and the allowed values, once', async (t) => {
  const error = async (payload: object) => {
    const res = await app.inject({ method: 'POST', url: '/choices', payload })
    t.equal(res.statusCode, 400, JSON.stringify(payload))
    t.same(Object.keys(res.json()), ['error'], 'body is exactly {error}')
    return res.json().error as string
  }
  t.equal(await error({ status: 'gone' }), 'body/status must be one of draft, published, archived', 'a union of literals is one message listing the values')
  t.equal(await error({ kind: 'c' }), 'body/kind must be one of a, b', 'an enum lists its values')
  t.equal(await error({ ref: 3 }), 'body/ref must be string or null', 'a union of types says which types')
  t.equal(await error({ policy: 'Sometimes' }), 'body/policy must be one of Always, Never or null')
  t.equal(await error({ foo: 1 }), 'body must not have additional property "foo"', 'the unknown property is named')
  t.equal((await app.inject({ method: 'POST', url: '/choices', payload: { status: 'draft', kind: 'a', ref: null, policy: null } })).statusCode, 200)
  const res = await app.inject({ method: 'POST', url: '/items', payload: { email: 'a@b.co' } })
  t.equal(res.json().error, 'body must have required property "count"')
})

t.test('text/plain, even when it looks like JSON, is 415 {error}', async (t) => {
  const res = await app.inject({ method: 'POST', url: '/items', headers: { 'content-type': 'text/plain' }, payload: '{"email":"a@b.co","count":1}' })
  t.equal(res.statusCode, 415)
  t.same(res.json(), { error: 'unsupported content type; send application/json' })
})

t.test('every JSON body is bounded when parsed, whatever the route schema allows', async (t) => {
  const post = (payload: string) => app.inject({ method: 'POST', url: '/free', headers: { 'content-type': 'application/json' }, payload })
  let res = await post(`{"doc":{"x":${'['.repeat(500)}${']'.repeat(500)}}}`)
  t.equal(res.statusCode, 400)
  t.match(res.json().error, /^body\/doc\/x(\/0)+ nests deeper than 64 levels$/)
  res = await post('{"doc":{"ok":{"a\\u0000b":1}}}')
  t.equal(res.statusCode, 400)
  t.same(res.json(), { error: 'body/doc/ok has a key with a NUL byte ("a\\u0000b")' })
  res = await post(`{"doc":{"${'k'.repeat(1025)}":1}}`)
  t.equal(res.statusCode, 400)
  t.match(res.json().error, /^body\/doc has a key longer than 1024 characters/)
  for (const payload of ['null', '[]', '"s"', '0', 'true']) {
    res = await post(payload)
    t.equal(res.statusCode, 400, payload)
    t.same(res.json(), { error: 'body must be a JSON object' }, payload)
  }
  res = await post('{"doc":{"$set":{"a.b":1}}}')
  t.equal(res.statusCode, 200)
  t.same(res.json(), { doc: { $set: { 'a.b': 1 } } }, 'keys starting with $ or holding a dot are plain data')
  res = await post('{"__proto__":{"x":1},"doc":{}}')
  t.equal(res.statusCode, 400, 'prototype poisoning is still refused')
  t.same(Object.keys(res.json()), ['error'])
})

t.test('routing errors are {error} and never echo the URL', async (t) => {
  let res = await app.inject({ url: `/things/${'z'.repeat(300)}` })
  t.equal(res.statusCode, 414)
  t.same(res.json(), { error: 'URL path segment is longer than 256 characters' })
  res = await app.inject({ url: `/nothing/${'z'.repeat(300)}` })
  t.equal(res.statusCode, 414, 'the same for a path no route has')
  res = await app.inject({ url: '/things/%E0%A4%Azz' })
  t.equal(res.statusCode, 400)
  t.same(res.json(), { error: 'malformed URL: bad percent-encoding' })
  t.notMatch(res.body, /zz/)
  t.equal((await app.inject({ url: `/things/${'z'.repeat(256)}` })).statusCode, 200, '256 characters is fine')
})

t.test('headers too large for Node\'s parser are 431 {error}', async (t) => {
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const socket = connect(port, '127.0.0.1')
  const chunks: Buffer[] = []
  socket.on('data', (c: Buffer) => chunks.push(c))
  await once(socket, 'connect')
  socket.write(`GET /typed/bad HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`)
  await once(socket, 'close')
  const reply = Buffer.concat(chunks).toString()
  t.match(reply, /^HTTP\/1\.1 431 /)
  t.equal(reply.slice(reply.indexOf('\r\n\r\n') + 4), JSON.stringify({ error: 'request headers are too large' }))
})
