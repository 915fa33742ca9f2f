// The registry handshake (registry test, and builds' registry checks) against a registry that redirects to
// every forbidden address form, and against a name whose answer changes between the check and the
// connection (DNS rebinding): the connection goes only where the policy looked.
import t from 'tap'
import http from 'node:http'
import net from 'node:net'
import { once } from 'node:events'
import { checkRegistry } from '../../src/net/registry-client.ts'
import { OutboundPolicy } from '../../src/net/outbound-policy.ts'
import { guardedFetch } from '../../src/net/guarded-fetch.ts'
import { startForbiddenTarget } from '../helpers/forbidden-target.ts'

const { port: P, connections } = await startForbiddenTarget(t)

const FORMS = [`http://0.0.0.0:${P}/v2/`, `http://[::1]:${P}/v2/`, `http://[::ffff:127.0.0.1]:${P}/v2/`, `http://2130706433:${P}/v2/`, `http://0177.0.0.1:${P}/v2/`,
  `http://0x7f000001:${P}/v2/`, `http://127.1:${P}/v2/`, `http://169.254.169.254/v2/`, `http://[::]:${P}/v2/`]

let redirect = { status: 302, location: FORMS[0] }
const seen: string[] = []
const registry = http.createServer((req, res) => {
  seen.push(req.url ?? '')
  if (redirect.status === 200) return void res.writeHead(200, { 'content-type': 'application/json', 'docker-distribution-api-version': 'registry/2.0' }).end('{}')
  res.writeHead(redirect.status, { location: redirect.location }).end()
})
// On 127.0.0.2 (Linux routes all of 127.0.0.0/8 to loopback): the list below allows it and nothing else.
registry.listen(0, '127.0.0.2')
await once(registry, 'listening')
t.teardown(() => registry.close())
const R = (registry.address() as net.AddressInfo).port

// Production, with the registry's own address allowed: only the hop checks stand in the way.
const policy = new OutboundPolicy({ allowInsecure: true, allowCidrs: ['127.0.0.2/32'], refuseLoopback: true })

t.test('a registry that redirects to any forbidden form: refused, the target never contacted', async (t) => {
  for (const status of [301, 302, 307, 308]) {
    for (const location of FORMS) {
      redirect = { status, location }
      const result = await checkRegistry(`http://127.0.0.2:${R}`, null, { policy, timeoutMs: 3000 })
      t.equal(result.ok, false, `${status} → ${location}`)
      t.match(result.message, /redirected to an address that is not allowed/)
    }
  }
  t.same(connections, [])
})

t.test('a name is checked and connected to with the same answer (no rebinding between them)', async (t) => {
  redirect = { status: 200, location: '' }
  // The first answer (the up-front check) is allowed; any later one is the metadata address.
  let asked = 0
  const rebinding = new OutboundPolicy({ allowInsecure: true, allowCidrs: [], resolve: async () => (asked++ === 0 ? ['127.0.0.2'] : ['169.254.169.254']) })
  seen.length = 0
  const result = await checkRegistry(`http://registry.test:${R}`, null, { policy: rebinding, timeoutMs: 3000 })
  t.equal(result.ok, false)
  t.equal(result.message, 'registry address 169.254.169.254 is not allowed (cloud metadata)', 'refused at connection time, with the address the connection would have used')
  t.same(seen, [], 'the registry (on the first answer\'s address) was not asked either: the connection used the second answer, and refused it')
  t.ok(asked >= 2, 'the connection resolved through the policy')

  const steady = new OutboundPolicy({ allowInsecure: true, allowCidrs: [], resolve: async () => ['127.0.0.2'] })
  const ok = await checkRegistry(`http://registry.test:${R}`, null, { policy: steady, timeoutMs: 3000 })
  t.same(ok, { ok: true, message: 'connected (anonymous access)' }, 'a steady name works')
  t.same(connections, [])
})

t.test('the guarded fetch answers like fetch with redirect: manual', async (t) => {
  redirect = { status: 302, location: 'http://elsewhere.test/' }
  const fetchGuarded = guardedFetch(new OutboundPolicy({ allowInsecure: true, allowCidrs: [] }), 'registry')
  const res = await fetchGuarded(`http://127.0.0.2:${R}/v2/`, { redirect: 'manual', headers: { accept: 'application/json' } })
  t.equal(res.status, 302)
  t.equal(res.headers.get('location'), 'http://elsewhere.test/', 'the redirect is handed back, not followed')
  redirect = { status: 200, location: '' }
  const body = await (await fetchGuarded(`http://127.0.0.2:${R}/v2/`)).text()
  t.equal(body, '{}')
  await t.rejects(fetchGuarded(`http://127.0.0.2:${R}/v2/`, { signal: AbortSignal.abort() }), { name: 'AbortError' })
})
