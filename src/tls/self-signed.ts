// TLS=self-signed (API.md §14): a development certificate for localhost, 127.0.0.1 and ::1, made once in
// DATA_DIR and reused while it is valid, so a browser's exception (or a CA file handed to a client) keeps
// working across restarts. ECDSA P-256: small, fast, accepted by every current TLS stack.
import { X509Certificate, createPrivateKey, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto'
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { isIP } from 'node:net'
import { join } from 'node:path'
import { bitString, boolean, explicit, implicit, octetString, oid, sequence, set, time, unsignedInteger, utf8String } from './der.ts'

export const CERT_FILE = 'tls-cert.pem'
export const KEY_FILE = 'tls-key.pem'
/** Under the 398 days browsers accept for a server certificate. */
const VALID_DAYS = 397
/** A certificate this close to its end is replaced at start-up rather than reused. */
const RENEW_BEFORE_MS = 7 * 86_400_000
export const DEV_NAMES = ['localhost', '127.0.0.1', '::1']

const ECDSA_WITH_SHA256 = '1.2.840.10045.4.3.2'
const COMMON_NAME = '2.5.4.3'
const BASIC_CONSTRAINTS = '2.5.29.19'
const SUBJECT_ALT_NAME = '2.5.29.17'
const EXT_KEY_USAGE = '2.5.29.37'
const SERVER_AUTH = '1.3.6.1.5.5.7.3.1'

function ipBytes(address: string): Buffer {
  if (isIP(address) === 4) return Buffer.from(address.split('.').map(Number))
  // IPv6, possibly with '::': expand to eight groups.
  const [head, tail = ''] = address.split('::')
  const h = head ? head.split(':') : []
  const tl = tail ? tail.split(':') : []
  const groups = address.includes('::') ? [...h, ...Array(8 - h.length - tl.length).fill('0'), ...tl] : h
  return Buffer.concat(groups.map((g) => { const b = Buffer.alloc(2); b.writeUInt16BE(parseInt(g, 16)); return b }))
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return sequence(oid(id), ...(critical ? [boolean(true)] : []), octetString(value))
}

export interface Pem { cert: string; key: string }

/** A new self-signed server certificate for `names` (host names and IP addresses), valid from an hour ago. */
export function makeSelfSignedCertificate(names: string[] = DEV_NAMES, now = new Date()): Pem {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const name = sequence(set(sequence(oid(COMMON_NAME), utf8String(`${names[0]} (development, self-signed)`))))
  const algorithm = sequence(oid(ECDSA_WITH_SHA256))
  const serial = randomBytes(16)
  serial[0] &= 0x7f
  const altNames = sequence(...names.map((n) => isIP(n) ? implicit(7, ipBytes(n)) : implicit(2, Buffer.from(n, 'ascii'))))
  const tbs = sequence(
    explicit(0, unsignedInteger(Buffer.from([2]))), // v3
    unsignedInteger(serial),
    algorithm,
    name,
    sequence(time(new Date(now.getTime() - 3_600_000)), time(new Date(now.getTime() + VALID_DAYS * 86_400_000))),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, sequence(
      extension(BASIC_CONSTRAINTS, true, sequence()), // not a CA
      extension(SUBJECT_ALT_NAME, false, altNames),
      extension(EXT_KEY_USAGE, false, sequence(oid(SERVER_AUTH))),
    )),
  )
  const certificate = sequence(tbs, algorithm, bitString(sign('sha256', tbs, privateKey)))
  const body = certificate.toString('base64').replace(/.{1,64}/g, '$&\n')
  return {
    cert: `-----BEGIN CERTIFICATE-----\n${body}-----END CERTIFICATE-----\n`,
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
  }
}

/** Whether a certificate and key kept earlier can serve on: they belong together, cover `names`, and are not about to expire. */
export function stillUsable(pem: Pem, names: string[] = DEV_NAMES, now = Date.now()): boolean {
  try {
    const x509 = new X509Certificate(pem.cert)
    const key: KeyObject = createPrivateKey(pem.key)
    return x509.checkPrivateKey(key)
      && Date.parse(x509.validTo) - now > RENEW_BEFORE_MS
      && Date.parse(x509.validFrom) <= now
      && names.every((n) => isIP(n) ? x509.checkIP(n) !== undefined : x509.checkHost(n) !== undefined)
  } catch {
    return false
  }
}

async function readPem(dir: string): Promise<Pem | undefined> {
  try {
    return { cert: await readFile(join(dir, CERT_FILE), 'utf8'), key: await readFile(join(dir, KEY_FILE), 'utf8') }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
}

/** The development certificate kept in `dataDir`, made (or replaced) when missing, mismatched or near its end. */
export async function devCertificate(dataDir: string): Promise<Pem & { created: boolean }> {
  const kept = await readPem(dataDir)
  if (kept && stillUsable(kept)) return { ...kept, created: false }
  const fresh = makeSelfSignedCertificate()
  await mkdir(dataDir, { recursive: true })
  // Written aside and renamed: a process stopped half-way leaves the old pair or none, never half a pair.
  const suffix = `.${process.pid}.tmp`
  await writeFile(join(dataDir, KEY_FILE + suffix), fresh.key, { mode: 0o600 })
  await writeFile(join(dataDir, CERT_FILE + suffix), fresh.cert, { mode: 0o644 })
  await rename(join(dataDir, KEY_FILE + suffix), join(dataDir, KEY_FILE))
  await rename(join(dataDir, CERT_FILE + suffix), join(dataDir, CERT_FILE))
  return { ...fresh, created: true }
}
