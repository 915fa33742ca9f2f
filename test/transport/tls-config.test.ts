// The TLS settings: both files or neither, files an operator can fix named in one line, and the
// development certificate (made once in DATA_DIR for localhost, 127.0.0.1 and ::1, then reused).
import t from 'tap'
import { X509Certificate } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConfigError, loadConfig, testConfig } from '../../src/config.ts'
import { serverTls } from '../../src/tls/server-tls.ts'
import { CERT_FILE, KEY_FILE, makeSelfSignedCertificate } from '../../src/tls/self-signed.ts'
import { runToExit } from '../helpers/run-to-exit.ts'

const dir = mkdtempSync(join(tmpdir(), 'cwo-tls-config-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

t.test('TLS_CERT_FILE and TLS_KEY_FILE go together; TLS=self-signed excludes them; TLS takes only self-signed', async (t) => {
  t.throws(() => loadConfig({ TLS_CERT_FILE: '/x/cert.pem' }), new ConfigError('Invalid configuration: TLS_CERT_FILE and TLS_KEY_FILE go together: TLS_KEY_FILE is not set'))
  t.throws(() => loadConfig({ TLS_KEY_FILE: '/x/key.pem' }), new ConfigError('Invalid configuration: TLS_CERT_FILE and TLS_KEY_FILE go together: TLS_CERT_FILE is not set'))
  t.throws(() => loadConfig({ TLS: 'self-signed', TLS_CERT_FILE: '/x/c', TLS_KEY_FILE: '/x/k' }), /exclude each other/)
  t.throws(() => loadConfig({ TLS: 'on' }), /TLS/)
  t.equal(loadConfig({}).TLS_CERT_FILE, undefined, 'neither: plain HTTP')
})

t.test('files that cannot serve stop start-up with one line naming the variable', async (t) => {
  const a = makeSelfSignedCertificate()
  const b = makeSelfSignedCertificate()
  const write = (name: string, text: string) => { const p = join(dir, name); writeFileSync(p, text); return p }
  const cert = write('a-cert.pem', a.cert)
  const key = write('a-key.pem', a.key)
  const otherKey = write('b-key.pem', b.key)
  const fine = await serverTls(testConfig({ TLS_CERT_FILE: cert, TLS_KEY_FILE: key }))
  t.equal(fine?.fingerprint, new X509Certificate(a.cert).fingerprint256)
  await t.rejects(serverTls(testConfig({ TLS_CERT_FILE: join(dir, 'none.pem'), TLS_KEY_FILE: key })), { name: 'ConfigError', message: /TLS_CERT_FILE cannot be read \(ENOENT/ })
  await t.rejects(serverTls(testConfig({ TLS_CERT_FILE: cert, TLS_KEY_FILE: otherKey })), { message: 'Invalid configuration: TLS_KEY_FILE is not the private key of the certificate in TLS_CERT_FILE' })
  await t.rejects(serverTls(testConfig({ TLS_CERT_FILE: key, TLS_KEY_FILE: key })), { message: 'Invalid configuration: TLS_CERT_FILE holds no PEM certificate' })
  const err = await serverTls(testConfig({ TLS_CERT_FILE: cert, TLS_KEY_FILE: cert })).catch((e: Error) => e)
  t.match(err, { message: /TLS_KEY_FILE holds no PEM private key/ })
  t.notMatch((err as Error).message, /BEGIN/, 'no file content in the message')
})

t.test('TLS=self-signed: made once in DATA_DIR (key owner-only) for localhost, 127.0.0.1 and ::1, then reused', async (t) => {
  const dataDir = join(dir, 'data')
  const first = await serverTls(testConfig({ TLS: 'self-signed', DATA_DIR: dataDir }))
  t.equal(first?.source, 'self-signed (new)')
  const x509 = new X509Certificate(readFileSync(join(dataDir, CERT_FILE)))
  t.equal(x509.checkHost('localhost'), 'localhost')
  t.equal(x509.checkIP('127.0.0.1'), '127.0.0.1')
  t.equal(x509.checkIP('::1'), '::1')
  t.ok(x509.verify(x509.publicKey), 'signed by its own key')
  t.equal(x509.fingerprint256, first?.fingerprint)
  t.equal(statSync(join(dataDir, KEY_FILE)).mode & 0o777, 0o600)
  const again = await serverTls(testConfig({ TLS: 'self-signed', DATA_DIR: dataDir }))
  t.equal(again?.source, 'self-signed')
  t.equal(again?.fingerprint, first?.fingerprint, 'the same certificate after a restart')
  // A damaged pair (the key of another certificate) is replaced rather than served.
  writeFileSync(join(dataDir, KEY_FILE), makeSelfSignedCertificate().key)
  const replaced = await serverTls(testConfig({ TLS: 'self-signed', DATA_DIR: dataDir }))
  t.equal(replaced?.source, 'self-signed (new)')
  t.not(replaced?.fingerprint, first?.fingerprint)
})

t.test('the real server process: a TLS file it cannot read stops start-up with one line on stderr, exit code 1', async (t) => {
  const server = new URL('../../src/server.ts', import.meta.url).pathname
  const missing = join(dir, 'missing-cert.pem')
  const r = await runToExit([server], { HOST: '127.0.0.1', PORT: '0', NODE_ENV: 'development', DATA_DIR: join(dir, 'proc-data'), EMBEDDED_DB: 'memory', TLS_CERT_FILE: missing, TLS_KEY_FILE: missing }, dir)
  t.equal(r.code, 1)
  t.equal(r.stderr, `Invalid configuration: TLS_CERT_FILE cannot be read (ENOENT: ${missing})\n`)
})
