// Secure defaults (issue 22): in production, with no OUTBOUND_ALLOW_CIDRS, loopback is refused in every
// spelling, as a cluster server, an OIDC issuer and a Git URL; the refusal comes before any connection, so
// its words are the same whether a port listens there or not, and the listening port never sees a packet.
import t from 'tap'
import net from 'node:net'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'
import { freePort } from '../helpers/ports.ts'

const connections: number[] = []
const listener = net.createServer((s) => { connections.push(1); s.destroy() }).listen(0, '0.0.0.0')
await once(listener, 'listening')
const OPEN = (listener.address() as net.AddressInfo).port
const listener6 = net.createServer((s) => { connections.push(1); s.destroy() })
const hasIPv6 = await new Promise<boolean>((resolve) => { listener6.once('error', () => resolve(false)); listener6.listen(OPEN, '::1', () => resolve(true)) })
t.teardown(() => { listener.close(); if (hasIPv6) listener6.close() })
const CLOSED = await freePort()

/** Ten spellings of this host's loopback (and two of "this host"). */
const SPELLINGS = ['127.0.0.1', '2130706433', '0177.0.0.1', '0x7f000001', '127.1', '0x7f.1', '[::1]', '[::ffff:127.0.0.1]', '[0:0:0:0:0:0:0:1]', 'localhost', '0.0.0.0', '[::]']

const { app, logs } = await startTestApp(t, { NODE_ENV: 'production', JWT_SECRET: randomBytes(32).toString('hex'), ENCRYPTION_KEY: randomBytes(32).toString('base64') })
const user = await registerUser(app)
const call = async (method: 'POST', url: string, payload?: object) => {
  const res = await app.inject({ method, url, headers: user.headers, ...(payload && { payload }) })
  return { status: res.statusCode, body: res.json() as { error?: string; id?: string } }
}

let n = 0
/** What the service answers for one spelling and port, as the status and words (the port written as PORT). */
const attempts: Record<string, (host: string, port: number) => Promise<string>> = {
  'cluster server': async (host, port) => {
    const res = await call('POST', '/v1/api/clusters', { name: `c${n++}`, server: `https://${host}:${port}`, auth_type: 'token', token: 'x' })
    return `${res.status} ${res.body.error}`
  },
  'OIDC issuer': async (host, port) => {
    const name = `o${n++}`
    const res = await call('POST', '/v1/api/clusters', { name, server: 'https://10.0.0.1:6443', auth_type: 'oidc', credentials: { issuer_url: `https://${host}:${port}`, client_id: 'k', refresh_token: 'r' } })
    if (res.status !== 201) return `${res.status} ${res.body.error}`
    // A name is only resolved on connection: the connection test is where it is refused.
    const tested = await call('POST', `/v1/api/clusters/${name}/test`)
    return `saved, then ${tested.status} ${tested.body.error}`
  },
  'Git URL': async (host, port) => {
    const res = await call('POST', '/v1/api/import/analyze', { source: 'git', url: `https://${host}:${port}/team/repo.git` })
    return `${res.status} ${res.body.error}`
  },
}

t.test('the start-up log says which outbound policy is in force', async (t) => {
  const lines = logs.join('').split('\n').filter((l) => l.includes('outbound policy:'))
  t.equal(lines.length, 1, 'one line')
  t.match(lines[0], /"level":30/, 'at info')
  t.match(lines[0], /loopback refused unless OUTBOUND_ALLOW_CIDRS names it/)
})

for (const [what, attempt] of Object.entries(attempts)) {
  t.test(`${what}: every loopback spelling refused, in the same words whether a port listens or not`, async (t) => {
    for (const host of SPELLINGS) {
      const open = (await attempt(host, OPEN)).replaceAll(String(OPEN), 'PORT')
      const closed = (await attempt(host, CLOSED)).replaceAll(String(CLOSED), 'PORT')
      t.match(open, /^(saved, then )?(400|502) .*not allowed/, `${host}: ${open}`)
      t.equal(open, closed, `${host}: the answer does not tell whether the port listens`)
    }
    t.same(connections, [], 'the listening port saw no connection')
  })
}

t.test('nothing was stored for the refused servers', async (t) => {
  const servers = (await app.db.collection('clusters').find({}, { projection: { server: 1 } }).toArray()).map((c) => String(c.server))
  t.same(servers.filter((s) => !s.startsWith('https://10.0.0.1')), [])
})
