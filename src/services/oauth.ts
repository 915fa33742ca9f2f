// The OAuth2/OIDC sign-in flow (spec "Authentication" 5, API.md §2):
//   authorize: a random state (stored hashed, 10 minutes, single use, bound to the provider, with the PKCE
//              verifier, the OIDC nonce and an optional invite code) → the provider's authorization URL;
//   callback:  take the state, exchange the code with the PKCE verifier, verify the identity, then find the
//              user by (provider, subject), else link by email only when the provider says it is verified,
//              else create an account (the invite rules apply; trusted providers skip the invite) →
//              <FRONTEND_URL>/auth/callback?code=<one-time code, 30 s>; any failure → <FRONTEND_URL>/login?error=;
//   exchange:  the one-time code → {token, user}.
import { createHash } from 'node:crypto'
import { AppError, NotFound, Unauthorized } from '../errors.ts'
import { OAUTH_CODE_TTL_MS, type OAuthCodesRepository } from '../repositories/oauth-codes.ts'
import { OAUTH_STATE_TTL_MS, type OAuthStatesRepository } from '../repositories/oauth-states.ts'
import { toUser, type UserDoc, type UsersRepository } from '../repositories/users.ts'
import type { UserRecord } from '../../schemas/user.ts'
import { SignInError, type ProviderIdentity, type SignInProvider } from './oauth-providers.ts'
import { randomToken, sha256 } from './secrets.ts'
import type { UserService } from './users.ts'

interface Logger { warn(obj: object, msg: string): void }

export interface OAuthServiceOptions {
  providers: SignInProvider[]
  states: OAuthStatesRepository
  codes: OAuthCodesRepository
  usersRepo: UsersRepository
  users: UserService
  publicUrl: string
  frontendUrl: string
  log: Logger
  now?: () => Date
}

export interface CallbackQuery { code?: string; state?: string; error?: string }

/** The redirect URI registered with a provider: <PUBLIC_URL>/v1/api/auth/oauth/<name>/callback. */
export function callbackUrl(publicUrl: string, name: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/v1/api/auth/oauth/${name}/callback`
}

const INVALID_STATE = 'the sign-in link expired or was already used; please try again'
const INVALID_CODE = 'invalid or expired code'

export class OAuthService {
  private readonly providers = new Map<string, SignInProvider>()
  private readonly now: () => Date

  constructor(private readonly o: OAuthServiceOptions) {
    for (const p of o.providers) this.providers.set(p.name, p)
    this.now = o.now ?? (() => new Date())
  }

  list(): Array<{ name: string; display_name: string; icon: string }> {
    return [...this.providers.values()].map((p) => ({ name: p.name, display_name: p.displayName, icon: p.icon }))
  }

  private provider(name: string): SignInProvider {
    const p = this.providers.get(name)
    if (!p) throw new NotFound('sign-in provider')
    return p
  }

  redirectUri(name: string): string {
    return callbackUrl(this.o.publicUrl, name)
  }

  private frontend(path: string, params: Record<string, string>): string {
    const url = new URL(path, this.o.frontendUrl.replace(/\/*$/, '/'))
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v)
    return url.toString()
  }

  /** Starts a sign-in: stores the state and returns the provider's authorization URL. */
  async authorize(name: string, inviteCode?: string): Promise<string> {
    const p = this.provider(name)
    const state = randomToken(32)
    const codeVerifier = randomToken(32)
    const nonce = randomToken(16)
    const at = this.now()
    await this.o.states.insert({
      _id: sha256(state), provider: p.name, code_verifier: codeVerifier, nonce, invite_code: inviteCode?.trim() || null,
      created_at: at, expires_at: new Date(at.getTime() + OAUTH_STATE_TTL_MS),
    })
    return p.client.authorizeURL({
      redirect_uri: this.redirectUri(p.name),
      scope: p.scopes.join(' '),
      state,
      code_challenge: createHash('sha256').update(codeVerifier).digest('base64url'),
      code_challenge_method: 'S256',
      ...(p.isOidc ? { nonce } : {}),
    })
  }

  /** Finishes a sign-in. Always answers a URL of the web client: the one-time code, or an error message. */
  async callback(name: string, query: CallbackQuery): Promise<string> {
    const p = this.provider(name)
    try {
      const state = query.state ? await this.o.states.take(sha256(query.state), p.name, this.now()) : null
      if (!state) throw new SignInError(INVALID_STATE)
      if (query.error) throw new SignInError(`sign-in was cancelled or refused at ${p.displayName}`)
      if (!query.code) throw new SignInError(`${p.displayName} sent no authorization code`)
      let tokens: Record<string, unknown>
      try {
        tokens = (await p.client.getToken({ code: query.code, redirect_uri: this.redirectUri(p.name), code_verifier: state.code_verifier })).token
      } catch {
        throw new SignInError(`${p.displayName} did not accept the sign-in`)
      }
      if (typeof tokens.error === 'string') throw new SignInError(`${p.displayName} did not accept the sign-in`)
      const identity = await p.identity(tokens, state.nonce)
      const user = await this.resolveUser(p, identity, state.invite_code)
      const code = randomToken(32)
      const at = this.now()
      await this.o.codes.insert({
        _id: sha256(code), user_id: user._id.toHexString(), provider: p.name, auth_time: Math.floor(at.getTime() / 1000),
        created_at: at, expires_at: new Date(at.getTime() + OAUTH_CODE_TTL_MS),
      })
      return this.frontend('auth/callback', { code })
    } catch (err) {
      const shown = err instanceof SignInError || (err instanceof AppError && err.statusCode < 500)
      const message = shown ? (err as Error).message : 'sign-in failed; please try again'
      this.o.log.warn({ provider: p.name, reason: shown ? message : (err as Error).name }, 'OAuth sign-in failed')
      return this.frontend('login', { error: message })
    }
  }

  private async resolveUser(p: SignInProvider, id: ProviderIdentity, inviteCode: string | null): Promise<UserDoc> {
    const { usersRepo } = this.o
    const known = await usersRepo.findByIdentity(p.name, id.subject)
    if (known) return known
    if (!id.email) throw new SignInError(`${p.displayName} did not share an email address`)
    // An unverified address is never trusted: not to link (that would hand over the account holding it) and
    // not to create (that would squat the address, and a later verified sign-in would link to it).
    if (!id.emailVerified) throw new SignInError(`your ${p.displayName} email address is not verified`)
    const existing = await usersRepo.findByEmail(id.email)
    if (existing) {
      await usersRepo.linkIdentity(existing._id, p.name, id.subject, id.email)
      return existing
    }
    const created = await this.o.users.createAccount(
      { email: id.email, name: id.name ?? id.email.split('@')[0], password_hash: null, avatar_url: id.avatarUrl, auth_provider: p.name },
      { inviteCode, trusted: p.trusted },
    )
    await usersRepo.linkIdentity(created._id, p.name, id.subject, id.email)
    return created
  }

  /** The token for a one-time code from the callback; 401 when unknown, used or expired. */
  async exchange(code: string): Promise<{ token: string; user: UserRecord }> {
    const doc = await this.o.codes.take(sha256(code), this.now())
    if (!doc) throw new Unauthorized(INVALID_CODE)
    const user = await this.o.usersRepo.findById(doc.user_id)
    if (!user) throw new Unauthorized(INVALID_CODE)
    return { token: this.o.users.issueFor(user, doc.auth_time), user: toUser(user) }
  }
}
