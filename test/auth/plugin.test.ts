// The auth plugin's contract for other route groups, on scratch routes: protected by default, the admin
// guard as a route flag and as a preHandler, and `?token=` only where a route opts in.
import t from 'tap'
import Fastify from 'fastify'
import fp from 'fastify-plugin'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { fastifyOptions } from '../../src/fastify-options.ts'
import { testConfig } from '../../src/config.ts'
import configPlugin from '../../plugins/config.ts'
import errorsPlugin from '../../plugins/errors.ts'
import rateLimitPlugin from '../../plugins/rate-limit.ts'
import authPlugin from '../../plugins/auth.ts'
import { indexSetups } from '../../src/repositories/indexes.ts'
import { startTestDatabase } from '../helpers/database.ts'

const database = await startTestDatabase(t)
const app = Fastify(fastifyOptions(testConfig())).withTypeProvider<TypeBoxTypeProvider>()
await app.register(configPlugin, { config: testConfig() })
await app.register(errorsPlugin)
await app.register(rateLimitPlugin)
await app.register(fp(async (a) => {
  for (const setup of indexSetups) await setup(database.db)
  a.decorate('db', database.db)
}, { name: 'database' }))
await app.register(authPlugin)
await app.register(async (group) => {
  group.get('/v1/api/gadgets', async (req) => ({ who: req.user.id }))
  group.get('/v1/api/gadgets/terminal', { config: { tokenInQuery: true } }, async (req) => ({ who: req.user.id }))
  group.post('/v1/api/gadgets/danger', { config: { requireAdmin: true } }, async () => ({ ok: true }))
  group.delete('/v1/api/gadgets/:id', { preHandler: app.requireAdmin }, async () => ({ ok: true }))
  group.get('/v1/api/admin/gadgets', async () => ({ ok: true }))
})
await app.ready()
t.teardown(() => app.close())

const admin = await app.users.register({ email: 'root@example.com', password: 'password-123', name: 'Root' })
const { invite_code } = await app.invites.generate()
const user = await app.users.register({ email: 'joe@example.com', password: 'password-123', name: 'Joe', invite_code })
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

t.test('a new route group is protected without declaring anything', async (t) => {
  t.equal((await app.inject({ url: '/v1/api/gadgets' })).statusCode, 401)
  const res = await app.inject({ url: '/v1/api/gadgets', headers: bearer(user.token) })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { who: user.id }, 'request.user is the caller')
})

t.test('?token= works only on a route that opts in', async (t) => {
  t.equal((await app.inject({ url: `/v1/api/gadgets?token=${user.token}` })).statusCode, 401)
  const res = await app.inject({ url: `/v1/api/gadgets/terminal?token=${user.token}` })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { who: user.id })
  t.equal((await app.inject({ url: '/v1/api/gadgets/terminal?token=forged.token.value' })).statusCode, 401)
})

t.test('the admin guard: route flag, preHandler, and automatically under /v1/api/admin', async (t) => {
  const calls = [
    { method: 'POST' as const, url: '/v1/api/gadgets/danger' },
    { method: 'DELETE' as const, url: '/v1/api/gadgets/7' },
    { method: 'GET' as const, url: '/v1/api/admin/gadgets' },
  ]
  for (const call of calls) {
    const asUser = await app.inject({ ...call, headers: bearer(user.token) })
    t.equal(asUser.statusCode, 403, `${call.method} ${call.url} as a user`)
    t.same(asUser.json(), { error: 'admin role required' })
    t.equal((await app.inject({ ...call, headers: bearer(admin.token) })).statusCode, 200, `${call.method} ${call.url} as an admin`)
    t.equal((await app.inject(call)).statusCode, 401, `${call.method} ${call.url} anonymous`)
  }
})
