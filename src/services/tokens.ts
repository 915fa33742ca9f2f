// Access tokens: HS256 JWTs with sub, role, email, iat, exp (iat + 24 h), auth_time, iss and aud. Signing
// and verifying are done by @fastify/jwt (plugins/auth.ts pins the algorithm, issuer and audience); this
// module owns the rules: lifetime, the 7-day refresh window counted from auth_time, and what a valid
// payload looks like.
import { Unauthorized } from '../errors.ts'
import type { Role } from '../repositories/users.ts'

export const TOKEN_LIFETIME_S = 24 * 60 * 60
export const REFRESH_WINDOW_S = 7 * 24 * 60 * 60
/** How far a token's iat (or auth_time) may lie ahead of this clock: replicas' clocks drift a little. */
export const CLOCK_SKEW_S = 60

export interface AccessClaims {
  sub: string
  role: Role
  email: string
  auth_time: number
  iat: number
  exp: number
  iss: string
  aud: string
}

/** What @fastify/jwt provides, without its types (services stay free of Fastify). */
export interface JwtFunctions {
  sign(payload: Record<string, unknown>): string
  /** Full verification: signature, alg, iss, aud, exp. */
  verify(token: string): unknown
  /** The same, except that an expired token passes. */
  verifyIgnoringExpiry(token: string): unknown
}

export interface TokenSubject { id: string; role: Role; email: string }

function isClaims(value: unknown): value is AccessClaims {
  const c = value as Partial<AccessClaims> | null
  return !!c && typeof c.sub === 'string' && /^[0-9a-f]{24}$/.test(c.sub) && typeof c.auth_time === 'number' &&
    typeof c.iat === 'number' && typeof c.exp === 'number' && Number.isFinite(c.auth_time)
}

function describe(err: unknown): Unauthorized {
  const code = (err as { code?: string })?.code
  return new Unauthorized(code === 'FAST_JWT_EXPIRED' ? 'token expired' : 'invalid token')
}

export class TokenService {
  constructor(private readonly jwt: JwtFunctions, private readonly now: () => Date = () => new Date()) {}

  /** A new 24-hour token; `authTime` (seconds) is when the user signed in and bounds refreshing. */
  issue(user: TokenSubject, authTime: number): string {
    const iat = Math.floor(this.now().getTime() / 1000)
    return this.jwt.sign({ sub: user.id, role: user.role, email: user.email, auth_time: authTime, iat, exp: iat + TOKEN_LIFETIME_S })
  }

  nowSeconds(): number {
    return Math.floor(this.now().getTime() / 1000)
  }

  /** The claims of a valid, unexpired token; 401 otherwise. */
  verify(token: string): AccessClaims {
    return this.claims(() => this.jwt.verify(token))
  }

  private claims(verify: () => unknown): AccessClaims {
    let claims: unknown
    try {
      claims = verify()
    } catch (err) {
      throw describe(err)
    }
    if (!isClaims(claims)) throw new Unauthorized('invalid token')
    // Issued in the future: not something this service signs (fast-jwt checks exp and nbf, not iat). A
    // token minted with a far iat would otherwise also stretch what iat-based rules allow.
    if (claims.iat > this.nowSeconds() + CLOCK_SKEW_S) throw new Unauthorized('invalid token')
    return claims
  }

  /**
   * The claims of a genuine token that may be expired, provided its sign-in (auth_time) is at most 7 days
   * old. Refreshing keeps auth_time, so the window cannot be extended.
   */
  verifyForRefresh(token: string): AccessClaims {
    const claims = this.claims(() => this.jwt.verifyIgnoringExpiry(token))
    const now = this.nowSeconds()
    // A sign-in time after the token was issued, or in the future, is not something this service signs.
    if (claims.auth_time > claims.iat || claims.auth_time > now + CLOCK_SKEW_S) throw new Unauthorized('invalid token')
    if (now - claims.auth_time > REFRESH_WINDOW_S) throw new Unauthorized('sign-in is older than 7 days; log in again')
    return claims
  }
}
