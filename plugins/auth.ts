// Authentication and authorization for the whole API.
//
// - Every route under /v1 (and under the KubeOrch UI adapter's /kubeorch/v1, src/compat/kubeorch/) except the
//   auth group (<root>/api/auth/*) needs `Authorization: Bearer <jwt>`: an
//   onRequest hook decides by the matched route's path, so a new route group is protected without anyone
//   remembering to. Unknown paths under /v1 answer 401 without a valid token too (and 404 with one), so the
//   route table cannot be probed anonymously.
// - Routes under /v1/api/admin and /v1/api/settings need the admin role (403 otherwise); any other route can
//   ask for it with `config: { requireAdmin: true }` or the `app.requireAdmin` preHandler.
// - The token comes from the Authorization header only. A route that cannot send headers (the terminal
//   WebSocket) opts in to `?token=` with `config: { tokenInQuery: true }`.
// - `request.user` is `{id, role, email}` as stored now (looked up per request, cached AUTH_USER_CACHE_MS),
//   so a deleted user's token stops working and a role change takes effect.
// - The OpenAPI document follows: protected routes get `security: bearerAuth` and their 401 (and 403) replies.
import fp from 'fastify-plugin'
import jwt from '@fastify/jwt'
import oauth2, { type OAuth2Namespace } from '@fastify/oauth2'
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify'
import { Forbidden, Unauthorized } from '../src/errors.ts'
import { errorResponses } from '../schemas/common.ts'
import { resolveJwtSecret } from '../src/services/jwt-secret.ts'
import { parseProviders, type ProviderConfig } from '../src/services/auth-config.ts'
import { TokenService } from '../src/services/tokens.ts'
import { InviteService } from '../src/services/invites.ts'
import { UserService, type AuthUser } from '../src/services/users.ts'
import { OAuthService, callbackUrl } from '../src/services/oauth.ts'
import { SignInProvider, resolveEndpoints, type OAuthClient, type ProviderEndpoints } from '../src/services/oauth-providers.ts'
import { UsersRepository } from '../src/repositories/users.ts'
import { SettingsRepository } from '../src/repositories/settings.ts'
import { OAuthStatesRepository } from '../src/repositories/oauth-states.ts'
import { OAuthCodesRepository } from '../src/repositories/oauth-codes.ts'

declare module '@fastify/jwt' {
  interface FastifyJWT { user: AuthUser }
}

declare module 'fastify' {
  interface FastifyInstance {
    users: UserService
    usersRepository: UsersRepository
    authTokens: TokenService
    invites: InviteService
    oauthSignIn: OAuthService
    /** preHandler: 403 unless the caller is an admin. */
    requireAdmin: (request: FastifyRequest) => Promise<void>
    /** Every route registered after this plugin (method, url): what the route-table tests walk. */
    routeInventory: Array<{ method: string; url: string }>
  }
  interface FastifyContextConfig {
    /** Require the admin role (automatic under /v1/api/admin and /v1/api/settings). */
    requireAdmin?: boolean
    /** Accept the token in the `token` query parameter (WebSocket routes only: browsers cannot set headers there). */
    tokenInQuery?: boolean
  }
}

// The canonical API and the KubeOrch UI adapter's copy of it (API.md §10): the same rules under both roots.
const API_ROOTS = ['/v1', '/kubeorch/v1']

const under = (path: string, prefix: string) => path === prefix || path.startsWith(prefix + '/')
const apiRoot = (path: string) => API_ROOTS.find((root) => under(path, root))

/** Whether a path (a route pattern, or the raw path when nothing matched) needs a token. */
export function needsToken(path: string): boolean {
  const root = apiRoot(path)
  return root !== undefined && !under(path, `${root}/api/auth`)
}

function needsAdmin(routeUrl: string | undefined, config: { requireAdmin?: boolean } | undefined): boolean {
  if (config?.requireAdmin === true) return true
  const root = routeUrl === undefined ? undefined : apiRoot(routeUrl)
  return root !== undefined && [`${root}/api/admin`, `${root}/api/settings`].some((g) => under(routeUrl!, g))
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization
  if (typeof header !== 'string') return undefined
  const match = /^Bearer[ \t]+([A-Za-z0-9._~+/=-]+)[ \t]*$/i.exec(header)
  return match?.[1]
}

function splitEndpoint(url: string): { host: string; path: string } {
  const u = new URL(url)
  return { host: `${u.protocol}//${u.host}`, path: `${u.pathname}${u.search}` }
}

/**
 * The token-endpoint client for one provider, configured by @fastify/oauth2 (endpoints, client credentials,
 * the token request). Its own authorize/callback helpers keep the state and the PKCE verifier in cookies;
 * here both must live in MongoDB (single use, bound to the provider, TTL), next to the OIDC nonce and the
 * invite code, and OIDC discovery must also yield the issuer and JWKS for ID-token checks, which the plugin
 * does not expose. So the plugin is registered (in its own encapsulated context, so provider names cannot
 * collide with app decorators) and only its configured client is used: `authorizeURL` and `getToken`.
 */
async function oauthClient(app: FastifyInstance, p: ProviderConfig, endpoints: ProviderEndpoints, callbackUri: string): Promise<OAuthClient> {
  let client: OAuthClient | undefined
  await app.register(async (scope) => {
    const authorize = splitEndpoint(endpoints.authorizeUrl)
    const token = splitEndpoint(endpoints.tokenUrl)
    const decoration = `oauth2_${p.name.replace(/-/g, '_')}`
    await scope.register(oauth2, {
      name: decoration,
      scope: [],
      credentials: {
        client: { id: p.client_id, secret: p.client_secret },
        auth: { authorizeHost: authorize.host, authorizePath: authorize.path, tokenHost: token.host, tokenPath: token.path },
        // GitHub documents the client credentials in the body; OIDC providers take HTTP Basic.
        options: { authorizationMethod: p.type === 'github' ? 'body' : 'header' },
        http: { timeout: 10_000 } as never,
      },
      callbackUri,
      pkce: 'S256',
    })
    client = (scope as unknown as Record<string, OAuth2Namespace & { oauth2: OAuthClient }>)[decoration].oauth2
  })
  return client!
}

export default fp(async (app) => {
  const { config } = app
  const now = () => new Date()

  const secret = await resolveJwtSecret(config, app.log)
  await app.register(jwt, {
    secret,
    sign: { algorithm: 'HS256', iss: config.JWT_ISSUER, aud: config.JWT_AUDIENCE },
    verify: {
      algorithms: ['HS256'],
      allowedIss: config.JWT_ISSUER,
      allowedAud: config.JWT_AUDIENCE,
      requiredClaims: ['sub', 'iat', 'exp', 'auth_time', 'iss', 'aud'],
      cache: true,
    },
  })

  const usersRepository = new UsersRepository(app.db, now)
  const settings = new SettingsRepository(app.db)
  const tokens = new TokenService({
    sign: (payload) => app.jwt.sign(payload),
    verify: (token) => app.jwt.verify(token),
    verifyIgnoringExpiry: (token) => app.jwt.verify(token, { ignoreExpiration: true, cache: false }),
  }, now)
  const invites = new InviteService(settings, now)
  const users = new UserService({ users: usersRepository, settings, invites, tokens, openSignup: config.OPEN_SIGNUP, cacheMs: config.AUTH_USER_CACHE_MS, now })

  const providers: SignInProvider[] = []
  for (const p of parseProviders(config.OAUTH_PROVIDERS)) {
    let endpoints: ProviderEndpoints
    try {
      endpoints = await resolveEndpoints(p)
    } catch (err) {
      // One unreachable issuer must not keep the service (and password sign-in) down: the provider is left
      // out until the next start, loudly.
      app.log.error({ provider: p.name, error: (err as Error).message }, 'OAuth provider discovery failed; the provider is disabled until restart')
      continue
    }
    const signIn = new SignInProvider(p, endpoints, await oauthClient(app, p, endpoints, callbackUrl(config.PUBLIC_URL, p.name)))
    providers.push(signIn)
  }
  const oauth = new OAuthService({
    providers, states: new OAuthStatesRepository(app.db), codes: new OAuthCodesRepository(app.db), usersRepo: usersRepository, users,
    publicUrl: config.PUBLIC_URL, frontendUrl: config.FRONTEND_URL, log: app.log, now,
  })

  app.decorate('users', users)
  app.decorate('usersRepository', usersRepository)
  app.decorate('authTokens', tokens)
  app.decorate('invites', invites)
  app.decorate('oauthSignIn', oauth)
  app.decorate('requireAdmin', async (request: FastifyRequest) => {
    if (!request.user) throw new Unauthorized('authentication required')
    if (request.user.role !== 'admin') throw new Forbidden('admin role required')
  })
  const inventory: Array<{ method: string; url: string }> = []
  app.decorate('routeInventory', inventory)

  app.addHook('onRoute', (route: RouteOptions) => {
    for (const method of [route.method].flat()) inventory.push({ method, url: route.url })
    if (!needsToken(route.url) || !route.schema || route.schema.hide) return
    const response = (route.schema.response ?? {}) as Record<string | number, unknown>
    const extra: Record<number, unknown> = {}
    if (!(401 in response)) Object.assign(extra, errorResponses(401))
    if (needsAdmin(route.url, route.config) && !(403 in response)) Object.assign(extra, errorResponses(403))
    const schema = route.schema as Record<string, unknown>
    route.schema = {
      ...route.schema,
      ...(schema.security === undefined && { security: [{ bearerAuth: [] }] }),
      ...(route.schema.response !== undefined && Object.keys(extra).length > 0 && { response: { ...response, ...extra } }),
    }
  })

  app.addHook('onRequest', async (request) => {
    const routeUrl = request.routeOptions.url
    const path = routeUrl ?? request.url.split('?')[0]
    if (!needsToken(path)) return
    let token = bearerToken(request)
    if (token === undefined && request.routeOptions.config?.tokenInQuery === true) {
      const fromQuery = (request.query as Record<string, unknown> | undefined)?.token
      if (typeof fromQuery === 'string' && fromQuery !== '') token = fromQuery
    }
    if (token === undefined) throw new Unauthorized(request.headers.authorization ? 'malformed Authorization header; expected "Bearer <token>"' : 'authentication required')
    request.user = await users.authenticate(token)
    if (needsAdmin(routeUrl, request.routeOptions.config) && request.user.role !== 'admin') throw new Forbidden('admin role required')
  })
}, { name: 'auth', dependencies: ['config', 'database'] })
