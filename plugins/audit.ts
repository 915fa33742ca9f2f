// The audit log's request hook (API.md §12). Every state-changing request under /v1/api and the KubeOrch
// adapter's /kubeorch/v1/api (any method but GET, HEAD and OPTIONS) leaves one entry once its response is
// sent: who (the token's user), what (an action named from the route, src/services/lifecycle/audit/actions.ts),
// on what (the path's id), how it ended (status → ok | denied | failed), from where (ip) and the request id.
// Never a body, a query string, a header or a token: the entry is built from the route pattern, the path
// parameters, the status and the authenticated user only.
//
// Sign-ins (`auth.login`, `auth.register`, the OAuth code exchange) carry no token: their actor is the
// account the reply names, or, when refused, the account of the email typed in if there is one (looked up
// by the writer, not the request; an email matching no account is dropped, as it may be a mistyped
// password). The one auth route left out is `POST /auth/refresh` (an "auth read": it renews the caller's
// token and changes nothing stored). A route may rename its action or opt out with `config.audit`.
//
// The writer (AuditRecorder) queues entries in memory and writes them in batches; entries the database was
// away for are held (bounded) and written when it answers again; closing writes what is queued within a bound. The `audit` collection's TTL follows AUDIT_RETENTION_DAYS.
import fp from 'fastify-plugin'
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import { AuditRepository, auditIndexes } from '../src/repositories/audit.ts'
import {
  AuditRecorder, AuditService, TerminalAudit, canonicalKey, nameRoute, outcomeOf, type AuditRouteConfig, type RouteNaming,
} from '../src/services/lifecycle/audit/index.ts'
import { ADAPTER_ROOT, splitRoot } from '../src/services/lifecycle/audit/actions.ts'

/** What a handler knows better than the path: the record's id (a cluster reached by name) and another user it concerns. */
export interface AuditNote { target_id?: string; subject_id?: string }

export interface Audit {
  recorder: AuditRecorder
  service: AuditService
  /** The audit side of a terminal session opened by `request`. */
  terminal(request: FastifyRequest, resourceId: string): TerminalAudit
  /** Adds what the handler learnt to the request's entry. */
  note(request: FastifyRequest, note: AuditNote): void
}

declare module 'fastify' {
  interface FastifyInstance { audit: Audit }
  interface FastifyContextConfig {
    /** Rename the route's audit action, or leave the route out of the audit log (plugins/audit.ts). */
    audit?: AuditRouteConfig
  }
}

const UNRECORDED_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])
/** "Auth reads": auth routes that change nothing stored. */
const AUTH_READS = new Set(['refreshToken'])
/** Sign-ins: no token; the actor comes from the reply or the email typed in. */
const SIGN_INS = new Set(['login', 'register', 'exchangeOAuthCode'])
/** Ids and names are short; anything longer in a path parameter is cut (it was refused anyway). */
const MAX_ID_LENGTH = 256
/** Replies larger than this are not read for a created record's id. */
const MAX_CREATED_REPLY = 1024 * 1024
/** The longest email address (RFC 5321): longer text in a sign-in is no email. */
const MAX_EMAIL = 254
const SECONDS_PER_DAY = 86_400
/** How long closing may spend writing queued entries. */
const CLOSE_BOUND_MS = 2000

interface RouteAudit { naming: RouteNaming; operationId?: string; override?: AuditRouteConfig; skip: boolean }

interface RequestNotes extends AuditNote { actor?: { id: string; email: string } }

const param = (params: unknown, name: string | null): string | null => {
  if (name === null) return null
  const value = (params as Record<string, unknown> | undefined)?.[name]
  return typeof value === 'string' && value !== '' ? value.slice(0, MAX_ID_LENGTH) : null
}

/** `{..."id":"…", "user":{"id","email"}}` of a JSON reply, as far as it is there. */
function replyIds(payload: string): { id?: string; user?: { id: string; email: string } } {
  try {
    const body = JSON.parse(payload) as { id?: unknown; user?: { id?: unknown; email?: unknown } }
    const user = body?.user
    return {
      ...(typeof body?.id === 'string' && { id: body.id.slice(0, MAX_ID_LENGTH) }),
      ...(typeof user?.id === 'string' && typeof user.email === 'string' && { user: { id: user.id, email: user.email } }),
    }
  } catch {
    return {}
  }
}

export default fp(async (app) => {
  const { db, config } = app
  await auditIndexes(db, config.AUDIT_RETENTION_DAYS * SECONDS_PER_DAY)
  const repository = new AuditRepository(db)
  const recorder = new AuditRecorder(repository, app.log, {
    resolveActor: async (email) => {
      const user = await app.usersRepository.findByEmail(email)
      return user && { id: user._id.toHexString(), email: user.email }
    },
    // Entries held while the database was away go out at the driver's first successful heartbeat after it.
    databaseBack: (listener) => {
      app.mongo.on('serverHeartbeatSucceeded', listener)
      return () => { app.mongo.off('serverHeartbeatSucceeded', listener) }
    },
  })
  const notes = new WeakMap<FastifyRequest, RequestNotes>()
  const noteOn = (request: FastifyRequest, note: RequestNotes) => notes.set(request, { ...notes.get(request), ...note })

  // Routes by `METHOD url` as registered, and the canonical routes' operationIds by their unnamed path
  // (the adapter's routes look theirs up there: they are registered after the canonical ones).
  const routes = new Map<string, RouteAudit>()
  const canonical = new Map<string, string>()
  app.addHook('onRoute', (route: RouteOptions) => {
    for (const method of [route.method].flat()) {
      if (UNRECORDED_METHODS.has(method)) continue
      const split = splitRoot(route.url)
      if (!split) continue
      const operationId = (route.schema as { operationId?: string } | undefined)?.operationId
      const override = route.config?.audit
      if (operationId && split.root !== ADAPTER_ROOT) canonical.set(canonicalKey(method, route.url)!, operationId)
      const key = `${method} ${route.url}`
      const naming = nameRoute(method, route.url, operationId, override)
      if (naming) routes.set(key, { naming, operationId, override, skip: override?.skip === true || (operationId !== undefined && AUTH_READS.has(operationId)) })
    }
  })

  // An adapter route without an operationId takes its canonical twin's, once every route is registered.
  app.addHook('onReady', async () => {
    for (const [key, entry] of routes) {
      if (entry.operationId) continue
      const [method, url] = [key.slice(0, key.indexOf(' ')), key.slice(key.indexOf(' ') + 1)]
      const twin = canonical.get(canonicalKey(method, url) ?? '')
      if (!twin) continue
      routes.set(key, { ...entry, naming: nameRoute(method, url, twin, entry.override)!, operationId: twin, skip: entry.skip || AUTH_READS.has(twin) })
    }
  })

  const routeOf = (request: FastifyRequest): RouteAudit | undefined => {
    const url = request.routeOptions.url
    return url === undefined ? undefined : routes.get(`${request.method} ${url}`)
  }

  // Sign-ins name their user in the reply; a create names its new record. Read only for those routes.
  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    if (reply.statusCode >= 300 || typeof payload !== 'string' || payload.length > MAX_CREATED_REPLY) return payload
    const route = routeOf(request)
    if (!route || route.skip) return payload
    const signIn = route.operationId !== undefined && SIGN_INS.has(route.operationId)
    if (!signIn && !(reply.statusCode === 201 && route.naming.target_param === null)) return payload
    const ids = replyIds(payload)
    if (signIn && ids.user) noteOn(request, { actor: ids.user })
    else if (!signIn && ids.id) noteOn(request, { target_id: ids.id })
    return payload
  })

  app.addHook('onResponse', async (request: FastifyRequest, reply: FastifyReply) => {
    const route = routeOf(request)
    if (!route || route.skip) return
    const { naming, operationId } = route
    const note = notes.get(request)
    const actor = note?.actor ?? (request.user ? { id: request.user.id, email: request.user.email } : null)
    let hint: string | undefined
    if (!actor && operationId !== undefined && SIGN_INS.has(operationId)) {
      const email = (request.body as { email?: unknown } | undefined)?.email
      if (typeof email === 'string' && email.length <= MAX_EMAIL && email.includes('@')) hint = email.trim().toLowerCase()
    }
    recorder.record({
      actor_id: actor?.id ?? null, actor_email: actor?.email ?? null,
      action: naming.action, target_type: naming.target_type,
      target_id: note?.target_id ?? param(request.params, naming.target_param),
      subject_id: note?.subject_id ?? param(request.params, naming.subject_param),
      outcome: outcomeOf(reply.statusCode), status: reply.statusCode, ip: request.ip ?? null, request_id: String(request.id),
    }, hint)
  })

  const audit: Audit = {
    recorder,
    service: new AuditService(repository),
    terminal: (request, resourceId) => new TerminalAudit(recorder, {
      actor_id: request.user?.id ?? null, actor_email: request.user?.email ?? null, resource_id: resourceId.slice(0, MAX_ID_LENGTH),
      ip: request.ip ?? null, request_id: String(request.id),
    }),
    note: (request, note) => noteOn(request, note),
  }
  app.decorate('audit', audit)
  // After the terminal sessions ended (the WebSocket plugin's preClose), before the database closes.
  app.addHook('onClose', async () => { await recorder.close(Math.min(CLOSE_BOUND_MS, config.SHUTDOWN_GRACE_MS)) })
}, { name: 'audit', dependencies: ['config', 'database', 'auth'] })
