// OIDC token refresh for `oidc` clusters: the issuer is user input. Its discovery request and the token
// endpoint its document names are each held to the outbound policy on the connection, and a redirect is
// never followed; a listener on the forbidden target counts connections and must see none.
import t from 'tap'
import http from 'node:http'
import net from 'node:net'
import { once } from 'node:events'
import { OidcTokenSource } from '../../src/kube/oidc-token.ts'
import { OutboundPolicy } from '../../src/net/outbound-policy.ts'

const connections: string[] = []
const target = net.createServer((s) => { connections.push('x'); s.destroy() }).listen(0, '0.0.0.0')
await once(target, 'listening')
const P = (target.address() as net.AddressInfo).port
t.teardown(() => target.close())

const FORMS = [`http://0.0.0.0:${P}/`, `http://[::1]:${P}/`, `http://[::ffff:127.0.0.1]:${P}/`, `http://2130706433:${P}/`, `http://127.1:${P}/`, `http://127.0.0.1:${P}/`, 'http://169.254.169.254/']

let answer: { status: number; headers: Record<string, string>; body: string } = { status: 200, headers: {}, body: '{}' }
const issuer = http.createServer((_req, res) => { res.writeHead(answer.status, answer.headers).end(answer.body) })
issuer.listen(0, '127.0.0.2')
await once(issuer, 'listening')
t.teardown(() => issuer.close())
const ISSUER = `http://127.0.0.2:${(issuer.address() as net.AddressInfo).port}`

// Production with only the issuer's own address allowed.
const source = new OidcTokenSource(new OutboundPolicy({ allowInsecure: true, allowCidrs: ['127.0.0.2/32'], refuseLoopback: true }))
const creds = { issuer_url: ISSUER, client_id: 'kube', refresh_token: 'refresh-secret' }

t.test('a discovery request answered with a redirect is not followed', async (t) => {
  for (const status of [301, 302, 307, 308]) {
    for (const location of FORMS) {
      answer = { status, headers: { location }, body: '' }
      await t.rejects(source.current(creds), { message: `the OIDC issuer answered ${status} (a redirect, which is not followed)` }, `${status} → ${location}`)
    }
  }
  t.same(connections, [])
})

t.test('a token endpoint at a forbidden address is refused before connecting', async (t) => {
  for (const location of FORMS) {
    answer = { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ issuer: ISSUER, token_endpoint: `${location}token` }) }
    await t.rejects(source.current(creds), { message: /issuer_url address .* is not allowed/ }, location)
  }
  t.same(connections, [])
})

t.test('an allowed issuer still refreshes', async (t) => {
  let step = 0
  const both = http.createServer((req, res) => {
    step++
    if (req.url?.startsWith('/.well-known')) return void res.setHeader('content-type', 'application/json').end(JSON.stringify({ token_endpoint: `${ISSUER2}/token` }))
    res.setHeader('content-type', 'application/json').end(JSON.stringify({ id_token: 'new-id-token', refresh_token: 'rotated' }))
  }).listen(0, '127.0.0.2')
  await once(both, 'listening')
  t.teardown(() => both.close())
  const ISSUER2 = `http://127.0.0.2:${(both.address() as net.AddressInfo).port}`
  t.same(await source.current({ ...creds, issuer_url: ISSUER2 }), { id_token: 'new-id-token', refresh_token: 'rotated', refreshed: true })
  t.equal(step, 2)
})
