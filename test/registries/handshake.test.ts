// The Docker Registry v2 handshake against small registries on loopback: bearer challenges, basic-only
// registries, refusals, broken token services, unreachable hosts, and where headers may and may not go.
import t, { type Test } from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { checkRegistry } from '../../src/net/registry-client.ts'
import { OutboundPolicy } from '../../src/net/outbound-policy.ts'
import { startFakeRegistry } from './fake-registry.ts'

const policy = new OutboundPolicy({ allowInsecure: true, allowCidrs: [] })
const creds = { username: 'robot', secret: 's3cret-Pa55' }

async function registry(options: Parameters<typeof startFakeRegistry>[0]) {
  const r = await startFakeRegistry(options)
  t.teardown(() => r.close())
  return r
}

const noSecrets = (t: Test, message: string, ...secrets: string[]) => {
  for (const s of secrets) t.notOk(message.includes(s), 'the message carries no credential or token')
}

t.test('bearer challenge: a token from the realm with basic auth, then /v2/ with the token', async (t) => {
  const r = await registry({ mode: 'bearer', username: 'robot', password: creds.secret })
  const result = await checkRegistry(r.url, creds, { policy })
  t.same(result, { ok: true, message: 'connected as robot (token)' })
  t.match(r.requests.map((q) => q.path), ['/v2/', /^\/token\?service=test-registry&account=robot$/, '/v2/'])
  t.match(r.requests[1].authorization, /^Basic /)
  t.equal(r.requests[2].authorization, `Bearer ${r.token}`)
  t.equal(r.requests[0].authorization, undefined, 'no credentials before the challenge')
})

t.test('access_token is accepted as well as token', async (t) => {
  const r = await registry({ mode: 'bearer', username: 'robot', password: creds.secret, tokenKey: 'access_token' })
  t.equal((await checkRegistry(r.url, creds, { policy })).ok, true)
})

t.test('a wrong password is a refusal, and the message says so without the secret', async (t) => {
  const r = await registry({ mode: 'bearer', username: 'robot', password: 'the-real-one' })
  const result = await checkRegistry(r.url, creds, { policy })
  t.same(result, { ok: false, message: 'registry refused the credentials (401)' })
  noSecrets(t, result.message, creds.secret, 'the-real-one')
})

t.test('no credentials against a bearer registry: the anonymous token request is refused', async (t) => {
  const r = await registry({ mode: 'bearer', username: 'robot', password: 'x' })
  const result = await checkRegistry(r.url, null, { policy })
  t.equal(result.ok, false)
  t.match(result.message, /refused anonymous access \(401\)/)
  t.equal(r.requests[1].authorization, undefined, 'no Authorization without credentials')
})

t.test('a token service that fails is named with its status', async (t) => {
  const r = await registry({ mode: 'bearer', username: 'robot', password: creds.secret, tokenStatus: 500 })
  t.same(await checkRegistry(r.url, creds, { policy }), { ok: false, message: 'token service answered 500' })
})

t.test('a realm the policy refuses is never contacted with the credentials', async (t) => {
  const r = await registry({ mode: 'bearer', username: 'robot', password: creds.secret, realm: 'http://169.254.169.254/latest/meta-data' })
  const result = await checkRegistry(r.url, creds, { policy })
  t.equal(result.ok, false)
  t.match(result.message, /token service is not allowed.*169\.254\.169\.254.*not allowed/)
  t.equal(r.requests.length, 1, 'only /v2/ was asked')
  const strict = new OutboundPolicy({ allowInsecure: false, allowCidrs: [] })
  const insecureRealm = await registry({ mode: 'bearer', username: 'robot', password: creds.secret })
  t.match((await checkRegistry(insecureRealm.url, creds, { policy: strict })).message, /url must use https/, 'the registry url itself is checked too')
})

t.test('a basic-only registry: the retry carries basic auth', async (t) => {
  const r = await registry({ mode: 'basic', username: 'robot', password: creds.secret })
  t.same(await checkRegistry(r.url, creds, { policy }), { ok: true, message: 'connected as robot (basic auth)' })
  t.match(r.requests[1].authorization, /^Basic /)
  const wrong = await checkRegistry(r.url, { username: 'robot', secret: 'nope' }, { policy })
  t.same(wrong, { ok: false, message: 'registry refused the credentials (401)' })
  t.same(await checkRegistry(r.url, null, { policy }), { ok: false, message: 'the registry requires credentials (401, Basic) and none are stored' })
})

t.test('an open registry connects without credentials', async (t) => {
  const r = await registry({ mode: 'open' })
  t.same(await checkRegistry(r.url, null, { policy }), { ok: true, message: 'connected (anonymous access)' })
  t.match((await checkRegistry(`${r.url}/`, creds, { policy })).message, /anonymous access, so the credentials were not needed/)
})

t.test('something that is not a registry, and nothing at all', async (t) => {
  const r = await registry({ mode: 'open' })
  t.same(await checkRegistry(`${r.url}/elsewhere`, null, { policy }), { ok: false, message: 'no Docker Registry v2 API at this url (GET /v2/ answered 404)' })
  const port = r.port
  await r.close()
  t.same(await checkRegistry(`http://127.0.0.1:${port}`, creds, { policy }), { ok: false, message: 'cannot reach the registry: connection refused' })
})

t.test('a registry that never answers times out', async (t) => {
  const sockets = new Set<import('node:net').Socket>()
  const server = createServer(() => { /* never answers */ })
  server.on('connection', (s) => sockets.add(s))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { for (const s of sockets) s.destroy(); server.close() })
  const { port } = server.address() as AddressInfo
  const result = await checkRegistry(`http://127.0.0.1:${port}`, creds, { policy, timeoutMs: 200 })
  t.same(result, { ok: false, message: 'cannot reach the registry: no answer within 0.2 s' })
})

t.test('redirects are followed only where the policy allows, and credentials stay with their origin', async (t) => {
  const target = await registry({ mode: 'basic', username: 'robot', password: creds.secret })
  const hops: string[] = []
  const redirector = createServer((req, res) => {
    hops.push(`${req.url} ${req.headers.authorization ?? '-'}`)
    if (req.url === '/v2/' && !req.headers.authorization) { res.writeHead(401, { 'www-authenticate': 'Basic realm="r"' }); return res.end() }
    res.writeHead(307, { location: req.url === '/meta/v2/' ? 'http://169.254.169.254/v2/' : `${target.url}/v2/` })
    res.end()
  })
  await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { redirector.close() })
  const { port } = redirector.address() as AddressInfo
  const result = await checkRegistry(`http://127.0.0.1:${port}`, creds, { policy })
  t.same(result, { ok: false, message: 'registry refused the credentials (401)' }, 'the other origin got no Authorization, so it refused')
  t.match(hops, ['/v2/ -', /^\/v2\/ Basic /], 'the registry itself got the login')
  t.equal(target.requests.at(-1)!.authorization, undefined, 'Authorization was dropped at the origin change')
  const meta = await checkRegistry(`http://127.0.0.1:${port}/meta`, creds, { policy })
  t.match(meta.message, /redirected to an address that is not allowed/)
})

t.test('an untrusted certificate is named as a TLS failure', async (t) => {
  const { createPki } = await import('../kube-sim/pki.ts')
  const { createServer: createHttpsServer } = await import('node:https')
  const pki = await createPki(['127.0.0.1'])
  const server = createHttpsServer({ cert: pki.server.certPem, key: pki.server.keyPem }, (_req, res) => { res.writeHead(200); res.end('{}') })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  const { port } = server.address() as AddressInfo
  const result = await checkRegistry(`https://127.0.0.1:${port}`, creds, { policy })
  t.equal(result.ok, false)
  t.match(result.message, /^TLS verification failed \([A-Z_]+\): the registry's certificate is not trusted$/)
})
