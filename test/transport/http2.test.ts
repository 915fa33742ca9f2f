// HTTPS with HTTP/2 on the service's own port (API.md §14), against a real HTTP/2 client trusting the
// development certificate (TLS=self-signed): REST calls, ten SSE streams on one session (headers first,
// live events), HTTP/1.1 on the same port for clients without h2 (ALPN), streams outliving the headers
// timeout on both protocols, a stalled HTTP/2 body answered 408 on its stream alone, security headers per
// scheme, and a shutdown that closes the sessions.
import t from 'tap'
import http2 from 'node:http2'
import { X509Certificate } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { once } from 'node:events'
import { startTestApp } from '../helpers/app.ts'
import { h1Request, h2Request, h2Stream } from './tls-client.ts'
import { waitFor } from '../kube-sim/test-helpers.ts'

const REQUEST_TIMEOUT_MS = 1500
const HEARTBEAT_MS = 150
const dataDir = mkdtempSync(join(tmpdir(), 'cwo-tls-'))
t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
const { app, logs } = await startTestApp(t, { TLS: 'self-signed', DATA_DIR: dataDir, OPEN_SIGNUP: true, SSE_HEARTBEAT_MS: HEARTBEAT_MS, REQUEST_TIMEOUT_MS, HEADERS_TIMEOUT_MS: REQUEST_TIMEOUT_MS })
await app.listen({ host: '127.0.0.1', port: 0 })
const { port } = app.server.address() as AddressInfo
const origin = `https://localhost:${port}`
const ca = readFileSync(join(dataDir, 'tls-cert.pem'))
const sessionsOpened: http2.ServerHttp2Session[] = []
app.server.on('session', (s: http2.ServerHttp2Session) => sessionsOpened.push(s))

function connect(): Promise<http2.ClientHttp2Session> {
  const session = http2.connect(origin, { ca })
  session.on('error', () => {})
  t.teardown(() => { if (!session.destroyed) session.destroy() })
  return once(session, 'connect').then(() => session)
}

const session = await connect()
const email = `h2-${Date.now()}@example.test`
let token = ''
const auth = () => ({ authorization: `Bearer ${token}` })

t.test('start-up logs the certificate\'s SHA-256 fingerprint, the one of the certificate kept in DATA_DIR', async (t) => {
  const fingerprint = new X509Certificate(ca).fingerprint256
  t.ok(logs.some((l) => l.includes(fingerprint) && l.includes('HTTP/2')), 'a log line names the fingerprint')
  t.equal(session.alpnProtocol, 'h2', 'the client negotiated HTTP/2')
})


t.test('REST over HTTP/2: sign up, log in, GET the profile', async (t) => {
  const signup = await h2Request(session, 'POST', '/v1/api/auth/register', { body: { email, password: 'a-long-password-1', name: 'H2' } })
  t.equal(signup.status, 201, 'signed up')
  const login = await h2Request(session, 'POST', '/v1/api/auth/login', { body: { email, password: 'a-long-password-1' } })
  t.equal(login.status, 200, 'logged in')
  token = login.json().token
  const profile = await h2Request(session, 'GET', '/v1/api/profile', { headers: auth() })
  t.equal(profile.status, 200)
  t.equal(profile.json().email, email)
  const refused = await h2Request(session, 'GET', '/v1/api/profile')
  t.equal(refused.status, 401)
  t.same(Object.keys(refused.json()), ['error'])
  t.equal(sessionsOpened.length, 1, 'all on one connection')
})

t.test('ten SSE streams on ONE HTTP/2 session: each gets :status 200 and its headers before any data, and a published event', async (t) => {
  const created = await h2Request(session, 'POST', '/v1/api/workflows', { headers: auth(), body: { name: 'over-h2' } })
  t.equal(created.status, 201, 'workflow created')
  const id = created.json().id as string
  const key = `workflow:${id}`
  const streams = Array.from({ length: 10 }, () => h2Stream(session, `/v1/api/workflows/${id}/status/stream`, auth()))
  t.teardown(() => streams.forEach((s) => s.close()))
  await Promise.all(streams.map((s, i) => s.until(`metadata on stream ${i}`, (text) => text.includes('event: metadata'))))
  await waitFor('ten subscribers', () => app.streams.subscriberCount(key) === 10)
  app.streams.publish(key, 'node_update', { node_id: 'n1', kind: 'Deployment', status: { state: 'running' } })
  await Promise.all(streams.map((s, i) => s.until(`node_update on stream ${i}`, (text) => text.includes('event: node_update'))))
  for (const [i, s] of streams.entries()) {
    t.equal(s.status(), 200, `stream ${i}: 200`)
    t.equal(s.order[0], 'response', `stream ${i}: headers before the first data`)
    t.equal(s.headers()['content-type'], 'text/event-stream')
    t.equal(s.headers()['cache-control'], 'no-cache')
    t.equal(s.headers().connection, undefined, 'no connection-specific header on HTTP/2')
    t.match(s.text(), /^retry: 3000\nid: \d+\nevent: metadata\n/, `stream ${i}: retry and metadata come first`)
  }
  t.equal(sessionsOpened.length, 1, 'still one connection')
  // A request on the same session while the ten streams stay open: no stall.
  const read = await h2Request(session, 'GET', `/v1/api/workflows/${id}`, { headers: auth() })
  t.equal(read.status, 200)
  // Heartbeats keep coming for longer than the request timeout: nothing cuts the session or the streams.
  const pings = (text: string) => text.split(': ping').length - 1
  await streams[0].until('pings past the request timeout', (text) => pings(text) * HEARTBEAT_MS > 2 * REQUEST_TIMEOUT_MS)
  app.streams.publish(key, 'node_update', { node_id: 'n2', kind: 'Deployment', status: { state: 'running' } })
  await Promise.all(streams.map((s, i) => s.until(`second event on stream ${i}`, (text) => text.includes('"node_id":"n2"'))))
  t.notOk(session.destroyed || session.closed, 'the session is still open')
  streams.forEach((s) => s.close())
  await waitFor('subscribers gone', () => app.streams.subscriberCount(key) === 0)
})

t.test('HTTP/1.1 on the same TLS port for clients that do not offer h2 (ALPN fallback)', async (t) => {
  const health = await h1Request(`${origin}/healthz`, ca)
  t.equal(health.status, 200)
  t.equal(health.httpVersion, '1.1')
  t.equal(health.alpn, 'http/1.1')
  const profile = await h1Request(`${origin}/v1/api/profile`, ca, { headers: auth() })
  t.equal(profile.status, 200)
  t.equal(JSON.parse(profile.body).email, email)
})

t.test('an HTTP/1.1 SSE stream over TLS outlives the headers timeout and still gets events', async (t) => {
  const created = await h2Request(session, 'POST', '/v1/api/workflows', { headers: auth(), body: { name: 'over-h1-tls' } })
  const id = created.json().id as string
  const { request } = await import('node:https')
  let text = ''
  const req = request(`${origin}/v1/api/workflows/${id}/status/stream`, { ca, headers: auth(), agent: false })
  const res = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => { req.on('response', resolve); req.on('error', reject); req.end() })
  t.teardown(() => req.destroy())
  t.equal(res.statusCode, 200)
  t.equal(res.httpVersion, '1.1')
  let ended = false
  res.on('data', (c: Buffer) => { text += c.toString('utf8') })
  res.on('close', () => { ended = true })
  await waitFor('pings past the request timeout', () => (text.split(': ping').length - 1) * HEARTBEAT_MS > 2 * REQUEST_TIMEOUT_MS || ended)
  t.notOk(ended, 'the connection was not cut')
  app.streams.publish(`workflow:${id}`, 'node_update', { node_id: 'late', kind: 'Deployment', status: { state: 'running' } })
  await waitFor('the event', () => text.includes('"node_id":"late"') || ended)
  t.ok(text.includes('"node_id":"late"'))
})

t.test('an HTTPS/1.1 client that stalls in its headers gets 408 (over TLS) and is disconnected', async (t) => {
  const { connect: tlsConnect } = await import('node:tls')
  const socket = tlsConnect({ host: '127.0.0.1', port, servername: 'localhost', ca, ALPNProtocols: ['http/1.1'] })
  await once(socket, 'secureConnect')
  t.equal(socket.alpnProtocol, 'http/1.1')
  socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n')
  let answer = ''
  socket.on('data', (c: Buffer) => { answer += c.toString('utf8') })
  await once(socket, 'close')
  t.match(answer, /^HTTP\/1\.1 408 /, 'a readable 408 through the TLS socket')
  t.match(answer, /\{"error":"request took too long to arrive"\}$/)
})

t.test('an HTTP/2 request whose body stalls gets 408 on its own stream; the session serves on', async (t) => {
  const req = session.request({ ':method': 'POST', ':path': '/v1/api/workflows', 'content-type': 'application/json', authorization: `Bearer ${token}` }, { endStream: false })
  req.write('{"name":')
  const [headers] = await once(req, 'response') as [http2.IncomingHttpHeaders]
  let body = ''
  req.on('data', (c: Buffer) => { body += c.toString('utf8') })
  await once(req, 'close')
  t.equal(headers[':status'], 408)
  t.same(JSON.parse(body), { error: 'request took too long to arrive' })
  const after = await h2Request(session, 'GET', '/v1/api/profile', { headers: auth() })
  t.equal(after.status, 200, 'the same session still answers')
})

t.test('security headers over TLS: HSTS everywhere, upgrade-insecure-requests in the docs page\'s CSP', async (t) => {
  for (const path of ['/v1/api/profile', '/docs/', '/docs/static/index.html', '/docs/static/swagger-ui.css']) {
    const h2 = await h2Request(session, 'GET', path, { headers: { ...auth(), host: 'api.example.test' } })
    t.equal(h2.headers['strict-transport-security'], 'max-age=31536000; includeSubDomains', `h2 ${path}: HSTS`)
    const h1 = await h1Request(`${origin}${path}`, ca, { headers: auth() })
    t.equal(h1.headers['strict-transport-security'], 'max-age=31536000; includeSubDomains', `https/1.1 ${path}: HSTS`)
    if (path.startsWith('/docs')) {
      t.match(h2.headers['content-security-policy'], /upgrade-insecure-requests/, `h2 ${path}: CSP upgrades`)
      t.match(h1.headers['content-security-policy'], /upgrade-insecure-requests/, `https/1.1 ${path}: CSP upgrades`)
    }
  }
})

t.test('security headers over plain HTTP from a host that is not localhost: neither HSTS nor upgrade-insecure-requests', async (t) => {
  // inject is a plain-HTTP request (no TLS socket), as a reverse proxy without X-Forwarded-Proto would send.
  for (const url of ['/docs', '/docs/', '/docs/static/index.html', '/docs/static/swagger-ui.css', '/docs/static/swagger-initializer.js', '/docs/json', '/v1/api/profile']) {
    const res = await app.inject({ url, headers: { host: 'api.example.test' } })
    t.equal(res.headers['strict-transport-security'], undefined, `${url}: no HSTS`)
    t.notMatch(String(res.headers['content-security-policy'] ?? ''), /upgrade-insecure-requests/, `${url}: no upgrade-insecure-requests`)
    t.equal(res.headers['x-content-type-options'], 'nosniff', `${url}: the other headers stay`)
  }
  const page = await app.inject({ url: '/docs/static/index.html', headers: { host: 'api.example.test' } })
  t.match(page.headers['content-security-policy'], /script-src 'self'/, 'the docs page keeps its CSP')
})

t.test('shutdown closes the HTTP/2 sessions, open streams included', async (t) => {
  const created = await h2Request(session, 'POST', '/v1/api/workflows', { headers: auth(), body: { name: 'until-shutdown' } })
  const id = created.json().id as string
  const stream = h2Stream(session, `/v1/api/workflows/${id}/status/stream`, auth())
  await stream.until('metadata', (text) => text.includes('event: metadata'))
  // A browser's idle connection (it made a request and keeps the session), and one connected just now,
  // whose session the server may only see after shutdown began.
  const used = await connect()
  t.equal((await h2Request(used, 'GET', '/healthz')).status, 200)
  const fresh = await connect()
  const closed = [session, used, fresh].map((s) => once(s, 'close'))
  await app.close()
  await stream.closed
  await Promise.all(closed)
  t.pass('app.close() resolved, the stream ended and both sessions closed')
})
