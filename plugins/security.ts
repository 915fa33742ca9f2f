// Security headers and CORS. Any origin is allowed by default but never with credentials: the API uses
// bearer tokens, not cookies, so there is nothing for a browser to send on a user's behalf.
//
// The headers fit the scheme (API.md §14): Strict-Transport-Security, and `upgrade-insecure-requests` in
// the docs page's CSP (plugins/swagger.ts), go only on TLS requests. Sent over plain HTTP from a host other
// than localhost they made the browser fetch /docs' own scripts over https, which nothing served: a blank page.
import { createRequire } from 'node:module'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import cors from '@fastify/cors'

// The helmet that @fastify/helmet wraps (the same version, so the same headers). @fastify/helmet runs it
// per request and builds a new helmet middleware (options parsed, every header recomputed) each time; with
// one configuration for the whole API and no nonces, its output never changes, so it is computed once here.
type Helmet = (options: Record<string, unknown>) => (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void
const require = createRequire(import.meta.url)
const helmet = createRequire(require.resolve('@fastify/helmet'))('helmet') as Helmet

/** The headers helmet sets with these options, in the order it sets them. */
export function securityHeaders(options: Record<string, unknown>): Record<string, string> {
  const headers: Record<string, string> = {}
  const res = {
    setHeader(name: string, value: string) { headers[name.toLowerCase()] = value },
    // Helmet removes X-Powered-By, which Fastify never sets.
    removeHeader() {},
  }
  helmet(options)({} as IncomingMessage, res as unknown as ServerResponse, (err) => { if (err) throw err })
  return headers
}

/**
 * Whether the client reached this service over TLS: this server's own (HTTPS, HTTP/2), or, with
 * TRUST_PROXY, a proxy that says so in X-Forwarded-Proto (Fastify's request.protocol reads both).
 */
export function isTlsRequest(request: FastifyRequest): boolean {
  return request.protocol === 'https'
}

/** Helmet's options for this API; `tls: false` leaves out what only a TLS reply may carry (HSTS). */
export function helmetOptions(anyOrigin: boolean, tls = true): Record<string, unknown> {
  return {
    // Swagger UI serves its own CSP (staticCSP); the API itself returns JSON only.
    contentSecurityPolicy: false,
    crossOriginResourcePolicy: { policy: anyOrigin ? 'cross-origin' : 'same-site' },
    ...(!tls && { strictTransportSecurity: false }),
  }
}

export default fp(async (app) => {
  const origins = app.config.CORS_ORIGINS.split(',').map((o) => o.trim()).filter(Boolean)
  const anyOrigin = origins.length === 0 || origins.includes('*')
  await app.register(cors, {
    origin: anyOrigin ? '*' : origins,
    credentials: !anyOrigin,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    allowedHeaders: ['Authorization', 'Content-Type', 'Last-Event-ID'],
    maxAge: 600,
  })
  const overTls = securityHeaders(helmetOptions(anyOrigin, true))
  const overPlainHttp = securityHeaders(helmetOptions(anyOrigin, false))
  // Set in onRequest, after CORS, as @fastify/helmet did: every reply carries them, errors and 404s
  // included, and a preflight that CORS answers itself does not. They are Fastify's reply headers rather
  // than set on the raw response (helmet's way): the app never writes to the raw response, and Node writes
  // a response faster when everything comes in one writeHead.
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(isTlsRequest(request) ? overTls : overPlainHttp)
    done()
  })
}, { name: 'security', dependencies: ['config'] })
