import t from 'tap'
import { readFileSync } from 'node:fs'
import { validate } from '@readme/openapi-parser'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'

const { app, config } = await startTestApp(t)
const admin = await registerUser(app) // the first user is the admin
const committed = readFileSync(new URL('../../openapi.yaml', import.meta.url), 'utf8')

t.test('the committed openapi.yaml is what the routes generate', async (t) => {
  t.equal(committed, app.swagger({ yaml: true }), 'openapi.yaml is stale: run `npm run openapi` and commit it')
})

t.test('the document is valid OpenAPI 3.1 under an independent validator', async (t) => {
  const doc = app.swagger() as { openapi: string }
  t.equal(doc.openapi, '3.1.0')
  const result = await validate(structuredClone(doc) as never)
  t.ok(result.valid, JSON.stringify((result as { errors?: unknown }).errors ?? []))
})

type Operation = { operationId?: string; responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }

t.test('every API operation has an operationId, a success schema and {error} replies', async (t) => {
  const doc = app.swagger() as { paths: Record<string, Record<string, Operation>> }
  const ids = new Set<string>()
  for (const [path, item] of Object.entries(doc.paths)) {
    if (!path.startsWith('/v1')) continue
    for (const [method, op] of Object.entries(item)) {
      const where = `${method.toUpperCase()} ${path}`
      t.ok(op.operationId, `${where} has an operationId`)
      t.notOk(ids.has(op.operationId!), `${where} operationId is unique`)
      ids.add(op.operationId!)
      const codes = Object.keys(op.responses ?? {})
      // A WebSocket's success is the 101 of its handshake.
      t.ok(codes.some((c) => /^2/.test(c) || c === '101'), `${where} documents its success reply`)
      t.ok(codes.some((c) => /^4/.test(c)), `${where} documents its error replies`)
    }
  }
})

t.test('response schemas are real: no open blobs outside the canvas documents', async (t) => {
  const doc = app.swagger() as Record<string, unknown>
  const open: string[] = []
  const walk = (node: unknown, path: string) => {
    if (!node || typeof node !== 'object') return
    const n = node as Record<string, unknown>
    // Canvas nodes and edges keep every key the client sends (CanvasNode, CanvasEdge and their position);
    // a manifest preview's objects are Kubernetes objects of any kind, custom resources included.
    if (n.additionalProperties === true && !/(^|[/_])(nodes|edges|data|metadata|labels|annotations|trigger_data|CanvasNode|CanvasEdge|objects\/items\/properties\/object|application\/yaml\/schema\/anyOf\/0)(\/|$)/.test(path)) open.push(path)
    for (const [k, v] of Object.entries(n)) walk(v, `${path}/${k}`)
  }
  walk(doc, '')
  t.same(open, [], 'no additionalProperties: true where the shape is known')
})

type Schema = Record<string, unknown>
type Parameter = { in: string; name: string; required?: boolean; schema?: Schema }
type Op = { operationId?: string; security?: unknown[]; parameters?: Parameter[]; requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> }; responses?: Record<string, { content?: Record<string, { schema?: Schema }> }> }
type Doc = { paths: Record<string, Record<string, Op>>; components: { schemas: Record<string, Schema> } }
const doc = app.swagger() as unknown as Doc
const operations = Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method: method.toUpperCase(), op })))
const byId = (id: string) => operations.find((o) => o.op.operationId === id)!.op
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

t.test('query parameters with a default are optional and document the default', async (t) => {
  let defaulted = 0
  for (const { path, method, op } of operations) {
    for (const p of op.parameters ?? []) {
      if (p.in !== 'query' || p.schema?.default === undefined) continue
      defaulted++
      t.equal(p.required, false, `${method} ${path} ?${p.name} (default ${JSON.stringify(p.schema.default)}) is optional`)
    }
  }
  t.ok(defaulted >= 26, `${defaulted} defaulted query parameters (page, limit, sort, order of each list, and the others)`)
  const list = byId('listWorkflows').parameters!
  t.same(Object.fromEntries(list.filter((p) => p.schema?.default !== undefined).map((p) => [p.name, p.schema!.default])), { page: 1, limit: 20, sort: 'created_at', order: 'desc' })
})

t.test('a request body never requires a property that has a default (validation fills it in)', async (t) => {
  const found: string[] = []
  const walk = (s: unknown, where: string) => {
    if (!s || typeof s !== 'object') return
    const { properties, required, items } = s as { properties?: Record<string, Schema>; required?: string[]; items?: unknown }
    for (const name of required ?? []) if (properties?.[name]?.default !== undefined) found.push(`${where}/${name}`)
    for (const [name, p] of Object.entries(properties ?? {})) walk(p, `${where}/${name}`)
    walk(items, `${where}[]`)
  }
  for (const { path, method, op } of operations) walk(op.requestBody?.content?.['application/json']?.schema, `${method} ${path}`)
  t.same(found, [])
})

t.test('list routes answer without any query and apply the defaults', async (t) => {
  const res = await app.inject({ url: '/v1/api/workflows', headers: admin.headers })
  t.equal(res.statusCode, 200)
  t.match(res.json(), { page: 1, limit: 20 })
  const recent = await app.inject({ url: '/v1/api/dashboard/recent-workflows', headers: admin.headers })
  t.equal(recent.statusCode, 200)
})

t.test('a fixed set of values is one enum, never anyOf of single values', async (t) => {
  const found: string[] = []
  const single = (s: unknown) => !!s && typeof s === 'object' && ('const' in s || (Array.isArray((s as Schema).enum) && ((s as Schema).enum as unknown[]).length === 1))
  const walk = (node: unknown, path: string) => {
    if (!node || typeof node !== 'object') return
    const n = node as Schema
    for (const key of ['anyOf', 'oneOf']) {
      const members = n[key]
      if (Array.isArray(members) && members.filter(single).length >= 2) found.push(`${path}/${key}`)
    }
    for (const [k, v] of Object.entries(n)) walk(v, `${path}/${k}`)
  }
  walk(doc, '')
  t.same(found, [])
  const order = byId('listWorkflows').parameters!.find((p) => p.name === 'order')!.schema!
  t.same(order.enum, ['asc', 'desc'])
})

t.test('public routes say so with security: [], every other route requires the bearer token', async (t) => {
  for (const { path, method, op } of operations) {
    const where = `${method} ${path}`
    const isPublic = !path.startsWith('/v1') || (path.startsWith('/v1/api/auth/') && op.operationId !== 'refreshToken')
    // refresh reads the (possibly expired) token from the Authorization header, so it documents bearer.
    t.same(op.security, isPublic ? [] : [{ bearerAuth: [] }], where)
  }
  t.ok(operations.some((o) => o.path === '/healthz') && operations.some((o) => o.path === '/readyz'), 'the probes are documented')
})

t.test('User is one named component, used by the auth and profile replies', async (t) => {
  const user = doc.components.schemas.User
  t.ok(user, 'components.schemas.User')
  t.same((user.required as string[]).slice().sort(), ['auth_provider', 'avatar_url', 'created_at', 'email', 'id', 'linked_providers', 'name', 'role', 'updated_at'])
  t.same((user.properties as Record<string, Schema>).role.enum, ['admin', 'user'])
  const replySchema = (id: string, code: string) => byId(id).responses![code].content!['application/json'].schema!
  for (const id of ['getProfile', 'updateProfile']) t.same(replySchema(id, '200'), { $ref: '#/components/schemas/User' }, id)
  for (const [id, code] of [['register', '201'], ['login', '200'], ['refreshToken', '200'], ['exchangeOAuthCode', '200']]) {
    t.same((replySchema(id, code).properties as Record<string, Schema>).user, { $ref: '#/components/schemas/User' }, id)
  }
})

t.test('canvas nodes and edges in replies are typed as the request side types them', async (t) => {
  const { CanvasNode, CanvasEdge } = doc.components.schemas
  t.same(CanvasNode.required, ['id', 'type'])
  t.same(CanvasEdge.required, ['id', 'source', 'target'])
  const items = (schema: Schema, field: string) => ((schema.properties as Record<string, Schema>)[field].items)
  for (const name of ['Workflow', 'Version']) {
    t.same(items(doc.components.schemas[name], 'nodes'), { $ref: '#/components/schemas/CanvasNode' }, `${name}.nodes`)
    t.same(items(doc.components.schemas[name], 'edges'), { $ref: '#/components/schemas/CanvasEdge' }, `${name}.edges`)
  }
  const save = byId('saveWorkflow').requestBody!.content!['application/json'].schema!
  t.same(items(save, 'nodes'), { $ref: '#/components/schemas/CanvasNode' }, 'the save request uses the same component')
  t.same(items(save, 'edges'), { $ref: '#/components/schemas/CanvasEdge' })
  t.notMatch(JSON.stringify(doc), /x-document-as/, 'the marker keyword stays out of the document')
})

t.test('a body whose fields are all optional may be left out', async (t) => {
  t.equal(byId('cloneWorkflow').requestBody!.required, false)
  t.equal(byId('createVersion').requestBody!.required, false)
  t.equal(byId('createWorkflow').requestBody!.required, true)
  t.equal(byId('updateWorkflow').requestBody!.required, true, 'minProperties: 1')
})

t.test('statuses follow from the declaration: 400 with input, 404 with a path id, 413/415 with a body and only then', async (t) => {
  for (const { path, method, op } of operations) {
    const where = `${method} ${path}`
    const codes = new Set(Object.keys(op.responses ?? {}))
    // (A route may validate a query string it documents no parameter of, e.g. one that takes none: 400 too.)
    if ((op.parameters ?? []).length > 0 || BODY_METHODS.has(method)) t.ok(codes.has('400'), `${where}: 400`)
    t.equal(codes.has('413'), BODY_METHODS.has(method), `${where}: 413`)
    t.equal(codes.has('415'), BODY_METHODS.has(method), `${where}: 415`)
    if (path.includes('{')) t.ok(codes.has('404') && codes.has('414'), `${where}: 404 and 414`)
    else t.notOk(codes.has('414'), `${where}: no 414`)
  }
  const limited = operations.filter((o) => o.op.responses?.['429']).map((o) => o.op.operationId).sort()
  t.same(limited, ['changePassword', 'exchangeOAuthCode', 'finishOAuthSignIn', 'login', 'refreshToken', 'register', 'startOAuthSignIn', 'streamBuild', 'streamImport', 'streamNotifications', 'streamResource', 'streamResourceLogs', 'streamWorkflowStatus'], '429 exactly where a limiter runs (sign-in rate limits, per-user stream limits)')
  for (const id of ['testCluster', 'refreshCluster', 'getClusterMetrics', 'updateClusterCredentials']) t.ok(byId(id).responses?.['502'], `${id}: 502 (it calls the cluster)`)
  t.ok(byId('getReadiness').responses?.['503'], '/readyz: 503')
})

t.test('what a route answers to malformed requests is documented', async (t) => {
  const concrete = (path: string, op: Op) => path.replace(/\{([A-Za-z_]+)\}/g, (_m, name: string) => {
    const p = op.parameters?.find((x) => x.in === 'path' && x.name === name)
    return p?.schema?.type === 'integer' ? '999999' : '0123456789abcdef01234567'
  })
  const tooLong = 'x'.repeat(config.BODY_LIMIT_BYTES + 1)
  let checked = 0
  for (const { path, method, op } of operations) {
    const url = concrete(path, op)
    const documented = Object.keys(op.responses ?? {})
    const send = async (what: string, options: { payload?: string; headers?: Record<string, string>; url?: string }, expected?: number) => {
      const res = await app.inject({ method: method as 'GET', url: options.url ?? url, headers: { ...admin.headers, ...options.headers }, ...(options.payload !== undefined && { payload: options.payload }) })
      t.ok(documented.includes(String(res.statusCode)), `${method} ${path} ${what}: ${res.statusCode} is documented (${documented.join(', ')})`)
      if (expected !== undefined) t.equal(res.statusCode, expected, `${method} ${path} ${what}`)
      checked++
    }
    if (path.includes('{')) {
      await send('unknown id', BODY_METHODS.has(method) ? { payload: '{}', headers: { 'content-type': 'application/json' } } : {})
      await send('over-long id', { url: path.replace(/\{[A-Za-z_]+\}/g, 'x'.repeat(300)) }, 414)
    }
    if ((op.parameters ?? []).some((p) => p.in === 'query')) await send('unknown query parameter', { url: `${url}?page=0&limit=0&v1=0&image=&q=` })
    if (BODY_METHODS.has(method)) {
      await send('XML body', { payload: '<a/>', headers: { 'content-type': 'application/xml' } }, 415)
      await send('text/plain body', { payload: '{"a":1}', headers: { 'content-type': 'text/plain' } })
      await send('oversized body', { payload: `"${tooLong}"`, headers: { 'content-type': 'application/json' } }, 413)
      await send('malformed JSON', { payload: '{', headers: { 'content-type': 'application/json' } }, 400)
    }
  }
  t.ok(checked >= 80, `${checked} requests checked`)
})
