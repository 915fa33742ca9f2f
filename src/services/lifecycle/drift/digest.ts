// Secret values in a drift baseline are kept only as an HMAC-SHA256 digest: enough to tell whether the live
// value is still the applied one, useless to anyone reading the database (a plain hash of a short password
// is guessed offline; a keyed one is not without the key). The key is derived (HKDF) from the server's
// encryption key ring, never the key itself, and each digest names the key it was made with, so a rotation
// (ENCRYPTION_KEY replaced, the old one in ENCRYPTION_KEYS_OLD) still compares old baselines; a digest whose
// key is gone entirely cannot be compared and is skipped rather than reported as drift.
import { createHmac, hkdfSync } from 'node:crypto'
import { keyId, type KeyRing } from '../../../crypto/sealer.ts'

const INFO = 'cwo drift baseline digest v1'

/** One form for every value: strings as they are, anything else as its JSON. */
const text = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value))

export class Digester {
  private readonly keys = new Map<string, Buffer>()
  private readonly current: string

  constructor(ring: KeyRing) {
    for (const key of [ring.current, ...ring.old]) this.keys.set(keyId(key), Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), INFO, 32)))
    this.current = keyId(ring.current)
  }

  /** `<key id>:<base64url HMAC>` of the value. */
  digest(value: unknown): string {
    return `${this.current}:${this.mac(this.keys.get(this.current)!, value)}`
  }

  /** Whether `value` is the one digested; null when the digest's key is no longer in the ring. */
  matches(digest: string, value: unknown): boolean | null {
    const at = digest.indexOf(':')
    const key = at > 0 ? this.keys.get(digest.slice(0, at)) : undefined
    if (!key) return null
    return digest.slice(at + 1) === this.mac(key, value)
  }

  private mac(key: Buffer, value: unknown): string {
    return createHmac('sha256', key).update(text(value), 'utf8').digest('base64url')
  }
}
