// A small Docker Registry v2 on loopback for the handshake tests. `bearer` mode answers /v2/ with a Bearer
// challenge naming its own /token service, which checks HTTP Basic and issues a random token; `basic` mode
// checks HTTP Basic on /v2/ itself; `open` lets anyone in. Every request is recorded so tests can see which
// headers went where.
import { basicLogin } from '../helpers/basic-auth.ts'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import { randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'

export interface FakeRegistryOptions {
  mode: 'bearer' | 'basic' | 'open'
  username?: string
  password?: string
  /** Status the token service answers with instead of doing its job. */
  tokenStatus?: number
  /** Key of the token in the token service's JSON. */
  tokenKey?: 'token' | 'access_token'
  /** Overrides the realm the challenge names. */
  realm?: string
}

export interface FakeRegistry {
  url: string
  port: number
  /** The bearer token this registry issues (and accepts). */
  token: string
  requests: Array<{ method: string; path: string; authorization: string | undefined }>
  close(): Promise<void>
}

export async function startFakeRegistry(options: FakeRegistryOptions): Promise<FakeRegistry> {
  const token = `tok-${randomBytes(12).toString('hex')}`
  const requests: FakeRegistry['requests'] = []
  let base = ''
  const loginOk = (req: IncomingMessage) => {
    const login = basicLogin(req)
    return login !== null && login.user === options.username && login.pass === options.password
  }
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', base)
    requests.push({ method: req.method ?? 'GET', path: url.pathname + url.search, authorization: req.headers.authorization })
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', 'docker-distribution-api-version': 'registry/2.0', ...headers })
      res.end(JSON.stringify(body))
    }
    if (url.pathname === '/v2/') {
      if (options.mode === 'open') return json(200, {})
      if (options.mode === 'basic') {
        return loginOk(req) ? json(200, {}) : json(401, { errors: [{ code: 'UNAUTHORIZED' }] }, { 'www-authenticate': 'Basic realm="fake registry"' })
      }
      if (req.headers.authorization === `Bearer ${token}`) return json(200, {})
      const realm = options.realm ?? `${base}/token`
      return json(401, { errors: [{ code: 'UNAUTHORIZED' }] }, { 'www-authenticate': `Bearer realm="${realm}",service="test-registry"` })
    }
    if (url.pathname === '/token' && options.mode === 'bearer') {
      if (options.tokenStatus) return json(options.tokenStatus, { details: 'token service trouble' })
      if (url.searchParams.get('service') !== 'test-registry') return json(400, { details: 'unknown service' })
      if (!loginOk(req)) return json(401, { details: 'bad login' })
      return json(200, { [options.tokenKey ?? 'token']: token, expires_in: 300 })
    }
    json(404, { errors: [{ code: 'NOT_FOUND' }] })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  base = `http://127.0.0.1:${port}`
  return {
    url: base, port, token, requests,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }),
  }
}
