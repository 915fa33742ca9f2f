import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyBaseLogger, FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { symbols as pinoSymbols, type Bindings, type ChildLoggerOptions, type DestinationStream } from 'pino'
import type { Config } from './config.ts'
import type { ServerTls } from './tls/server-tls.ts'
import { REQUEST_TIMEOUT_MESSAGE, type StallLimits } from './stalled-clients.ts'
import { loggerOptions, RequestLogController } from './logger.ts'
import { formatValidationErrors } from './validation.ts'
import { buildReplySerializer } from './reply-serializer.ts'

export interface BuildOptions {
  /** Where log lines go (tests collect them); default stdout. */
  logStream?: DestinationStream
}

/** Longest path segment (so longest path parameter) a request may carry; longer ones are 414. */
export const MAX_PATH_SEGMENT = 256

// Errors raised while routing, before any hook runs. They answer `{error}` and never echo the URL.
const ROUTING_ERRORS: Record<string, [number, string]> = {
  FST_ERR_BAD_URL: [400, 'malformed URL: bad percent-encoding'],
  FST_ERR_MAX_PARAM_LENGTH: [414, `URL path segment is longer than ${MAX_PATH_SEGMENT} characters`],
}

function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply) {
  const [status, message] = ROUTING_ERRORS[error.code] ?? [400, 'malformed request']
  reply.code(status).send({ error: message })
}

// Errors of Node's HTTP parser (no request object exists yet): header overflow, timeouts, garbage.
const CLIENT_ERRORS: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'request headers are too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, REQUEST_TIMEOUT_MESSAGE],
}

function clientErrorHandler(this: { log: { debug(o: object, m: string): void } }, error: NodeJS.ErrnoException, socket: Socket) {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const [status, message] = CLIENT_ERRORS[error.code ?? ''] ?? [400, 'malformed request']
  this.log.debug({ code: error.code, status }, 'client error')
  // A response already under way on this socket cannot be followed by another one.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true
  if (socket.writable && !inFlight) {
    const body = JSON.stringify({ error: message })
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
  }
  socket.destroy()
}

// Fastify gives every request a child logger bound to its id. pino passes a child's bindings through the
// redaction of wildcard paths (about 5 µs a request with ours); a request id (Fastify's own counter) is
// no secret, so it is appended to the child's serialized bindings directly. Anything else takes pino's path.
function requestChildLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  const keys = Object.keys(bindings)
  const value = keys.length === 1 ? bindings[keys[0]] : undefined
  if (typeof value !== 'string' || !/^[\w.-]{1,64}$/.test(value)) return logger.child(bindings, options)
  const child = logger.child({}, options) as FastifyBaseLogger & Record<symbol, string>
  child[pinoSymbols.chindingsSym] += `,${JSON.stringify(keys[0])}:${JSON.stringify(value)}`
  return child
}

/** The deadlines src/stalled-clients.ts enforces, from the same settings as Node's own timeouts. */
export function stallLimits(config: Config): StallLimits {
  return { requestTimeoutMs: config.REQUEST_TIMEOUT_MS, headersTimeoutMs: config.HEADERS_TIMEOUT_MS, keepAliveTimeoutMs: config.KEEP_ALIVE_TIMEOUT_MS }
}

/** Node's own HTTP/1.1 timeouts from the configuration. */
function httpTimeouts(config: Config) {
  // Node refuses a headers timeout above the request timeout; it checks both only every
  // connectionsCheckingInterval (30 s by default), which would let a stalled client stay that much longer.
  // Node's check is not the only one: src/stalled-clients.ts arms a timer per connection and request.
  const headersTimeout = Math.min(config.HEADERS_TIMEOUT_MS, config.REQUEST_TIMEOUT_MS)
  const connectionsCheckingInterval = Math.min(1000, Math.max(25, Math.floor(headersTimeout / 4)))
  return { requestTimeout: config.REQUEST_TIMEOUT_MS, headersTimeout, keepAliveTimeout: config.KEEP_ALIVE_TIMEOUT_MS, connectionsCheckingInterval }
}

/** The server options every instance uses (also by tests that exercise one plugin on its own). */
export function fastifyOptions(config: Config, options: BuildOptions = {}) {
  const logger = loggerOptions(config)
  return {
    // Level `silent` means no logger at all: Fastify then skips the per-request child logger (and its
    // redaction set-up) that a silent pino would still build.
    logger: config.LOG_LEVEL === 'silent' ? false : options.logStream ? { ...logger, stream: options.logStream } : logger,
    logController: new RequestLogController(),
    // Only with a logger: without one Fastify skips child loggers altogether, unless given a factory.
    ...(config.LOG_LEVEL !== 'silent' && { childLoggerFactory: requestChildLogger }),
    bodyLimit: config.BODY_LIMIT_BYTES,
    trustProxy: config.TRUST_PROXY,
    return503OnClosing: true,
    // Start-up includes opening the database; a busy machine must not turn that into a crash.
    pluginTimeout: 60_000,
    forceCloseConnections: 'idle' as const,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PATH_SEGMENT },
    requestTimeout: config.REQUEST_TIMEOUT_MS,
    keepAliveTimeout: config.KEEP_ALIVE_TIMEOUT_MS,
    http: httpTimeouts(config),
    schemaErrorFormatter: formatValidationErrors,
    // Fastify's response serializers, remembering their output for the read caches' frozen snapshots.
    schemaController: { compilersFactory: { buildSerializer: buildReplySerializer() } },
    frameworkErrors,
    clientErrorHandler,
  }
}

/**
 * HTTPS with HTTP/2, and HTTP/1.1 for clients that do not offer h2 in ALPN (curl --http1.1, WebSocket
 * upgrades, older tools), on the same port (API.md §14). Node's secure HTTP/2 server takes no `http`
 * options: `http1Limits` applies the same timeouts to its HTTP/1.1 connections once it exists.
 */
export function tlsServerOptions(config: Config, tls: ServerTls) {
  return {
    http2: true as const,
    // A TLS handshake is part of what a client must send before its headers: held to the same bound.
    https: { allowHTTP1: true, cert: tls.cert, key: tls.key, handshakeTimeout: Math.min(config.HEADERS_TIMEOUT_MS, config.REQUEST_TIMEOUT_MS) },
  }
}

/** The HTTP/1.1 timeouts of `fastifyOptions(config).http`, set on a server Fastify made without them (the secure HTTP/2 one). */
export function http1Limits(server: object, config: Config): void {
  Object.assign(server, httpTimeouts(config))
}
