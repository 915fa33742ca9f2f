// The auth group: the only /v1 routes that need no token (plugins/auth.ts). Register, login, refresh, the
// list of sign-in methods, and the OAuth2/OIDC flow (authorize → provider → callback → exchange).
import { Type } from 'typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { App } from '../../app-types.ts'
import { errorResponses } from '../../../schemas/common.ts'
import {
  AuthorizeQuery, CallbackQuery, ExchangeBody, LoginBody, MethodsResponse, ProviderParams, RedirectResponse, RegisterBody,
  RegisterResponse, TokenResponse,
} from '../../../schemas/auth.ts'
import { Unauthorized } from '../../errors.ts'
import { perEmail, perIp } from './rate-limits.ts'
import { bearerToken } from '../../../plugins/auth.ts'

const NoQuery = Type.Object({}, { additionalProperties: false })

// The two browser-facing OAuth routes redirect (302). A client that asks for JSON gets 200 with the URL
// instead, e.g. a web client that wants to start the flow from script, or a command-line client.
const redirectReplies = (to: string) => ({
  200: { ...RedirectResponse, description: `with \`Accept: application/json\`: where the browser would be sent (${to})` },
  302: { type: 'null', description: `redirect to ${to}` },
})

/** preValidation: the email trimmed, so `format: email` judges the address itself (API.md §2). */
export async function trimEmail(request: FastifyRequest): Promise<void> {
  const body = request.body as { email?: unknown } | null
  if (body && typeof body === 'object' && typeof body.email === 'string') body.email = body.email.trim()
}

function wantsJson(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? ''
  return /\bapplication\/json\b/i.test(accept) && !/\btext\/html\b/i.test(accept)
}

/** A 302 to `url`, or 200 `{redirect_url}` for a client that asks for JSON. */
export function redirect(request: FastifyRequest, reply: FastifyReply, url: string) {
  reply.header('cache-control', 'no-store')
  if (wantsJson(request)) return reply.code(200).send({ redirect_url: url })
  return reply.redirect(url, 302)
}

/** The bearer token of the request (expired or not), or 401. */
export function bearer(request: FastifyRequest): string {
  const token = bearerToken(request)
  if (!token) throw new Unauthorized('authentication required')
  return token
}

/** GET /auth/methods: email and password sign-in, whether registering needs an invite, and the providers. */
export async function authMethods(app: App) {
  const open = await app.users.signupOpen()
  return { builtin: { enabled: true, signup_enabled: open, invite_required: !open }, providers: app.oauthSignIn.list() }
}

export default async function authRoutes(app: App) {

  app.post('/register', {
    onRequest: perIp(app, 'register'),
    // Before validation, so the declared `format: email` is checked on the address itself (API.md §2:
    // emails are trimmed), not refused for a space around it.
    preValidation: trimEmail,
    preHandler: perEmail(app, 'register'),
    schema: {
      tags: ['auth'], operationId: 'register', security: [],
      summary: 'register a user',
      description: 'The first user becomes admin. After that an `invite_code` is needed unless OPEN_SIGNUP is on (403 without a valid one).',
      body: RegisterBody,
      response: { 201: RegisterResponse, ...errorResponses(400, 403, 409, 429) },
    },
  }, async (request, reply) => {
    const result = await app.users.register(request.body)
    return reply.code(201).header('cache-control', 'no-store').send(result)
  })

  app.post('/login', {
    onRequest: perIp(app, 'login'),
    preHandler: perEmail(app, 'login'),
    schema: {
      tags: ['auth'], operationId: 'login', security: [],
      summary: 'log in with email and password',
      description: 'Returns a token valid for 24 hours. A wrong email or password both answer 401 "invalid email or password".',
      body: LoginBody,
      response: { 200: TokenResponse, ...errorResponses(400, 401, 429) },
    },
  }, async (request, reply) => {
    reply.header('cache-control', 'no-store')
    return app.users.login(request.body)
  })

  app.post('/refresh', {
    onRequest: perIp(app, 'refresh'),
    schema: {
      tags: ['auth'], operationId: 'refreshToken', security: [{ bearerAuth: [] }],
      summary: 'refresh a token (an expired one too)',
      description: 'Send the current token as `Authorization: Bearer <token>`, expired or not. The new token keeps the original sign-in time (`auth_time`); refreshing is refused (401) once that is more than 7 days ago.',
      response: { 200: TokenResponse, ...errorResponses(401, 429) },
    },
  }, async (request, reply) => {
    reply.header('cache-control', 'no-store')
    return app.users.refresh(bearer(request))
  })

  app.get('/methods', {
    schema: {
      tags: ['auth'], operationId: 'listAuthMethods', security: [],
      summary: 'list available sign-in methods',
      querystring: NoQuery,
      response: { 200: MethodsResponse, ...errorResponses(400) },
    },
  }, async () => authMethods(app))

  app.get('/oauth/:provider/authorize', {
    onRequest: perIp(app, 'oauth-authorize'),
    schema: {
      tags: ['auth'], operationId: 'startOAuthSignIn', security: [],
      summary: 'start an OAuth sign-in',
      description: 'Redirects to the provider (state and PKCE kept server-side for 10 minutes). `invite_code` is kept with the state and used if the sign-in creates an account.',
      params: ProviderParams,
      querystring: AuthorizeQuery,
      response: { ...redirectReplies("the provider's authorization page"), ...errorResponses(400, 404, 429) },
    },
  }, async (request, reply) => {
    const url = await app.oauthSignIn.authorize(request.params.provider, request.query.invite_code)
    return redirect(request, reply, url)
  })

  app.get('/oauth/:provider/callback', {
    onRequest: perIp(app, 'oauth-callback'),
    schema: {
      tags: ['auth'], operationId: 'finishOAuthSignIn', security: [],
      summary: 'OAuth callback (called by the provider through the browser)',
      description: 'Redirects to `<FRONTEND_URL>/auth/callback?code=<one-time code, 30 s>` on success, or `<FRONTEND_URL>/login?error=<message>` on any failure.',
      params: ProviderParams,
      querystring: CallbackQuery,
      response: {
        ...redirectReplies('the web client'), ...errorResponses(404, 429),
        // Node's HTTP parser answers before any route runs when the request line and headers pass 16 KiB
        // (a provider appending long parameters can do it); the body is the usual {error}.
        431: Type.Ref('ErrorResponse', { description: 'the callback URL and headers together exceed 16 KiB (request line and headers too large)' }),
      },
    },
  }, async (request, reply) => {
    const url = await app.oauthSignIn.callback(request.params.provider, request.query)
    return redirect(request, reply, url)
  })

  app.post('/oauth/exchange', {
    onRequest: perIp(app, 'oauth-exchange'),
    schema: {
      tags: ['auth'], operationId: 'exchangeOAuthCode', security: [],
      summary: 'exchange the one-time OAuth code for a token',
      description: 'The code is single use and lives 30 seconds; an unknown, used or expired code answers 401.',
      body: ExchangeBody,
      response: { 200: TokenResponse, ...errorResponses(400, 401, 429) },
    },
  }, async (request, reply) => {
    reply.header('cache-control', 'no-store')
    return app.oauthSignIn.exchange(request.body.code)
  })
}
