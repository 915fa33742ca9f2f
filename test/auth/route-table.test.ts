// Protection by default, proven over the whole route table: every route outside the auth group and the
// system pages answers 401 without a token, every admin and settings route answers 403 to a plain user,
// and unknown paths under /v1 do not reveal themselves to anonymous callers. The KubeOrch UI adapter's
// routes (/kubeorch/v1/api, API.md §10) are in the same table and held to the same rules; its error bodies
// carry `message` beside `error`.
import t from 'tap'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'

const { app } = await startTestApp(t)
await registerUser(app) // the first user is the admin
const user = await registerUser(app, { role: 'user' })

const PUBLIC = [/^(\/kubeorch)?\/v1\/api\/auth\//, /^\/healthz$/, /^\/readyz$/, /^\/$/, /^\/docs/, /^\/openapi\./, /^\*$/]
const ADMIN = [/^(\/kubeorch)?\/v1\/api\/admin(\/|$)/, /^(\/kubeorch)?\/v1\/api\/settings(\/|$)/]
const adapter = (url: string) => url.startsWith('/kubeorch/')
const errorKeys = (url: string) => adapter(url) ? ['error', 'message'] : ['error']
const concrete = (url: string) => url.replace(/:[A-Za-z_]+/g, '0123456789abcdef01234567').replace(/\*/g, 'x')
const routes = app.routeInventory.filter((r) => r.method !== 'OPTIONS')

t.test('the inventory covers every documented operation', async (t) => {
  const doc = app.swagger() as unknown as { paths: Record<string, Record<string, unknown>> }
  const known = new Set(routes.map((r) => `${r.method} ${r.url.replace(/:([A-Za-z_]+)/g, '{$1}')}`))
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of Object.keys(item)) t.ok(known.has(`${method.toUpperCase()} ${path}`), `${method.toUpperCase()} ${path}`)
  }
  t.ok(routes.some((r) => r.url === '/v1/api/profile'), 'sanity: the profile route is there')
})

t.test('every route outside the auth group and the system pages answers 401 without a token', async (t) => {
  let checked = 0
  for (const { method, url } of routes) {
    if (PUBLIC.some((re) => re.test(url))) continue
    const res = await app.inject({ method: method as 'GET', url: concrete(url) })
    t.equal(res.statusCode, 401, `${method} ${url}`)
    if (method !== 'HEAD') t.same(Object.keys(res.json()).sort(), errorKeys(url), `${method} ${url} answers ${errorKeys(url).join(' and ')}`)
    checked++
  }
  t.ok(checked >= 6, `${checked} protected routes checked`)
})

t.test('every admin and settings route answers 403 to a plain user', async (t) => {
  let checked = 0
  for (const { method, url } of routes) {
    if (!ADMIN.some((re) => re.test(url))) continue
    const res = await app.inject({ method: method as 'GET', url: concrete(url), headers: user.headers })
    t.equal(res.statusCode, 403, `${method} ${url}`)
    if (method !== 'HEAD') t.same(res.json(), adapter(url) ? { error: 'admin role required', message: 'admin role required' } : { error: 'admin role required' })
    checked++
  }
  t.ok(checked >= 4, `${checked} admin routes checked`)
})

t.test('the public routes answer without a token', async (t) => {
  for (const url of ['/healthz', '/', '/openapi.json', '/v1/api/auth/methods']) {
    t.equal((await app.inject({ url })).statusCode, 200, url)
  }
  // /readyz may be 503 on a machine too busy to answer its ping in time; it must never ask for a token.
  t.not((await app.inject({ url: '/readyz' })).statusCode, 401, '/readyz')
})

t.test('unknown paths under /v1 are 401 without a token and 404 with one; elsewhere plain 404', async (t) => {
  for (const url of ['/v1/api/nothing', '/v1/api/admin/nothing', '/v1/other', '/v1', '/kubeorch/v1/api/nothing', '/kubeorch/v1']) {
    t.equal((await app.inject({ url })).statusCode, 401, `${url} anonymous`)
  }
  t.equal((await app.inject({ url: '/v1/api/nothing', headers: user.headers })).statusCode, 404)
  t.equal((await app.inject({ url: '/v1/api/auth/nothing' })).statusCode, 404, 'the auth group is public, so its unknown paths are plain 404')
  const adapterMissing = await app.inject({ url: '/kubeorch/v1/api/nothing', headers: user.headers })
  t.equal(adapterMissing.statusCode, 404)
  t.same(adapterMissing.json(), { error: 'route GET /kubeorch/v1/api/nothing not found', message: 'route GET /kubeorch/v1/api/nothing not found' }, 'the adapter\'s 404 carries message too')
  t.equal((await app.inject({ url: '/nothing' })).statusCode, 404)
})

t.test('every protected operation documents bearer security and its 401; admin ones their 403', async (t) => {
  const doc = app.swagger() as unknown as { paths: Record<string, Record<string, { security?: unknown; responses?: Record<string, unknown> }>> }
  for (const [path, item] of Object.entries(doc.paths)) {
    if (!path.startsWith('/v1/') || path.startsWith('/v1/api/auth/')) continue
    for (const [method, op] of Object.entries(item)) {
      t.same(op.security, [{ bearerAuth: [] }], `${method.toUpperCase()} ${path} security`)
      t.ok(op.responses?.['401'], `${method.toUpperCase()} ${path} documents 401`)
      if (ADMIN.some((re) => re.test(path))) t.ok(op.responses?.['403'], `${method.toUpperCase()} ${path} documents 403`)
    }
  }
})
