// Credentials at rest: AES-256-GCM with a random 96-bit nonce, the record's id as associated data (so a
// sealed value copied onto another record does not open), and the id of the key that sealed it (so keys
// can be rotated while old values still open).
//
// Format: "sealed:v1:<key id>:<nonce>:<ciphertext>:<tag>", base64url parts. A string, so it stores the
// same in any database and is easy to recognise in a rotation pass.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'

const PREFIX = 'sealed:v1'
const KEY_BYTES = 32
const NONCE_BYTES = 12
const TAG_BYTES = 16

export class SealError extends Error {
  constructor(message: string) { super(message); this.name = 'SealError' }
}

export interface KeyRing {
  /** Seals with this key. */
  current: Buffer
  /** Opens with these too (keys being rotated out). */
  old: Buffer[]
}

/** A short public fingerprint of a key, stored with each sealed value. */
export function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('base64url').slice(0, 11)
}

/** Decodes a base64 (or base64url) key and checks it is 32 bytes; the message never includes the key. */
export function parseKey(text: string, name: string): Buffer {
  const key = Buffer.from(text.trim(), /[-_]/.test(text) ? 'base64url' : 'base64')
  if (key.length !== KEY_BYTES) throw new SealError(`${name} must be ${KEY_BYTES} bytes, base64-encoded (got ${key.length} bytes)`)
  return key
}

export class Sealer {
  private readonly keys = new Map<string, Buffer>()
  readonly currentKeyId: string

  constructor(ring: KeyRing) {
    for (const key of [ring.current, ...ring.old]) {
      if (key.length !== KEY_BYTES) throw new SealError(`encryption keys must be ${KEY_BYTES} bytes`)
      this.keys.set(keyId(key), key)
    }
    this.currentKeyId = keyId(ring.current)
  }

  static isSealed(value: unknown): value is string {
    return typeof value === 'string' && value.startsWith(`${PREFIX}:`)
  }

  /** Seals a JSON-serialisable value, bound to `context` (the record's id). */
  seal(value: unknown, context: string): string {
    const key = this.keys.get(this.currentKeyId)!
    const nonce = randomBytes(NONCE_BYTES)
    const cipher = createCipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES })
    cipher.setAAD(Buffer.from(context, 'utf8'))
    const ciphertext = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()])
    return [PREFIX, this.currentKeyId, nonce.toString('base64url'), ciphertext.toString('base64url'), cipher.getAuthTag().toString('base64url')].join(':')
  }

  /** Opens a sealed value; throws SealError when it was tampered with, sealed for another record, or by an unknown key. */
  open<T = unknown>(sealed: string, context: string): T {
    const parts = sealed.split(':')
    if (parts.length !== 6 || `${parts[0]}:${parts[1]}` !== PREFIX) throw new SealError('not a sealed value')
    const [, , kid, nonceText, ciphertextText, tagText] = parts
    const key = this.keys.get(kid)
    if (!key) throw new SealError('sealed with a key this server does not have')
    const nonce = Buffer.from(nonceText, 'base64url')
    const tag = Buffer.from(tagText, 'base64url')
    if (nonce.length !== NONCE_BYTES || tag.length !== TAG_BYTES) throw new SealError('malformed sealed value')
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES })
      decipher.setAAD(Buffer.from(context, 'utf8'))
      decipher.setAuthTag(tag)
      const plain = Buffer.concat([decipher.update(Buffer.from(ciphertextText, 'base64url')), decipher.final()])
      return JSON.parse(plain.toString('utf8')) as T
    } catch {
      throw new SealError('sealed value does not open: tampered with, or sealed for another record')
    }
  }

  /** Whether a sealed value was sealed by a key other than the current one (a rotation pass re-seals it). */
  needsResealing(sealed: string): boolean {
    return sealed.split(':')[2] !== this.currentKeyId
  }
}
