// The replies every route can give because of how it is declared, added to its `response` schema when the
// route is registered, so the OpenAPI document lists them (and the fuzz test holds every route to them)
// without each route repeating the list, and a route added later gets them too:
//
// - 400: the route validates a path parameter, the query string or a body; or it takes a body at all, since
//   a body that is not JSON is refused before any schema runs.
// - 404, 414: the path has a parameter: an unknown or foreign id, or one longer than the router accepts
//   (maxParamLength).
// - 413, 415: the method carries a body (Fastify parses bodies for every method but GET, HEAD and TRACE,
//   whether or not the route declares one): too large, or not JSON.
// - 503, 507: the same methods change stored data, which the database can refuse: its disk is full (507)
//   or failing (503). plugins/errors.ts answers these.
// - 503: the route reads the database (every route behind a token, and the auth group's): it answers 503
//   with Retry-After while the database is away (API.md §14).
// - 429: a rate limiter guards the route (a `config.rateLimit` of @fastify/rate-limit, or a hook marked with
//   `rateLimited` in its onRequest or preHandler list).
// - `security: []` on routes that need no token (system pages, the auth group), so the document says they
//   are public instead of leaving it unsaid. 401, 403 and the bearer requirement come from plugins/auth.ts.
//
// Statuses only the route knows (409, 502, 403 of shared resources) stay in the route's own schema.
import fp from 'fastify-plugin'
import type { RouteOptions } from 'fastify'
import { errorResponses } from '../schemas/common.ts'
import { needsToken } from './auth.ts'

const RATE_LIMITED = Symbol.for('cluster-workflow-orchestrator.rate-limited')
const BODYLESS_METHODS = new Set(['GET', 'HEAD', 'TRACE'])
const AUTH_GROUP = /\/api\/auth(\/|$)/

/** Marks a hook as a rate limiter, so the routes that use it document their 429. */
export function rateLimited<F extends (...args: never[]) => unknown>(hook: F): F {
  return Object.assign(hook, { [RATE_LIMITED]: true })
}

function hasRateLimit(route: RouteOptions): boolean {
  const config = route.config as { rateLimit?: unknown } | undefined
  if (config?.rateLimit !== undefined && config.rateLimit !== false) return true
  const hooks = [route.onRequest, route.preValidation, route.preHandler].flat().filter(Boolean) as unknown as Array<Record<symbol, unknown>>
  return hooks.some((hook) => hook[RATE_LIMITED] === true)
}

/** The statuses a route can answer because of its declaration (not counting 401/403 of plugins/auth.ts). */
export function impliedStatuses(route: RouteOptions): number[] {
  const schema = (route.schema ?? {}) as Record<string, unknown>
  const methods = [route.method].flat().map((m) => m.toUpperCase())
  const takesBody = methods.some((m) => !BODYLESS_METHODS.has(m))
  const hasParams = /[:*]/.test(route.url)
  const validates = ['params', 'querystring', 'body', 'headers'].some((part) => schema[part] !== undefined)
  const codes: number[] = []
  if (validates || takesBody) codes.push(400)
  if (hasParams) codes.push(404, 414)
  if (takesBody) codes.push(413, 415, 503, 507)
  else if (needsToken(route.url) || AUTH_GROUP.test(route.url)) codes.push(503)
  if (hasRateLimit(route)) codes.push(429)
  return codes.sort((a, b) => a - b)
}

export default fp(async (app) => {
  app.addHook('onRoute', (route: RouteOptions) => {
    if (!route.schema || route.schema.hide) return
    const schema = route.schema as Record<string, unknown>
    const response = schema.response as Record<string | number, unknown> | undefined
    const missing = response === undefined ? [] : impliedStatuses(route).filter((code) => !(code in response) && !(String(code) in response))
    route.schema = {
      ...route.schema,
      ...(schema.security === undefined && !needsToken(route.url) && { security: [] }),
      ...(missing.length > 0 && { response: { ...response, ...errorResponses(...missing) } }),
    }
  })
}, { name: 'route-responses', dependencies: ['schemas'] })
