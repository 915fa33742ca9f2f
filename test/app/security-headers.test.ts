// The security headers are computed once at start-up instead of by @fastify/helmet on every request. These
// tests prove the replies carry exactly what @fastify/helmet (same options, same helmet) gave them, header
// for header, on ordinary replies, errors raised in hooks and handlers, 404s and CORS
// preflights, for both CORS modes.
import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import fastifyHelmet from '@fastify/helmet'
import cors from '@fastify/cors'
import configPlugin from '../../plugins/config.ts'
import securityPlugin, { helmetOptions } from '../../plugins/security.ts'
import { testConfig } from '../../src/config.ts'
import { Unauthorized } from '../../src/errors.ts'

function routes(app: FastifyInstance) {
  app.get('/json', async () => ({ ok: true }))
  app.get('/fails', async () => { throw new Unauthorized('no') })
  app.get('/hook-rejects', { onRequest: async () => { throw new Unauthorized('no') } }, async () => ({ ok: true }))
  app.post('/created', async (_req, reply) => reply.code(201).send({ id: 1 }))
}

async function current(corsOrigins: string) {
  // Behind a trusted proxy, so a test can say a request came over TLS (X-Forwarded-Proto: https).
  const app = Fastify({ trustProxy: true })
  await app.register(configPlugin, { config: testConfig({ CORS_ORIGINS: corsOrigins }) })
  await app.register(securityPlugin)
  routes(app)
  return app
}

// The registration this plugin replaced, kept here as the reference.
async function reference(corsOrigins: string) {
  const origins = corsOrigins.split(',').map((o) => o.trim()).filter(Boolean)
  const anyOrigin = origins.length === 0 || origins.includes('*')
  const app = Fastify()
  await app.register(cors, {
    origin: anyOrigin ? '*' : origins, credentials: !anyOrigin,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    allowedHeaders: ['Authorization', 'Content-Type', 'Last-Event-ID'], maxAge: 600,
  })
  // inject's requests are plain HTTP: the reference leaves out HSTS as this plugin does for them (API.md §14).
  await app.register(fastifyHelmet, { global: true, ...helmetOptions(anyOrigin, false) })
  routes(app)
  return app
}

const requests = [
  { method: 'GET', url: '/json' },
  { method: 'GET', url: '/json', headers: { origin: 'https://app.example' } },
  { method: 'HEAD', url: '/json' },
  { method: 'GET', url: '/fails' },
  { method: 'GET', url: '/hook-rejects' },
  { method: 'POST', url: '/created', payload: {} },
  { method: 'GET', url: '/no-such-route' },
  { method: 'OPTIONS', url: '/json', headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' } },
] as const

// Order aside (HTTP gives it no meaning; helmet's used to come before Fastify's own).
const withoutDate = (headers: Record<string, unknown>) => Object.entries(headers).filter(([k]) => k !== 'date').sort(([a], [b]) => a.localeCompare(b))

for (const corsOrigins of ['*', 'https://app.example,https://admin.example']) {
  t.test(`replies carry the same headers as with @fastify/helmet (CORS_ORIGINS=${corsOrigins})`, async (t) => {
    const [mine, theirs] = await Promise.all([current(corsOrigins), reference(corsOrigins)])
    t.teardown(() => Promise.all([mine.close(), theirs.close()]))
    for (const request of requests) {
      const [a, b] = await Promise.all([mine.inject(request as never), theirs.inject(request as never)])
      t.equal(a.statusCode, b.statusCode, `${request.method} ${request.url}: same status`)
      t.same(withoutDate(a.headers), withoutDate(b.headers), `${request.method} ${request.url}: same headers`)
    }
  })
}

t.test('the header set itself (a helmet upgrade that changes it must be looked at)', async (t) => {
  const app = await current('*')
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/json', headers: { 'x-forwarded-proto': 'https' } })
  t.match(res.headers, {
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'cross-origin',
    'origin-agent-cluster': '?1',
    'referrer-policy': 'no-referrer',
    'strict-transport-security': 'max-age=31536000; includeSubDomains',
    'x-content-type-options': 'nosniff',
    'x-dns-prefetch-control': 'off',
    'x-download-options': 'noopen',
    'x-frame-options': 'SAMEORIGIN',
    'x-permitted-cross-domain-policies': 'none',
    'x-xss-protection': '0',
  })
  t.equal(res.headers['content-security-policy'], undefined, 'no CSP on JSON (Swagger UI brings its own)')
})

t.test('HSTS only on TLS requests: here a trusted proxy\'s X-Forwarded-Proto says which', async (t) => {
  const app = await current('*')
  t.teardown(() => app.close())
  const tls = await app.inject({ url: '/json', headers: { 'x-forwarded-proto': 'https', host: 'api.example.test' } })
  t.equal(tls.headers['strict-transport-security'], 'max-age=31536000; includeSubDomains')
  for (const headers of [{ host: 'api.example.test' }, { host: 'api.example.test', 'x-forwarded-proto': 'http' }]) {
    const plain = await app.inject({ url: '/json', headers })
    t.equal(plain.headers['strict-transport-security'], undefined, `no HSTS over plain HTTP (${JSON.stringify(headers)})`)
    t.equal(plain.headers['x-content-type-options'], 'nosniff', 'the other headers stay')
  }
})
