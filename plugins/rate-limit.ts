// Registered but not global: routes that need a limit (sign-in, refresh, OAuth exchange) opt in with
// `config.rateLimit`, so ordinary API traffic and streams are never throttled by accident.
import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'
import { isSharedMode } from '../src/replicas/identity.ts'
import { sharedRateLimitStore } from '../src/replicas/rate-limit-store.ts'

export default fp(async (app) => {
  // Shared mode: the counters are the database's, so N replicas do not give a client N budgets (the database
  // plugin registers after this one; the store reads app.db on the first limited request).
  const shared = isSharedMode(app.config.REPLICA_MODE, app.config.MONGODB_URI !== undefined)
  await app.register(rateLimit, {
    global: false,
    ...(shared && { store: sharedRateLimitStore(() => app.db) }),
    max: app.config.RATE_LIMIT_MAX,
    timeWindow: '1 minute',
    errorResponseBuilder: (_req, ctx) => ({ statusCode: 429, error: `too many requests; retry in ${Math.ceil(ctx.ttl / 1000)} s`, message: `too many requests; retry in ${Math.ceil(ctx.ttl / 1000)} s` }),
  })
}, { name: 'rate-limit', dependencies: ['config'] })
