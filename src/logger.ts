// Logger options shared by the app and the tools. Secrets must never reach a log line, so redaction covers
// headers, bodies and the query strings that may carry a token (the terminal WebSocket) or an OAuth code.
import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify'
import type { DestinationStream, Logger, LoggerOptions } from 'pino'
import pretty from 'pino-pretty'
import type { Config } from './config.ts'
import { redactUrl, serializeError, SECRET_KEYS } from './log-redaction.ts'

export { redactText, redactUrl, serializeError, errorForLog } from './log-redaction.ts'

export const redactPaths = [
  'req.headers.authorization', 'req.headers.cookie', 'req.headers["set-cookie"]', 'res.headers["set-cookie"]',
  ...SECRET_KEYS.flatMap((k) => [k, `*.${k}`, `*.*.${k}`]),
]

// `code` is a secret key (an OAuth code), and `*.code` also matches an error's code (`err.code`; the
// redaction does not say which parent a wildcard matched). A value shaped like an error code is kept: Node's
// ERR_* codes, system error names (ECONNREFUSED, EAI_AGAIN: letters only, short) and small integers (HTTP
// statuses, database codes). An OAuth code is long, random, mixed case and digits: never one of those.
const ERROR_CODE = /^(?:ERR_[A-Z_]{3,60}|E[A-Z]{2,14}|EAI_[A-Z]{3,12})$/
const censor = (value: unknown): unknown =>
  (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value < 100_000) || (typeof value === 'string' && ERROR_CODE.test(value)) ? value : '[REDACTED]'

export function loggerOptions(config: Pick<Config, 'LOG_LEVEL'>): LoggerOptions {
  return {
    level: config.LOG_LEVEL,
    redact: { paths: redactPaths, censor },
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
