// What the server listens with (API.md §14): the operator's PEM files (TLS_CERT_FILE, TLS_KEY_FILE), a
// development certificate (TLS=self-signed), or nothing (plain HTTP/1.1). Problems an operator can fix
// stop start-up with a ConfigError naming the variable, never with the file's content.
import { X509Certificate, createPrivateKey } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ConfigError, type Config } from '../config.ts'
import { CERT_FILE, devCertificate } from './self-signed.ts'

export interface ServerTls {
  cert: string
  key: string
  /** SHA-256 fingerprint of the certificate (colon-separated hex), as browsers show it. */
  fingerprint: string
  /** Where it came from, for the start-up log line. */
  source: 'files' | 'self-signed' | 'self-signed (new)'
  /** File of the certificate, for pointing a client at it. */
  certFile: string
}

async function readPemFile(variable: string, path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8')
  } catch (err) {
    throw new ConfigError(`Invalid configuration: ${variable} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'}: ${path})`)
  }
}

export async function serverTls(config: Config): Promise<ServerTls | undefined> {
  if (config.TLS === 'self-signed') {
    const pem = await devCertificate(config.DATA_DIR)
    return { cert: pem.cert, key: pem.key, fingerprint: new X509Certificate(pem.cert).fingerprint256, source: pem.created ? 'self-signed (new)' : 'self-signed', certFile: join(config.DATA_DIR, CERT_FILE) }
  }
  if (!config.TLS_CERT_FILE || !config.TLS_KEY_FILE) return undefined
  const cert = await readPemFile('TLS_CERT_FILE', config.TLS_CERT_FILE)
  const key = await readPemFile('TLS_KEY_FILE', config.TLS_KEY_FILE)
  let x509: X509Certificate
  try {
    x509 = new X509Certificate(cert)
  } catch {
    throw new ConfigError('Invalid configuration: TLS_CERT_FILE holds no PEM certificate')
  }
  let matches: boolean
  try {
    matches = x509.checkPrivateKey(createPrivateKey(key))
  } catch {
    throw new ConfigError('Invalid configuration: TLS_KEY_FILE holds no PEM private key (an encrypted key is not supported)')
  }
  if (!matches) throw new ConfigError('Invalid configuration: TLS_KEY_FILE is not the private key of the certificate in TLS_CERT_FILE')
  return { cert, key, fingerprint: x509.fingerprint256, source: 'files', certFile: config.TLS_CERT_FILE }
}
