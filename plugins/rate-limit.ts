// Registered but not global: routes that need a limit (sign-in, refresh, OAuth exchange) opt in with
// `config.rateLimit`, so ordinary API traffic and streams are never throttled by accident.
import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'

export default fp(async (app) => {
  await app.register(rateLimit, {
    global: false,
    max: app.config.RATE_LIMIT_MAX,
    timeWindow: '1 minute',
    errorResponseBuilder: (_req, ctx) => ({ statusCode: 429, error: `too many requests; retry in ${Math.ceil(ctx.ttl / 1000)} s`, message: `too many requests; retry in ${Math.ceil(ctx.ttl / 1000)} s` }),
  })
}, { name: 'rate-limit', dependencies: ['config'] })
