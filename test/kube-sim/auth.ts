import type { IncomingMessage } from 'node:http'
import type { TLSSocket } from 'node:tls'
import { createRemoteJWKSet, decodeJwt, exportJWK, generateKeyPair, jwtVerify, SignJWT, type CryptoKey, type JWTPayload } from 'jose'

export interface UserInfo { username: string; uid?: string; groups: string[]; extra?: Record<string, string[]> }

export interface OidcOptions {
  issuerUrl: string
  clientId: string
  /** Claim that names the user (default `sub`, as kube-apiserver's --oidc-username-claim). */
  usernameClaim?: string
  /** Prefix for the user name; default as the apiserver: `<issuer>#` unless the claim is `email`. */
  usernamePrefix?: string
  groupsClaim?: string
  groupsPrefix?: string
}

export const saIssuer = 'https://kubernetes.default.svc.cluster.local'

export interface AuthenticatorOptions {
  oidc?: OidcOptions
  /** Resolves a service account's uid; a token for a deleted (or re-created) account is refused, as on a real cluster. */
  serviceAccountUid(namespace: string, name: string): string | undefined
}

/**
 * The apiserver's authenticator chain: client certificate, then bearer token (static, service
 * account JWT, OIDC ID token). Anything that matches none is anonymous and is refused by the server.
 */
export class Authenticator {
  private readonly staticTokens = new Map<string, UserInfo>()
  private saKeys?: { privateKey: CryptoKey; publicKey: CryptoKey }
  private oidcKeys?: ReturnType<typeof createRemoteJWKSet>

  constructor(private readonly opts: AuthenticatorOptions) {}

  async init(): Promise<void> {
    this.saKeys = await generateKeyPair('ES256', { extractable: true })
  }

  addStaticToken(token: string, user: UserInfo): void { this.staticTokens.set(token, user) }

  /** The service-account signing key's public half, as a JWK (served at /openid/v1/jwks). */
  async jwks(): Promise<{ keys: object[] }> {
    return { keys: [{ ...(await exportJWK(this.saKeys!.publicKey)), use: 'sig', alg: 'ES256', kid: 'kube-sim' }] }
  }

  async issueServiceAccountToken(namespace: string, name: string, uid: string, expirationSeconds = 3600, audiences = [saIssuer]): Promise<{ token: string; expiresAt: Date }> {
    const now = Math.floor(Date.now() / 1000)
    const token = await new SignJWT({ 'kubernetes.io': { namespace, serviceaccount: { name, uid } } })
      .setProtectedHeader({ alg: 'ES256', kid: 'kube-sim' })
      .setIssuer(saIssuer).setSubject(`system:serviceaccount:${namespace}:${name}`).setAudience(audiences)
      .setIssuedAt(now).setNotBefore(now).setExpirationTime(now + expirationSeconds)
      .sign(this.saKeys!.privateKey)
    return { token, expiresAt: new Date((now + expirationSeconds) * 1000) }
  }

  async authenticate(req: IncomingMessage): Promise<UserInfo | undefined> {
    const fromCert = this.fromClientCert(req)
    if (fromCert) return fromCert
    const header = req.headers.authorization ?? ''
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header)
    if (!m) return undefined
    return this.fromToken(m[1])
  }

  private fromClientCert(req: IncomingMessage): UserInfo | undefined {
    const socket = req.socket as TLSSocket
    if (typeof socket.getPeerCertificate !== 'function' || !socket.authorized) return undefined
    const cert = socket.getPeerCertificate()
    const cn = cert?.subject?.CN
    if (!cn) return undefined
    const o = cert.subject.O as string | string[] | undefined
    const groups = o === undefined ? [] : Array.isArray(o) ? o : [o]
    return { username: Array.isArray(cn) ? cn[0] : cn, groups: [...groups, 'system:authenticated'] }
  }

  async fromToken(token: string): Promise<UserInfo | undefined> {
    const user = this.staticTokens.get(token)
    if (user) return user
    let claims: JWTPayload
    try { claims = decodeJwt(token) } catch { return undefined }
    if (claims.iss === saIssuer) return this.fromServiceAccountToken(token)
    if (this.opts.oidc && claims.iss === this.opts.oidc.issuerUrl) return this.fromOidcToken(token)
    return undefined
  }

  private async fromServiceAccountToken(token: string): Promise<UserInfo | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.saKeys!.publicKey, { issuer: saIssuer })
      const k = payload['kubernetes.io'] as { namespace: string; serviceaccount: { name: string; uid: string } } | undefined
      if (!k) return undefined
      const uid = this.opts.serviceAccountUid(k.namespace, k.serviceaccount.name)
      if (!uid || uid !== k.serviceaccount.uid) return undefined
      return {
        username: `system:serviceaccount:${k.namespace}:${k.serviceaccount.name}`, uid,
        groups: ['system:serviceaccounts', `system:serviceaccounts:${k.namespace}`, 'system:authenticated'],
      }
    } catch { return undefined }
  }

  private async fromOidcToken(token: string): Promise<UserInfo | undefined> {
    const o = this.opts.oidc!
    if (!this.oidcKeys) {
      try {
        const res = await fetch(`${o.issuerUrl.replace(/\/$/, '')}/.well-known/openid-configuration`)
        if (!res.ok) return undefined
        const doc = (await res.json()) as { jwks_uri: string }
        this.oidcKeys = createRemoteJWKSet(new URL(doc.jwks_uri))
      } catch { return undefined } // issuer unreachable: retry discovery on the next request
    }
    let payload: JWTPayload
    try {
      ({ payload } = await jwtVerify(token, this.oidcKeys, { issuer: o.issuerUrl, audience: o.clientId }))
    } catch { return undefined }
    const claim = o.usernameClaim ?? 'sub'
    const raw = payload[claim]
    if (typeof raw !== 'string' || !raw) return undefined
    if (claim === 'email' && payload.email_verified === false) return undefined
    const prefix = o.usernamePrefix ?? (claim === 'email' ? '' : `${o.issuerUrl}#`)
    const groupsRaw = o.groupsClaim ? payload[o.groupsClaim] : undefined
    const groups = (Array.isArray(groupsRaw) ? groupsRaw : typeof groupsRaw === 'string' ? [groupsRaw] : []).map((g) => `${o.groupsPrefix ?? ''}${String(g)}`)
    return { username: `${prefix === '-' ? '' : prefix}${raw}`, groups: [...groups, 'system:authenticated'] }
  }
}
