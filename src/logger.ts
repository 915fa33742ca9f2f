// Logger options shared by the app and the tools. Secrets must never reach a log line, so redaction covers
// headers, bodies and the query strings that may carry a token (the terminal WebSocket) or an OAuth code.
import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify'
import type { DestinationStream, Logger, LoggerOptions } from 'pino'
import pretty from 'pino-pretty'
import type { Config } from './config.ts'

const SECRET_KEYS = ['password', 'current_password', 'new_password', 'token', 'refresh_token', 'id_token', 'access_token',
  'credentials', 'secret', 'client_secret', 'kubeconfig', 'code', 'state', 'invite_code']

export const redactPaths = [
  'req.headers.authorization', 'req.headers.cookie', 'req.headers["set-cookie"]', 'res.headers["set-cookie"]',
  ...SECRET_KEYS.flatMap((k) => [k, `*.${k}`, `*.*.${k}`]),
]

const SECRET_QUERY = new RegExp(`([?&](?:${SECRET_KEYS.join('|')})=)[^&#]*`, 'gi')

/** Replaces the values of secret-bearing query parameters in a URL with a marker. */
export function redactUrl(url: string): string {
  return url.replace(SECRET_QUERY, '$1[REDACTED]')
}

// Credentials that can ride inside an error's text: user:password in a URI, and bearer tokens.
const URI_CREDENTIALS = /([a-z][a-z0-9+.-]*:\/\/)[^\s/@:]+(:[^\s/@]*)?@/gi
const BEARER = /(bearer\s+)[A-Za-z0-9._~+/=-]+/gi

/** Scrubs credentials out of free text (error messages, stacks) before it is logged. */
export function redactText(text: string): string {
  return redactUrl(text.replace(URI_CREDENTIALS, '$1[REDACTED]@').replace(BEARER, '$1[REDACTED]'))
}

function serializeError(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { message: redactText(String(err)) }
  const code = (err as { code?: unknown }).code
  return { type: err.name, message: redactText(err.message), ...(code !== undefined && { code }), stack: err.stack && redactText(err.stack) }
}

export function loggerOptions(config: Pick<Config, 'LOG_LEVEL'>): LoggerOptions {
  return {
    level: config.LOG_LEVEL,
    redact: { paths: redactPaths, censor: '[REDACTED]' },
    serializers: {
      req: (req: { method: string; url: string; ip?: string; id?: string }) => ({ id: req.id, method: req.method, url: redactUrl(req.url), ip: req.ip }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      err: serializeError,
    },
  }
}

/** Where the server logs: readable lines on a terminal; JSON, one object per line, for anything else (a
 *  pipe, a file, a log collector). Undefined means pino's default, JSON on stdout. */
export function logDestination(output: NodeJS.WritableStream & { isTTY?: boolean } = process.stdout): DestinationStream | undefined {
  if (!output.isTTY) return undefined
  // Synchronous, so the last lines before an exit are not lost. fd 1 rather than process.stdout itself,
  // which the stream must not end.
  return pretty({ destination: output === process.stdout ? 1 : output, colorize: true, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' })
}

// The access line is built only from the serializers above: request id, method, URL (secret query values
// replaced by redactUrl), client address and status. None of those keys is a redaction path, so the
// path-based redaction pass (tens of µs a line, most of a cheap request's log cost) cannot change it and is
// skipped for this one line. Everything else, error lines of requests included, still goes through it.
const accessLoggers = new WeakMap<FastifyBaseLogger, FastifyBaseLogger>()
function accessLogger(root: FastifyBaseLogger): FastifyBaseLogger {
  let log = accessLoggers.get(root)
  if (!log) accessLoggers.set(root, log = root.child({}, { redact: { paths: [] } } as never))
  return log
}

/** One line per request, written when it completes (Fastify's default is two: one on arrival, one at the
 *  end), carrying what both had: request id, method, redacted URL, client address, status and time. */
export class RequestLogController extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) {
      reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored')
      return
    }
    // The request's own logger decides (a route may have its own level); the access logger writes.
    if ((reply.log as Partial<Logger>).isLevelEnabled?.('info')) accessLogger(request.server.log).info({ reqId: request.id, req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed')
  }
}
