import t from 'tap'
import { startTestApp } from '../helpers/app.ts'

const { app } = await startTestApp(t)

t.test('GET /healthz says the process is alive', async (t) => {
  const res = await app.inject({ url: '/healthz' })
  t.equal(res.statusCode, 200)
  t.match(res.json(), { status: 'ok', version: String, uptime_seconds: Number })
})

t.test('GET /readyz says the database answers', async (t) => {
  const res = await app.inject({ url: '/readyz' })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { status: 'ready', database: 'ok' })
})

t.test('GET / is an HTML landing page linking to the docs', async (t) => {
  const res = await app.inject({ url: '/' })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /text\/html/)
  t.match(res.body, /Cluster Workflow Orchestration Service/)
  t.match(res.body, /href="\/docs"/)
})

t.test('Swagger UI and both OpenAPI documents are served', async (t) => {
  const ui = await app.inject({ url: '/docs' })
  t.equal(ui.statusCode, 200)
  t.match(ui.headers['content-type'], /text\/html/)
  t.match(ui.body, /swagger-ui/i)
  const json = await app.inject({ url: '/openapi.json' })
  t.equal(json.statusCode, 200)
  t.equal(json.json().openapi, '3.1.0')
  const yaml = await app.inject({ url: '/openapi.yaml' })
  t.equal(yaml.statusCode, 200)
  t.match(yaml.headers['content-type'], /yaml/)
  t.match(yaml.body, /^openapi: 3\.1\.0/m)
})

t.test('security headers and CORS without credentials by default', async (t) => {
  const res = await app.inject({ url: '/healthz', headers: { origin: 'https://canvas.example' } })
  t.equal(res.headers['access-control-allow-origin'], '*')
  t.equal(res.headers['access-control-allow-credentials'], undefined)
  t.equal(res.headers['x-content-type-options'], 'nosniff')
  const pre = await app.inject({ method: 'OPTIONS', url: '/v1/api/workflows', headers: { origin: 'https://canvas.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' } })
  t.equal(pre.statusCode, 204)
  t.match(String(pre.headers['access-control-allow-headers']), /Authorization/)
})

t.test('GET /readyz is 503 {error} when the database is gone', async (t) => {
  await app.mongo.close()
  const res = await app.inject({ url: '/readyz' })
  t.equal(res.statusCode, 503)
  t.same(res.json(), { error: 'database unavailable' })
})
