// Malformed requests over the whole route table: every body is a JSON object or absent, a body-less
// operation sent `Content-Type: application/json` with nothing in it works, and a malformed URL answers the
// same {error} whether or not a route exists and whoever asks.
import t from 'tap'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'

const { app } = await startTestApp(t, { AUTH_RATE_LIMIT_PER_IP: 1000, RATE_LIMIT_MAX: 10_000 })
const admin = await registerUser(app) // the first user is the admin: every route is open to it
const json = { ...admin.headers, 'content-type': 'application/json' }

const created = await app.inject({ method: 'POST', url: '/v1/api/workflows', headers: admin.headers, payload: { name: 'bodies' } })
const workflowId = created.json().id as string

interface Operation { requestBody?: { content?: Record<string, { schema?: { required?: string[]; minProperties?: number } }> } }
const doc = app.swagger() as unknown as { paths: Record<string, Record<string, Operation>> }
const operations = Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({
  method: method.toUpperCase(), path, op,
  url: path.replace('{version}', '1').replace('{id}', workflowId).replace(/\{[A-Za-z_]+\}/g, 'no-such-thing'),
})))
const writes = operations.filter((o) => ['POST', 'PUT', 'PATCH', 'DELETE'].includes(o.method))
/** Whether the operation takes no body or one whose fields are all optional. */
const needsNoBody = (o: Operation) => {
  // An operation taking only another media type (a multipart upload) answers a JSON body 415, rightly.
  if (o.requestBody && !o.requestBody.content?.['application/json']) return false
  const schema = o.requestBody?.content?.['application/json']?.schema
  return (schema?.required ?? []).length === 0 && (schema?.minProperties ?? 0) === 0
}

t.test('null, arrays, strings, numbers and booleans are refused as bodies by every writing route', async (t) => {
  t.ok(writes.filter((o) => o.op.requestBody).length >= 15, `${writes.length} writing routes, most with a body`)
  for (const { method, path, url } of writes) {
    for (const payload of ['null', '[]', '"s"', '0', 'true']) {
      const res = await app.inject({ method: method as 'POST', url, headers: json, payload })
      t.equal(res.statusCode, 400, `${method} ${path} ${payload}`)
      t.same(res.json(), { error: 'body must be a JSON object' }, `${method} ${path} ${payload} answers {error}`)
    }
  }
})

t.test('an empty body sent as application/json is no body: the body-less operations work', async (t) => {
  const empty = (method: string, url: string) => app.inject({ method: method as 'POST', url, headers: json, payload: '' })
  let res = await empty('POST', '/v1/api/auth/refresh')
  t.equal(res.statusCode, 200, 'refresh')
  t.type(res.json().token, 'string')
  t.equal((await empty('POST', '/v1/api/settings/generate-invite-code')).statusCode, 201, 'generate-invite-code')
  res = await empty('POST', `/v1/api/workflows/${workflowId}/versions`)
  t.equal(res.statusCode, 201, 'version create')
  t.equal(res.json().version, 1)
  t.equal((await empty('POST', `/v1/api/workflows/${workflowId}/versions/1/restore`)).statusCode, 200, 'restore')
  res = await empty('POST', `/v1/api/workflows/${workflowId}/clone`)
  t.equal(res.statusCode, 201, 'clone')
  t.not(res.json().id, workflowId)

  // Everything else that needs no field: the empty body reaches the route (a missing cluster is its 404; a
  // run of a workflow without a cluster is the route's own 400, which never speaks of the body).
  let checked = 0
  for (const { method, path, url, op } of writes) {
    if (!needsNoBody(op) || method === 'DELETE' && path === '/v1/api/workflows/{id}') continue
    const res = await empty(method, url)
    const code = res.statusCode
    const routeRefusal = code === 400 && !/\bbody\b/.test(res.json().error)
    t.ok(code < 400 || code === 404 || code === 409 || routeRefusal, `${method} ${path} answers ${code} ${code >= 400 ? res.body : ''}`)
    checked++
  }
  t.ok(checked >= 8, `${checked} body-less operations checked`)
})

t.test('an over-long path segment is 414 {error} on any path, before the token is looked at', async (t) => {
  const long = 'a'.repeat(300)
  const callers = { anonymous: {}, 'a bad token': { authorization: 'Bearer not.a.token' }, 'a valid token': admin.headers }
  for (const [who, headers] of Object.entries(callers)) {
    for (const url of [`/v1/api/workflows/${long}`, `/v1/api/nothing/${long}`, `/v1/api/admin/registries/${long}`, `/v1/api/auth/${long}`]) {
      const res = await app.inject({ url, headers })
      t.equal(res.statusCode, 414, `${url.slice(0, 30)}… ${who}`)
      t.same(res.json(), { error: 'URL path segment is longer than 256 characters' }, 'no URL in the reply')
    }
  }
})

t.test('a bad percent-encoding is 400 {error} on any path, without echoing it', async (t) => {
  for (const headers of [{}, admin.headers]) {
    for (const url of ['/v1/api/workflows/%E0%A4%Aqq', '/v1/api/nothing/%E0%A4%Aqq', '/v1/api/workflows/x/versions/%zzqq']) {
      const res = await app.inject({ url, headers })
      t.equal(res.statusCode, 400, url)
      t.same(res.json(), { error: 'malformed URL: bad percent-encoding' })
    }
  }
})
