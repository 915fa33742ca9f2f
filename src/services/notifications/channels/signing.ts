// Signing a delivery (API.md §12): `X-Signature-256: sha256=<hex HMAC-SHA256(secret, raw body)>`, the
// scheme GitHub's webhooks use, so receivers can reuse their verification code. A receiver recomputes the
// HMAC over the bytes it received and compares in constant time (verifySignature shows how).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

export const SIGNATURE_HEADER = 'x-signature-256'

/** A new signing secret: 32 random bytes, base64url, with a prefix that says what it is. */
export function generateSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`
}

/** The header value for this body: `sha256=<hex>`. */
export function signBody(secret: string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`
}

/** What a receiver does: recompute and compare in constant time. */
export function verifySignature(secret: string, body: string | Buffer, header: string | undefined): boolean {
  if (!header) return false
  const expected = Buffer.from(signBody(secret, body))
  const given = Buffer.from(header)
  return given.length === expected.length && timingSafeEqual(given, expected)
}
