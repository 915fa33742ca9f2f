// ID tokens for `oidc` clusters: the cluster verifies the token; this side only keeps one that has not
// expired, refreshing it from the issuer (OIDC discovery, then the refresh_token grant) when it has or is
// about to. A rotated refresh token is handed back so the caller can seal and store it.
import { BadRequest, UpstreamError } from '../errors.ts'
import { POLICY_REFUSED, type OutboundPolicy } from '../net/outbound-policy.ts'
import { guardedRequest } from '../net/guarded-request.ts'
import { errorCodes } from '../net/network-errors.ts'

export interface OidcCredentials { issuer_url: string; client_id: string; client_secret?: string; refresh_token: string; id_token?: string }
export interface OidcTokenResult { id_token: string; refresh_token: string; refreshed: boolean }

const EARLY_REFRESH_S = 60
const TIMEOUT_MS = 10_000
const MAX_BODY = 256 * 1024

/** Seconds-since-epoch expiry of a JWT, read without verification (0 when unreadable). */
export function jwtExpiry(token: string): number {
  try {
    const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { exp?: unknown }
    return typeof payload.exp === 'number' ? payload.exp : 0
  } catch {
    return 0
  }
}

export class OidcTokenSource {
  constructor(
    private readonly policy: OutboundPolicy,
    private readonly nowSeconds: () => number = () => Math.floor(Date.now() / 1000),
  ) {}

  async current(creds: OidcCredentials): Promise<OidcTokenResult> {
    if (creds.id_token && jwtExpiry(creds.id_token) - EARLY_REFRESH_S > this.nowSeconds()) {
      return { id_token: creds.id_token, refresh_token: creds.refresh_token, refreshed: false }
    }
    return this.refresh(creds)
  }

  /**
   * The issuer is user input: each request is held to the outbound policy on the connection itself (the
   * address checked is the address connected to), and a redirect, whose target nobody checked, is refused.
   */
  private async getJson(url: string, init: { method?: 'POST'; headers?: Record<string, string>; body?: string } = {}): Promise<Record<string, unknown>> {
    let reply
    try {
      reply = await guardedRequest(url, { ...init, headers: { accept: 'application/json', ...init.headers }, policy: this.policy, what: 'issuer_url', timeoutMs: TIMEOUT_MS, maxBytes: MAX_BODY })
    } catch (err) {
      if (err instanceof BadRequest) throw err
      if (errorCodes(err).codes.includes(POLICY_REFUSED)) throw new UpstreamError('the OIDC issuer\'s address is not allowed by the outbound policy')
      throw new UpstreamError('the OIDC issuer did not answer')
    }
    if (reply.redirected) throw new UpstreamError(`the OIDC issuer answered ${reply.status} (a redirect, which is not followed)`)
    if (reply.status < 200 || reply.status >= 300) throw new UpstreamError(`the OIDC issuer answered ${reply.status}`)
    try {
      const parsed = JSON.parse(reply.body) as unknown
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>
    } catch { /* answered below */ }
    throw new UpstreamError('the OIDC issuer answered with something that is not a JSON object')
  }

  private async refresh(creds: OidcCredentials): Promise<OidcTokenResult> {
    const issuer = creds.issuer_url.replace(/\/$/, '')
    const discovery = await this.getJson(`${issuer}/.well-known/openid-configuration`)
    const tokenEndpoint = discovery.token_endpoint
    if (typeof tokenEndpoint !== 'string') throw new UpstreamError('the OIDC issuer\'s discovery document has no token_endpoint')
    const body = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: creds.refresh_token, client_id: creds.client_id, scope: 'openid' })
    if (creds.client_secret) body.set('client_secret', creds.client_secret)
    const tokens = await this.getJson(tokenEndpoint, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: body.toString() })
    if (typeof tokens.id_token !== 'string') throw new UpstreamError('the OIDC issuer returned no id_token for the refresh token')
    return { id_token: tokens.id_token, refresh_token: typeof tokens.refresh_token === 'string' ? tokens.refresh_token : creds.refresh_token, refreshed: true }
  }
}
