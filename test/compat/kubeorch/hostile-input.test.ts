// Hostile input on every adapter route (the schema-driven fuzzer walks openapi.yaml, where the adapter is
// hidden): bodies of the wrong type, prototype keys, broken paging and flags, ids of the wrong shape, as
// an admin. Whatever is sent, the answer is a 4xx (or a route's deliberate 501/502) with `error` and
// `message`, never a 500, a stack trace or driver text, and nothing is half-written.
import t from 'tap'
import { startTestApp } from '../../helpers/app.ts'
import { registerUser } from '../../helpers/auth.ts'

const { app } = await startTestApp(t, { AUTH_RATE_LIMIT_PER_IP: 1_000_000, AUTH_RATE_LIMIT_PER_EMAIL: 1_000_000, RATE_LIMIT_MAX: 1_000_000 })
const admin = await registerUser(app)

const ID = '0123456789abcdef01234567'
const routes = app.routeInventory
  .filter((r) => r.url.startsWith('/kubeorch/') && !['OPTIONS', 'HEAD'].includes(r.method))
  // An open stream would not end: the stream routes are refused before they start (bad ids) below.
  .filter((r) => !(r.url.endsWith('/stream') && !r.url.includes(':')))

const BODIES: unknown[] = [null, [], 'text', 42, {}, JSON.parse('{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}'),
  { name: 'x'.repeat(100_000) }, { name: { $gt: '' }, email: ['a'], password: 1, credentials: 'plain', limit: -1 }]
const QUERIES = ['', '?limit=-1&offset=abc', '?limit=100000&offset=-5&sync=maybe&hideSystem=2', '?type[]=Pod&sort_by=__proto__&sort_order=sideways', `?${'q=' + 'y'.repeat(5000)}`]
const PARAMS = [ID, 'not-an-id', '%00', 'x'.repeat(64)]
/** Statuses a route answers on purpose: alert rule writes (501: not supported here), a cluster, registry or webhook receiver that did not answer (502). */
const DELIBERATE = new Set([501, 502])

t.test('no adapter route answers hostile input with a 5xx, a stack or driver text; errors carry message', async (t) => {
  let sent = 0
  for (const { method, url } of routes) {
    for (const param of PARAMS) {
      const path = url.replace(/:[A-Za-z_]+/g, param)
      const hasParams = path !== url
      for (const query of QUERIES) {
        for (const body of method === 'GET' || method === 'DELETE' ? [undefined] : BODIES) {
          const res = await app.inject({
            method: method as 'GET', url: `${path}${query}`, headers: admin.headers,
            ...(body !== undefined && { payload: JSON.stringify(body), headers: { ...admin.headers, 'content-type': 'application/json' } }),
          })
          sent++
          const where = `${method} ${url} ${query.slice(0, 40)} ${JSON.stringify(body)?.slice(0, 40)}`
          if (res.statusCode >= 500 && !DELIBERATE.has(res.statusCode)) t.fail(`${where}: ${res.statusCode} ${res.body.slice(0, 200)}`)
          if (res.statusCode >= 400 && res.statusCode !== 426) {
            const json = res.json() as Record<string, unknown>
            if (typeof json.error !== 'string' || json.message !== json.error) t.fail(`${where}: error body ${res.body.slice(0, 200)}`)
          }
          if (/\bat .+\.(ts|js):\d+|MongoServerError|E11000|node_modules/.test(res.body)) t.fail(`${where}: internal text in ${res.body.slice(0, 200)}`)
        }
        if (!hasParams) break
      }
      if (!hasParams) break
    }
  }
  t.ok(sent > 500, `${sent} requests to ${routes.length} adapter routes`)
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype was polluted')
})

t.test('nothing was half-written by refused requests', async (t) => {
  const db = app.db
  for (const name of ['workflows', 'clusters', 'registries', 'builds']) {
    t.equal(await db.collection(name).countDocuments({}), 0, `${name}: none created by hostile bodies`)
  }
})
