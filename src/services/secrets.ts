// Random values and comparisons for sign-in secrets (states, codes, invite codes).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

/** A URL-safe random string carrying `bytes` bytes of entropy. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url')
}

export function sha256(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('base64url')
}

/** Compares two strings in time independent of where they differ (both are hashed to equal length first). */
export function constantTimeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a, 'utf8').digest()
  const hb = createHash('sha256').update(b, 'utf8').digest()
  return timingSafeEqual(ha, hb) && a.length === b.length
}

// 32 symbols without the look-alikes 0/O and 1/I: 5 bits each, and 256 is a multiple of 32 so no bias.
const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789'

/** An invite code: 20 symbols (100 bits), grouped by dashes for reading aloud: XXXXX-XXXXX-XXXXX-XXXXX. */
export function randomInviteCode(): string {
  const bytes = randomBytes(20)
  let out = ''
  for (let i = 0; i < bytes.length; i++) {
    if (i > 0 && i % 5 === 0) out += '-'
    out += ALPHABET[bytes[i] & 31]
  }
  return out
}
