import { createServer, type Server } from 'node:https'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import type { Authenticator, UserInfo } from './auth.ts'
import type { Faults } from './faults.ts'
import { commonHeaders, sendJson, sendStatus } from './http.ts'
import type { RestHandler } from './rest.ts'
import { ApiError, statusObject } from './status.ts'
import type { WatchInfo } from './watch.ts'

export interface UpgradeHandler {
  (req: IncomingMessage, socket: Duplex, head: Buffer, user: UserInfo): void
}

export interface ServerOptions {
  host: string
  port: number
  tls: { key: string; cert: string; ca: string }
  authn: Authenticator
  faults: Faults
  rest: RestHandler
  upgrade: UpgradeHandler
  version: object
  /** The open watches, for `GET /debug/watches`. */
  watches(): WatchInfo[]
  /** Called when the listener stops so streaming endpoints can end. */
  onStop(): void
}

const publicPaths = new Set(['/healthz', '/livez', '/readyz', '/version', '/.well-known/openid-configuration', '/openid/v1/jwks'])
const healthPaths = new Set(['/healthz', '/livez', '/readyz'])

/** The HTTPS listener: TLS with optional client certificates, authentication, fault injection, routing. */
export class SimServer {
  private server?: Server
  private readonly sockets = new Set<Socket>()
  port: number
  /** Requests received (health checks included), for benchmarks that count a client's calls. */
  requests = 0

  constructor(private readonly o: ServerOptions) { this.port = o.port }

  get listening(): boolean { return this.server?.listening ?? false }

  async start(): Promise<void> {
    const server = createServer({
      key: this.o.tls.key, cert: this.o.tls.cert, ca: this.o.tls.ca,
      // Ask for a client certificate but let token users in without one; the authenticator decides.
      requestCert: true, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'],
    })
    server.keepAliveTimeout = 65_000
    server.headersTimeout = 70_000
    server.requestTimeout = 0
    server.on('connection', (s: Socket) => { this.sockets.add(s); s.on('close', () => this.sockets.delete(s)) })
    server.on('secureConnection', (s: Socket) => { this.sockets.add(s); s.on('close', () => this.sockets.delete(s)) })
    server.on('request', (req: IncomingMessage, res: ServerResponse) => { void this.handle(req, res) })
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => { void this.handleUpgrade(req, socket, head) })
    server.on('tlsClientError', () => undefined)
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(this.port, this.o.host, () => { server.off('error', reject); resolve() })
    })
    const addr = server.address()
    if (addr && typeof addr === 'object') this.port = addr.port
    this.server = server
  }

  /** Stops listening and severs every connection (watches, logs, exec sessions included). */
  async stop(): Promise<void> {
    const server = this.server
    this.server = undefined
    this.o.onStop()
    if (!server) return
    const closed = new Promise<void>((resolve) => server.close(() => resolve()))
    for (const s of this.sockets) s.destroy()
    this.sockets.clear()
    server.closeAllConnections?.()
    await closed
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.requests++
    try {
      const path = (req.url ?? '/').split('?')[0]
      if (this.o.faults.latencyMs > 0) await new Promise((r) => setTimeout(r, this.o.faults.latencyMs).unref())
      if (req.method === 'GET' && publicPaths.has(path)) {
        // Anonymous callers may read these, but credentials that are sent must be valid: the apiserver
        // authenticates before it authorizes, so a bad token is 401 on every path.
        if (req.headers.authorization && !(await this.o.authn.authenticate(req))) {
          sendStatus(res, statusObject(401, 'Unauthorized', 'Unauthorized'))
          return
        }
        if (!healthPaths.has(path)) {
          const injected = this.o.faults.take(req.method, path)
          if (injected) { sendStatus(res, injected); return }
        }
        this.publicEndpoint(path, req, res)
        return
      }
      const user = await this.o.authn.authenticate(req)
      if (!user) {
        req.resume()
        sendStatus(res, statusObject(401, 'Unauthorized', 'Unauthorized'))
        return
      }
      // Not an apiserver path: tests read who watches what (any authenticated identity may; no fault applies).
      if (req.method === 'GET' && path === '/debug/watches') { sendJson(res, 200, { watches: this.o.watches() }); return }
      await this.o.faults.gate(req.method ?? 'GET', path)
      const injected = this.o.faults.take(req.method ?? 'GET', path)
      if (injected) { req.resume(); sendStatus(res, injected); return }
      await this.o.rest.handle(req, res, user)
    } catch (e) {
      if (e instanceof ApiError) { req.resume(); sendStatus(res, e.status); return }
      const msg = (e as Error)?.stack ?? String(e)
      if (!res.headersSent) sendStatus(res, statusObject(500, `kube-sim internal error: ${msg}`))
      else res.destroy()
    }
  }

  private publicEndpoint(path: string, req: IncomingMessage, res: ServerResponse): void {
    if (path === '/version') { sendJson(res, 200, this.o.version); return }
    if (path === '/.well-known/openid-configuration') {
      const base = `https://${req.headers.host ?? `${this.o.host}:${this.port}`}`
      sendJson(res, 200, { issuer: 'https://kubernetes.default.svc.cluster.local', jwks_uri: `${base}/openid/v1/jwks`, response_types_supported: ['id_token'], subject_types_supported: ['public'], id_token_signing_alg_values_supported: ['ES256'] })
      return
    }
    if (path === '/openid/v1/jwks') { void this.o.authn.jwks().then((j) => sendJson(res, 200, j)); return }
    // Health checks answer plain text, with `?verbose` listing checks like the apiserver does.
    const verbose = (req.url ?? '').includes('verbose')
    const body = verbose ? `[+]ping ok\n[+]etcd ok\n[+]poststarthook/kube-sim ok\n${path.slice(1)} check passed\n` : 'ok'
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff', ...commonHeaders() })
    res.end(body)
  }

  private async handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const refuse = (code: number, message: string) => {
      const body = JSON.stringify(statusObject(code, message))
      socket.end(`HTTP/1.1 ${code} ${code === 401 ? 'Unauthorized' : code === 404 ? 'Not Found' : 'Bad Request'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
    }
    try {
      if (this.o.faults.latencyMs > 0) await new Promise((r) => setTimeout(r, this.o.faults.latencyMs).unref())
      const user = await this.o.authn.authenticate(req)
      if (!user) { refuse(401, 'Unauthorized'); return }
      const injected = this.o.faults.take(req.method ?? 'GET', (req.url ?? '/').split('?')[0])
      if (injected) { refuse(injected.code, injected.message ?? 'injected'); return }
      this.o.upgrade(req, socket, head, user)
    } catch (e) {
      if (e instanceof ApiError) refuse(e.code, e.message)
      else refuse(400, String(e))
    }
  }
}
