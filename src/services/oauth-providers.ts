// Sign-in providers: where their endpoints are (fixed for GitHub and Google, OIDC discovery for GitLab and
// any other issuer), and how a provider's answer becomes a verified identity: for OIDC the ID token's
// signature (JWKS), issuer, audience, expiry and nonce are all checked with `jose`; for GitHub, which has no
// ID token, the account and its verified emails come from its API over the access token.
import { createRemoteJWKSet, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose'
import { providerDisplay, type ProviderConfig } from './auth-config.ts'
import { constantTimeEqual } from './secrets.ts'
import { OutboundPolicy } from '../net/outbound-policy.ts'

/** A failure whose message may be shown to the person signing in. */
export class SignInError extends Error {}

export interface ProviderIdentity {
  subject: string
  email: string | null
  emailVerified: boolean
  name: string | null
  avatarUrl: string | null
}

export interface ProviderEndpoints {
  authorizeUrl: string
  tokenUrl: string
  oidc?: { issuer: string; jwksUri: string; userinfoUrl?: string }
  githubApi?: string
}

/** The token endpoint client (the one @fastify/oauth2 configures; see plugins/auth.ts). */
export interface OAuthClient {
  authorizeURL(params: Record<string, string>): string
  getToken(params: { code: string; redirect_uri: string; code_verifier: string }): Promise<{ token: Record<string, unknown> }>
}

const HTTP_TIMEOUT_MS = 10_000
const USER_AGENT = 'cluster-workflow-orchestrator'
// ID tokens must be signed with the provider's private key: no `none`, and no HMAC (which would make the
// client secret a signing key).
const ID_TOKEN_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']

const GOOGLE: ProviderEndpoints = {
  authorizeUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
  tokenUrl: 'https://oauth2.googleapis.com/token',
  oidc: { issuer: 'https://accounts.google.com', jwksUri: 'https://www.googleapis.com/oauth2/v3/certs', userinfoUrl: 'https://openidconnect.googleapis.com/v1/userinfo' },
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '')
}

async function getJson(url: string, headers: Record<string, string> = {}): Promise<unknown> {
  const res = await fetch(url, { headers: { accept: 'application/json', 'user-agent': USER_AGENT, ...headers }, signal: AbortSignal.timeout(HTTP_TIMEOUT_MS), redirect: 'error' })
  if (!res.ok) throw new Error(`${new URL(url).host} answered ${res.status}`)
  return res.json()
}

/**
 * Sign-in providers are the operator's choice (OAUTH_PROVIDERS), not a user's, so neither the allow-list nor
 * the production loopback rule applies (a local identity provider is fine); what the outbound policy never
 * allows (unspecified, link-local, cloud metadata, in any spelling or through DNS) is refused here as well.
 */
const OPERATOR_ENDPOINTS = new OutboundPolicy({ allowInsecure: true, allowCidrs: [], refuseLoopback: false })

/** OIDC discovery: the issuer's metadata, checked to name the same issuer and to have what sign-in needs. */
export async function discover(issuer: string): Promise<ProviderEndpoints> {
  await OPERATOR_ENDPOINTS.check(issuer, 'issuer')
  const meta = await getJson(`${trimSlash(issuer)}/.well-known/openid-configuration`) as Record<string, unknown>
  for (const key of ['issuer', 'authorization_endpoint', 'token_endpoint', 'jwks_uri']) {
    if (typeof meta[key] !== 'string') throw new Error(`discovery document has no ${key}`)
  }
  // The server itself calls these three; the document could name any address for them.
  for (const key of ['token_endpoint', 'jwks_uri', 'userinfo_endpoint']) {
    if (typeof meta[key] === 'string') await OPERATOR_ENDPOINTS.check(meta[key] as string, `discovery document's ${key}`)
  }
  if (trimSlash(meta.issuer as string) !== trimSlash(issuer)) throw new Error('discovery document names a different issuer')
  return {
    authorizeUrl: meta.authorization_endpoint as string,
    tokenUrl: meta.token_endpoint as string,
    oidc: { issuer: meta.issuer as string, jwksUri: meta.jwks_uri as string, userinfoUrl: typeof meta.userinfo_endpoint === 'string' ? meta.userinfo_endpoint : undefined },
  }
}

/** Where a configured provider's endpoints are; network only for discovery (gitlab, oidc). */
export async function resolveEndpoints(config: ProviderConfig): Promise<ProviderEndpoints> {
  switch (config.type) {
    case 'github': {
      const base = trimSlash(config.base_url ?? 'https://github.com')
      const api = trimSlash(config.api_url ?? (base === 'https://github.com' ? 'https://api.github.com' : `${base}/api/v3`))
      return { authorizeUrl: `${base}/login/oauth/authorize`, tokenUrl: `${base}/login/oauth/access_token`, githubApi: api }
    }
    case 'google':
      return GOOGLE
    case 'gitlab':
      return discover(config.issuer ?? 'https://gitlab.com')
    case 'oidc':
      return discover(config.issuer!)
    default:
      throw new Error(`unknown provider type ${String((config as { type: unknown }).type)}`)
  }
}

function httpUrlOrNull(value: unknown): string | null {
  return typeof value === 'string' && /^https?:\/\/\S+$/.test(value) && value.length <= 2048 ? value : null
}

function stringOrNull(value: unknown, max = 200): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.trim().slice(0, max) : null
}

export class SignInProvider {
  readonly name: string
  readonly displayName: string
  readonly icon: string
  readonly trusted: boolean
  readonly scopes: string[]
  private readonly jwks?: JWTVerifyGetKey

  constructor(readonly config: ProviderConfig, readonly endpoints: ProviderEndpoints, readonly client: OAuthClient) {
    this.name = config.name
    const display = providerDisplay(config)
    this.displayName = display.display_name
    this.icon = display.icon
    this.trusted = config.trusted === true
    const defaults = endpoints.oidc ? ['openid', 'email', 'profile'] : ['read:user', 'user:email']
    const scopes = config.scopes ?? defaults
    this.scopes = endpoints.oidc && !scopes.includes('openid') ? ['openid', ...scopes] : scopes
    if (endpoints.oidc) this.jwks = createRemoteJWKSet(new URL(endpoints.oidc.jwksUri), { timeoutDuration: HTTP_TIMEOUT_MS })
  }

  get isOidc(): boolean {
    return !!this.endpoints.oidc
  }

  /** The verified identity behind a token response. Throws SignInError when anything does not check out. */
  async identity(tokens: Record<string, unknown>, nonce: string): Promise<ProviderIdentity> {
    const accessToken = tokens.access_token
    if (typeof accessToken !== 'string' || accessToken === '') throw new SignInError('the provider did not accept the sign-in')
    return this.endpoints.oidc ? this.oidcIdentity(tokens, accessToken, nonce) : this.githubIdentity(accessToken)
  }

  private async oidcIdentity(tokens: Record<string, unknown>, accessToken: string, nonce: string): Promise<ProviderIdentity> {
    const oidc = this.endpoints.oidc!
    const idToken = tokens.id_token
    if (typeof idToken !== 'string') throw new SignInError('the provider sent no identity token')
    let claims: JWTPayload
    try {
      ({ payload: claims } = await jwtVerify(idToken, this.jwks!, {
        issuer: oidc.issuer,
        audience: this.config.client_id,
        algorithms: ID_TOKEN_ALGORITHMS,
        requiredClaims: ['sub', 'iat', 'exp'],
        clockTolerance: 60,
      }))
    } catch {
      throw new SignInError('the identity token could not be verified')
    }
    if (typeof claims.nonce !== 'string' || !constantTimeEqual(claims.nonce, nonce)) throw new SignInError('the identity token could not be verified')
    if (Array.isArray(claims.aud) && claims.aud.length > 1 && claims.azp !== this.config.client_id) throw new SignInError('the identity token could not be verified')
    let profile: Record<string, unknown> = claims as Record<string, unknown>
    if (typeof claims.email !== 'string' && oidc.userinfoUrl) {
      // Some issuers put the email only in the userinfo answer; it must describe the same subject.
      const info = await getJson(oidc.userinfoUrl, { authorization: `Bearer ${accessToken}` }).catch(() => undefined) as Record<string, unknown> | undefined
      if (info && info.sub === claims.sub) profile = { ...info, ...claims, email: info.email, email_verified: info.email_verified }
    }
    const email = stringOrNull(profile.email, 254)
    return {
      subject: claims.sub!,
      email: email?.toLowerCase() ?? null,
      emailVerified: profile.email_verified === true || profile.email_verified === 'true',
      name: stringOrNull(profile.name) ?? stringOrNull(profile.preferred_username),
      avatarUrl: httpUrlOrNull(profile.picture),
    }
  }

  private async githubIdentity(accessToken: string): Promise<ProviderIdentity> {
    const api = this.endpoints.githubApi!
    const headers = { authorization: `Bearer ${accessToken}`, accept: 'application/vnd.github+json' }
    let account: Record<string, unknown>
    let emails: Array<Record<string, unknown>>
    try {
      account = await getJson(`${api}/user`, headers) as Record<string, unknown>
      emails = await getJson(`${api}/user/emails`, headers) as Array<Record<string, unknown>>
    } catch {
      throw new SignInError('the provider did not answer')
    }
    if (typeof account.id !== 'number' && typeof account.id !== 'string') throw new SignInError('the provider did not answer')
    const list = Array.isArray(emails) ? emails : []
    const primary = list.find((e) => e.primary === true)
    const verified = primary?.verified === true ? primary : list.find((e) => e.verified === true)
    const chosen = verified ?? primary
    const email = stringOrNull(chosen?.email, 254)
    return {
      subject: String(account.id),
      email: email?.toLowerCase() ?? null,
      emailVerified: chosen?.verified === true,
      name: stringOrNull(account.name) ?? stringOrNull(account.login),
      avatarUrl: httpUrlOrNull(account.avatar_url),
    }
  }
}
