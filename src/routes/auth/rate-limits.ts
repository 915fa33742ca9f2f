// Sign-in rate limits on top of @fastify/rate-limit (plugins/rate-limit.ts): one limiter per client address
// (checked on request, before the body is read) and, for login and register, one per email address (checked
// after validation, so it can read the body). Exceeding either answers 429 {error} with Retry-After.
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { App } from '../../app-types.ts'
import { AppError } from '../../errors.ts'
import { rateLimited } from '../../../plugins/route-responses.ts'

type Hook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>

type Check = ReturnType<App['createRateLimit']>

// Each createRateLimit() call gets a store of its own, so a route served under two roots (/v1/api and the
// KubeOrch UI adapter, src/compat/kubeorch/) would get two budgets: the check is made once per name for
// each app (keyed by the app's rate-limit plugin, which all its encapsulated contexts share) and reused.
const checks = new WeakMap<object, Map<string, Check>>()

function limiter(app: App, name: string, max: number, key: (request: FastifyRequest) => string | undefined): Hook {
  let made = checks.get(app.createRateLimit)
  if (!made) checks.set(app.createRateLimit, made = new Map())
  let check = made.get(name)
  if (!check) {
    check = app.createRateLimit({ max, timeWindow: app.config.AUTH_RATE_LIMIT_WINDOW_MS, keyGenerator: (req) => `${name}:${key(req)}` })
    made.set(name, check)
  }
  // Marked, so every route using a limiter documents its 429 (plugins/route-responses.ts).
  return rateLimited(async (request: FastifyRequest, reply: FastifyReply) => {
    if (key(request) === undefined) return
    const result = await check(request)
    if (result.isAllowed || !result.isExceeded) return
    reply.header('retry-after', String(result.ttlInSeconds))
    throw new AppError(429, `too many requests; retry in ${result.ttlInSeconds} s`)
  })
}

/** Limits per client address, for the route called `name`. */
export function perIp(app: App, name: string): Hook {
  return limiter(app, `${name}:ip`, app.config.AUTH_RATE_LIMIT_PER_IP, (req) => req.ip)
}

/** Limits per email address in the body (login, register), for the route called `name`. */
export function perEmail(app: App, name: string): Hook {
  return limiter(app, `${name}:email`, app.config.AUTH_RATE_LIMIT_PER_EMAIL, (req) => {
    const email = (req.body as { email?: unknown } | undefined)?.email
    return typeof email === 'string' ? email.trim().toLowerCase() : undefined
  })
}

/** Limits per signed-in user (password change), for the route called `name`. */
export function perUser(app: App, name: string): Hook {
  return limiter(app, `${name}:user`, app.config.AUTH_RATE_LIMIT_PER_EMAIL, (req) => req.user?.id)
}
