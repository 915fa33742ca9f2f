// The list query schema as a route sees it: defaults filled in, bad values refused with 400 naming them.
import t from 'tap'
import Fastify from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { fastifyOptions } from '../../src/fastify-options.ts'
import { validatorCompiler } from '../../src/validation.ts'
import { testConfig } from '../../src/config.ts'
import configPlugin from '../../plugins/config.ts'
import errorsPlugin from '../../plugins/errors.ts'
import { PaginationQuery } from '../../schemas/pagination.ts'

const config = testConfig()
const app = Fastify(fastifyOptions(config)).withTypeProvider<TypeBoxTypeProvider>()
app.setValidatorCompiler(validatorCompiler)
await app.register(configPlugin, { config })
await app.register(errorsPlugin)
app.get('/things', { schema: { querystring: PaginationQuery(['created_at', 'name']) } }, async (req) => req.query)
await app.ready()
t.teardown(() => app.close())

t.test('defaults are page 1, limit 20, sort created_at, order desc', async (t) => {
  const res = await app.inject({ url: '/things' })
  t.same(res.json(), { page: 1, limit: 20, sort: 'created_at', order: 'desc' })
})

t.test('valid values are converted and kept', async (t) => {
  const res = await app.inject({ url: '/things?page=3&limit=100&sort=name&order=asc&search=a%2Bb' })
  t.same(res.json(), { page: 3, limit: 100, sort: 'name', order: 'asc', search: 'a+b' })
})

t.test('out-of-range or unknown values are 400 naming the parameter', async (t) => {
  for (const [query, name] of [['limit=101', 'limit'], ['limit=0', 'limit'], ['page=0', 'page'], ['page=x', 'page'], ['sort=owner', 'sort'], ['order=up', 'order'], ['bogus=1', 'additional']]) {
    const res = await app.inject({ url: `/things?${query}` })
    t.equal(res.statusCode, 400, query)
    t.match(res.json().error, new RegExp(name), query)
  }
})
