// Hand-made JWTs for forgery and clock tests: any header, any claims, signed with any key (or not at all).
import { createHmac, generateKeyPairSync, sign as rsaSign } from 'node:crypto'

const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url')

export function hmacToken(claims: Record<string, unknown>, secret: string, alg: 'HS256' | 'HS384' | 'HS512' = 'HS256', header: Record<string, unknown> = {}): string {
  const head = `${b64({ alg, typ: 'JWT', ...header })}.${b64(claims)}`
  const digest = { HS256: 'sha256', HS384: 'sha384', HS512: 'sha512' }[alg]
  return `${head}.${createHmac(digest, secret).update(head).digest('base64url')}`
}

export function unsignedToken(claims: Record<string, unknown>): string {
  return `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`
}

export function rsaToken(claims: Record<string, unknown>): string {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const head = `${b64({ alg: 'RS256', typ: 'JWT' })}.${b64(claims)}`
  return `${head}.${rsaSign('sha256', Buffer.from(head), privateKey).toString('base64url')}`
}

export const now = () => Math.floor(Date.now() / 1000)
export const HOUR = 3600
export const DAY = 24 * HOUR

/** Claims as the service would issue them for `user`, shifted by the given overrides. */
export function claimsFor(user: { id: string; role: string; email: string }, overrides: Record<string, unknown> = {}, config = { iss: 'cluster-workflow-orchestrator', aud: 'cluster-workflow-orchestrator-api' }) {
  const iat = now()
  return { sub: user.id, role: user.role, email: user.email, auth_time: iat, iat, exp: iat + DAY, iss: config.iss, aud: config.aud, ...overrides }
}
