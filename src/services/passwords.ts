// Password hashing: argon2id with the library's defaults (m=19 MiB, t=2, p=1: the OWASP baseline).
import { hash, verify } from '@node-rs/argon2'

export async function hashPassword(password: string): Promise<string> {
  return hash(password)
}

let dummyHash: Promise<string> | undefined

/**
 * Checks a password against a stored hash. With no hash (unknown email, or an OAuth-only account) it still
 * spends the time of one verification, so the reply time does not tell which emails exist.
 */
export async function verifyPassword(stored: string | null | undefined, password: string): Promise<boolean> {
  if (!stored) {
    dummyHash ??= hash('not-a-real-password-for-timing-only')
    await verify(await dummyHash, password).catch(() => false)
    return false
  }
  try {
    return await verify(stored, password)
  } catch {
    return false
  }
}
