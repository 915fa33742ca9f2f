// The auth group in the UI's dialect (CONTRACT.md §1 "OAuth", §2.1): the same services, schemas and rate
// limiters (by name, so one budget serves both roots) as src/routes/auth/. What differs: register takes
// `confirmPassword` and `inviteCode`; every reply's user carries camelCase aliases (`avatarUrl`, `createdAt`,
// `authProvider`), which the UI stores as its session user; /auth/methods says `signupEnabled` and
// `displayName`.
import { Type } from 'typebox'
import type { FastifyRequest } from 'fastify'
import type { App } from '../../../app-types.ts'
import type { UserRecord } from '../../../../schemas/user.ts'
import { AuthorizeQuery, ExchangeBody, LoginBody, ProviderParams, RegisterBody } from '../../../../schemas/auth.ts'
import { BadRequest } from '../../../errors.ts'
import { perEmail, perIp } from '../../../routes/auth/rate-limits.ts'
import { authMethods, bearer, redirect, trimEmail } from '../../../routes/auth/index.ts'
import { canonicalBody, canonicalQuery, withCamelAliases } from '../translate.ts'

const NoQuery = Type.Object({}, { additionalProperties: false })

/** The user as the UI keeps it in its session: ours, plus `avatarUrl` (null when none), `createdAt`, `authProvider`… */
export function uiUser(user: UserRecord) {
  return withCamelAliases(user)
}

const withUiUser = <T extends { user: UserRecord }>(reply: T) => ({ ...reply, user: uiUser(reply.user) })

/**
 * The sign-up form sends the password twice. A mismatch is refused here (the UI checks it too, but a request
 * is not a form); the copy is then dropped, and the canonical schema refuses anything else it does not know.
 */
async function checkConfirmPassword(request: FastifyRequest): Promise<void> {
  const body = request.body as Record<string, unknown> | null
  if (!body || typeof body !== 'object' || !('confirmPassword' in body)) return
  if (typeof body.confirmPassword !== 'string') throw new BadRequest('body/confirmPassword must be a string')
  if (typeof body.password === 'string' && body.confirmPassword !== body.password) throw new BadRequest('confirmPassword does not match password')
}

export default async function authRoutes(app: App) {
  app.post('/auth/register', {
    onRequest: perIp(app, 'register'),
    preValidation: [checkConfirmPassword, canonicalBody({ inviteCode: 'invite_code' }, ['confirmPassword']), trimEmail],
    preHandler: perEmail(app, 'register'),
    schema: { hide: true, body: RegisterBody },
  }, async (request, reply) => {
    const result = await app.users.register(request.body)
    // The UI goes on to /login only on 201 exactly (CONTRACT.md §0 #6).
    return reply.code(201).header('cache-control', 'no-store').send(withUiUser(result))
  })

  app.post('/auth/login', {
    onRequest: perIp(app, 'login'),
    preHandler: perEmail(app, 'login'),
    schema: { hide: true, body: LoginBody },
  }, async (request, reply) => {
    reply.header('cache-control', 'no-store')
    return withUiUser(await app.users.login(request.body))
  })

  // The UI sends `{}` with the old token as bearer (CONTRACT.md §1 "Refresh"); the body means nothing.
  app.post('/auth/refresh', {
    onRequest: perIp(app, 'refresh'),
    schema: { hide: true },
  }, async (request, reply) => {
    reply.header('cache-control', 'no-store')
    return withUiUser(await app.users.refresh(bearer(request)))
  })

  app.get('/auth/methods', {
    schema: { hide: true, querystring: NoQuery },
  }, async () => {
    const { builtin, providers } = await authMethods(app)
    return {
      builtin: {
        ...withCamelAliases(builtin),
        // The UI's `signupEnabled` means "the sign-up form can be used" (false shows "Registration
        // disabled"), ours `signup_enabled` means "no invite code needed": registering with an invite code
        // is signing up too, or the invite link would land on a closed page.
        signupEnabled: builtin.enabled && (builtin.signup_enabled || builtin.invite_required),
      },
      providers: providers.map((p) => withCamelAliases(p)),
    }
  })

  app.get('/auth/oauth/:provider/authorize', {
    onRequest: perIp(app, 'oauth-authorize'),
    preValidation: canonicalQuery({ inviteCode: 'invite_code' }),
    schema: { hide: true, params: ProviderParams, querystring: AuthorizeQuery },
  }, async (request, reply) => {
    const url = await app.oauthSignIn.authorize(request.params.provider, request.query.invite_code)
    return redirect(request, reply, url)
  })

  app.post('/auth/oauth/exchange', {
    onRequest: perIp(app, 'oauth-exchange'),
    schema: { hide: true, body: ExchangeBody },
  }, async (request, reply) => {
    reply.header('cache-control', 'no-store')
    return withUiUser(await app.oauthSignIn.exchange(request.body.code))
  })
}
