// The one place failures become replies. Every reply is `{error}`; 5xx details go to the log only.
import fp from 'fastify-plugin'
import type { FastifyError } from 'fastify'
import { AppError } from '../src/errors.ts'

const FASTIFY_MESSAGES: Record<string, (err: FastifyError, limit: number) => string> = {
  FST_ERR_CTP_BODY_TOO_LARGE: (_e, limit) => `request body is larger than ${limit} bytes`,
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => 'unsupported content type; send application/json',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => 'request body does not match its content-length',
  FST_ERR_CTP_EMPTY_JSON_BODY: () => 'body must not be empty when content-type is application/json',
  FST_ERR_CTP_INVALID_JSON_BODY: () => 'body is not valid JSON',
  FST_ERR_CTP_INVALID_TYPE: () => 'invalid content type',
  FST_ERR_BAD_URL: () => 'malformed URL',
  FST_ERR_ASYNC_CONSTRAINT: () => 'malformed request',
}

export default fp(async (app) => {
  const bodyLimit = app.config.BODY_LIMIT_BYTES

  app.setErrorHandler((err: FastifyError, request, reply) => {
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
