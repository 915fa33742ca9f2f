import './reflect-shim.ts'
import { webcrypto } from 'node:crypto'
import * as x509 from '@peculiar/x509'

// ECDSA P-256: key generation is milliseconds (RSA-2048 can take a second on a slow CI core), and both
// Go's crypto/tls (kubectl) and Node's TLS accept it.
const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const
x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0])

export interface KeyPairPem { certPem: string; keyPem: string }

export interface Pki {
  ca: KeyPairPem
  server: KeyPairPem
  /** Issues a client certificate: CN is the user name and each O a group, as the apiserver reads them. */
  issueClientCert(user: string, groups: string[]): Promise<KeyPairPem>
}

function pem(label: string, der: ArrayBuffer): string {
  const b64 = Buffer.from(der).toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '')
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`
}

async function keyPem(key: webcrypto.CryptoKey): Promise<string> {
  return pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', key))
}

function escapeDn(v: string): string { return v.replace(/([,+"\\<>;=])/g, '\\$1') }

export async function createPki(hosts: string[]): Promise<Pki> {
  const notBefore = new Date(Date.now() - 60_000)
  const notAfter = new Date(Date.now() + 365 * 24 * 3600_000)
  const caKeys = await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify']) as webcrypto.CryptoKeyPair
  const caCert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01', name: 'CN=kube-sim-ca', notBefore, notAfter, keys: caKeys, signingAlgorithm: alg,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  })
  let serial = 1
  const issue = async (subject: string, usage: 'server' | 'client', sans: x509.JsonGeneralName[] = []): Promise<KeyPairPem> => {
    const keys = await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify']) as webcrypto.CryptoKeyPair
    serial++
    const extensions: x509.Extension[] = [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([usage === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth]),
      await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey),
    ]
    if (sans.length) extensions.push(new x509.SubjectAlternativeNameExtension(sans))
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: serial.toString(16).padStart(2, '0'), subject, issuer: caCert.subject, notBefore, notAfter,
      publicKey: keys.publicKey, signingKey: caKeys.privateKey, signingAlgorithm: alg, extensions,
    })
    return { certPem: cert.toString('pem') + '\n', keyPem: await keyPem(keys.privateKey) }
  }
  const sans: x509.JsonGeneralName[] = hosts.map((h) => (/^[\d.]+$|:/.test(h) ? { type: 'ip', value: h } : { type: 'dns', value: h }))
  const server = await issue('CN=kube-apiserver', 'server', sans)
  return {
    ca: { certPem: caCert.toString('pem') + '\n', keyPem: await keyPem(caKeys.privateKey) },
    server,
    issueClientCert: (user, groups) => issue([`CN=${escapeDn(user)}`, ...groups.map((g) => `O=${escapeDn(g)}`)].join(', '), 'client'),
  }
}
