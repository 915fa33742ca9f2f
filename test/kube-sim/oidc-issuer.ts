// A minimal OpenID Connect issuer for tests: discovery document, JWKS, and a signer for ID tokens.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose'

export interface TestIssuer {
  issuerUrl: string
  /** Signs an ID token for `audience` with the issuer's key (iat/exp filled in). */
  sign(claims: JWTPayload, audience: string, opts?: { expiresInSeconds?: number }): Promise<string>
  close(): Promise<void>
}

export async function startTestIssuer(): Promise<TestIssuer> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true })
  const jwk = { ...(await exportJWK(publicKey)), kid: 'test-key', alg: 'RS256', use: 'sig' }
  let issuerUrl = ''
  const server: Server = createServer((req, res) => {
    const json = (o: unknown) => { res.writeHead(200, { 'Content-Type': 'application/json' }); res.end(JSON.stringify(o)) }
    if (req.url === '/.well-known/openid-configuration') json({ issuer: issuerUrl, jwks_uri: `${issuerUrl}/jwks`, id_token_signing_alg_values_supported: ['RS256'], response_types_supported: ['id_token'], subject_types_supported: ['public'] })
    else if (req.url === '/jwks') json({ keys: [jwk] })
    else { res.writeHead(404); res.end() }
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  issuerUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    issuerUrl,
    sign: (claims, audience, o = {}) => new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'test-key' }).setIssuer(issuerUrl).setAudience(audience)
      .setIssuedAt().setExpirationTime(`${o.expiresInSeconds ?? 600}s`).sign(privateKey as CryptoKey),
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()) }),
  }
}
