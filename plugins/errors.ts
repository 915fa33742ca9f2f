// The one place failures become replies. Every reply is `{error}`; 5xx details go to the log only.
// Malformed requests are refused here too, before any route or the auth check sees them, so the answer
// is the same whether or not a route exists: the JSON body parser (src/json-body.ts) and the URL shape.
// (Errors raised while routing or by Node's HTTP parser are answered by src/fastify-options.ts.)
import fp from 'fastify-plugin'
import type { FastifyError } from 'fastify'
import { AppError, DATABASE_RETRY_AFTER_S, DATABASE_UNAVAILABLE, isDatabaseUnavailable, storageFailure } from '../src/errors.ts'
import { useJsonBodyParser } from '../src/json-body.ts'
import { MAX_PATH_SEGMENT } from '../src/fastify-options.ts'

const FASTIFY_MESSAGES: Record<string, (err: FastifyError, limit: number) => string> = {
  FST_ERR_CTP_BODY_TOO_LARGE: (_e, limit) => `request body is larger than ${limit} bytes`,
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => 'unsupported content type; send application/json',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => 'request body does not match its content-length',
  FST_ERR_CTP_INVALID_JSON_BODY: () => 'body is not valid JSON',
  FST_ERR_CTP_INVALID_TYPE: () => 'invalid content type',
  FST_ERR_BAD_URL: () => 'malformed URL: bad percent-encoding',
  FST_ERR_ASYNC_CONSTRAINT: () => 'malformed request',
}

export default fp(async (app) => {
  const bodyLimit = app.config.BODY_LIMIT_BYTES
  useJsonBodyParser(app)

  // The router answers 414 for an over-long parameter of a route that exists; this answers the same for
  // any path, before the auth check, so the status cannot tell which routes exist.
  app.addHook('onRequest', async (request, reply) => {
    const path = request.url.split('?')[0]!
    if (path.split('/').some((segment) => segment.length > MAX_PATH_SEGMENT)) {
      return reply.code(414).send({ error: `URL path segment is longer than ${MAX_PATH_SEGMENT} characters` })
    }
  })

  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (isDatabaseUnavailable(err)) {
      // Not a bug either: the database is away (stopped, restarting, unreachable). Clients may try again.
      request.log.warn({ status: 503, error: (err as Error).name }, 'the database is unavailable')
      return reply.code(503).header('retry-after', String(DATABASE_RETRY_AFTER_S)).send({ error: DATABASE_UNAVAILABLE })
    }
    const refused = storageFailure(err)
    if (refused) {
      // Not a bug: the database could not store the change (and did not). Readiness now checks writes too.
      if (app.hasDecorator('databaseWrites')) app.databaseWrites.failed()
      request.log.warn({ status: refused.statusCode, code: (err as { code?: unknown }).code, error: refused.message }, 'the database refused a write')
      return reply.code(refused.statusCode).send({ error: refused.message })
    }
    if (err instanceof AppError) {
      if (err.statusCode >= 500) request.log.warn({ status: err.statusCode, error: err.message }, 'request failed')
      return reply.code(err.statusCode).send({ error: err.message })
    }
    if (err.validation) {
      return reply.code(400).send({ error: err.message })
    }
    if (err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || (err instanceof SyntaxError && err.statusCode === 400)) {
      return reply.code(400).send({ error: 'body is not valid JSON' })
    }
    const status = typeof err.statusCode === 'number' ? err.statusCode : 500
    if (status >= 400 && status < 500) {
      const describe = err.code ? FASTIFY_MESSAGES[err.code] : undefined
      // A 4xx raised by a plugin (rate limit, multipart, websocket) has a message meant for the client;
      // anything else that is not ours gets a generic text so no internal detail escapes.
      return reply.code(status).send({ error: describe ? describe(err, bodyLimit) : status === 429 ? err.message : (err.message || 'bad request') })
    }
    request.log.error({ err }, 'unhandled error')
    return reply.code(500).send({ error: 'internal server error' })
  })

  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send({ error: `route ${request.method} ${request.url.split('?')[0]} not found` })
  })
}, { name: 'errors', dependencies: ['config'] })
