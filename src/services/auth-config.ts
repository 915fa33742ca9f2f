// Sign-in configuration that the plain schema in src/config.ts cannot express: the JSON list of OAuth2/OIDC
// providers (OAUTH_PROVIDERS) and the rule that production needs a real JWT_SECRET. Checked once at
// start-up, with messages that name the variable (and the provider) but never echo a value.
import { Type, type Static } from 'typebox'
import { Value } from 'typebox/value'
import type { Config } from '../config.ts'
import { canonicalAddress, classifyAddress } from '../net/ip-address.ts'

export const PROVIDER_TYPES = ['github', 'google', 'gitlab', 'oidc'] as const
export type ProviderType = typeof PROVIDER_TYPES[number]

const HttpUrl = (description: string) => Type.String({ pattern: '^https?://[^\\s]+$', maxLength: 2048, description })

export const ProviderConfigSchema = Type.Object({
  name: Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,31}$', description: 'the key used in paths: /auth/oauth/<name>/authorize' }),
  type: Type.Union([Type.Literal('github'), Type.Literal('google'), Type.Literal('gitlab'), Type.Literal('oidc')]),
  client_id: Type.String({ minLength: 1, maxLength: 512 }),
  client_secret: Type.String({ minLength: 1, maxLength: 2048 }),
  issuer: Type.Optional(HttpUrl('OIDC issuer (discovery at <issuer>/.well-known/openid-configuration); required for oidc, optional for gitlab (self-managed)')),
  display_name: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  icon: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  scopes: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { maxItems: 32 })),
  trusted: Type.Optional(Type.Boolean({ description: 'may create accounts without an invite code' })),
  base_url: Type.Optional(HttpUrl('github only: GitHub Enterprise address (default https://github.com)')),
  api_url: Type.Optional(HttpUrl('github only: REST API address (default https://api.github.com)')),
}, { additionalProperties: false })

export type ProviderConfig = Static<typeof ProviderConfigSchema>

const DEFAULTS: Record<ProviderType, { display_name: string; icon: string }> = {
  github: { display_name: 'GitHub', icon: 'github' },
  google: { display_name: 'Google', icon: 'google' },
  gitlab: { display_name: 'GitLab', icon: 'gitlab' },
  oidc: { display_name: 'Single sign-on', icon: 'key' },
}

export function providerDisplay(p: ProviderConfig): { display_name: string; icon: string } {
  return { display_name: p.display_name ?? DEFAULTS[p.type].display_name, icon: p.icon ?? DEFAULTS[p.type].icon }
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]'])

/** OIDC issuers must be https; plain http is accepted on loopback only (local identity providers, tests). */
function insecureUrl(url: string): boolean {
  const parsed = new URL(url)
  return parsed.protocol !== 'https:' && !LOOPBACK.has(parsed.hostname)
}

/**
 * What the outbound policy refuses everywhere (unspecified, link-local, cloud metadata), in any spelling,
 * refused here too: these addresses are the operator's, but 0.0.0.0 reaches this host and the metadata
 * address hands out the machine's cloud credentials, so neither is ever a sign-in provider. Loopback stays
 * allowed (a local identity provider); names are checked when they are resolved (oauth-providers.ts).
 */
function neverReachable(url: string): string | undefined {
  const address = canonicalAddress(new URL(url).hostname)
  const kind = address && classifyAddress(address)
  return kind === 'unspecified' || kind === 'link-local' || kind === 'metadata' ? kind : undefined
}

export class ProviderConfigError extends Error {}

/** Parses OAUTH_PROVIDERS; throws ProviderConfigError with a one-line message that never contains a value. */
export function parseProviders(raw: string | undefined): ProviderConfig[] {
  if (!raw || raw.trim() === '') return []
  let data: unknown
  try {
    data = JSON.parse(raw)
  } catch {
    throw new ProviderConfigError('OAUTH_PROVIDERS is not valid JSON (expected an array of providers)')
  }
  if (!Array.isArray(data)) throw new ProviderConfigError('OAUTH_PROVIDERS must be a JSON array of providers')
  const names = new Set<string>()
  return data.map((item, i) => {
    const first = Value.Errors(ProviderConfigSchema, item)[0]
    if (first) {
      const where = first.instancePath ? first.instancePath.slice(1).replaceAll('/', '.') : ''
      const field = where || (first.params && 'additionalProperties' in first.params ? String(first.params.additionalProperties) : '')
      throw new ProviderConfigError(`OAUTH_PROVIDERS[${i}]${field ? `.${field}` : ''} ${first.message}`)
    }
    const p = item as ProviderConfig
    if (names.has(p.name)) throw new ProviderConfigError(`OAUTH_PROVIDERS[${i}].name is used by two providers`)
    names.add(p.name)
    if (p.type === 'oidc' && !p.issuer) throw new ProviderConfigError(`OAUTH_PROVIDERS[${i}].issuer is required for type oidc`)
    if ((p.type === 'github' || p.type === 'google') && p.issuer) throw new ProviderConfigError(`OAUTH_PROVIDERS[${i}].issuer is not used by type ${p.type}`)
    if (p.type !== 'github' && (p.base_url || p.api_url)) throw new ProviderConfigError(`OAUTH_PROVIDERS[${i}].base_url and api_url are for type github only`)
    if (p.issuer && insecureUrl(p.issuer)) throw new ProviderConfigError(`OAUTH_PROVIDERS[${i}].issuer must be https (http only on loopback)`)
    for (const key of ['base_url', 'api_url'] as const) {
      if (p[key] && insecureUrl(p[key]!)) throw new ProviderConfigError(`OAUTH_PROVIDERS[${i}].${key} must be https (http only on loopback)`)
    }
    for (const key of ['issuer', 'base_url', 'api_url'] as const) {
      const never = p[key] ? neverReachable(p[key]!) : undefined
      if (never) throw new ProviderConfigError(`OAUTH_PROVIDERS[${i}].${key} points at an address the outbound policy never allows (${never})`)
    }
    return p
  })
}

/** The first problem with the sign-in configuration, as "<VARIABLE> <what is wrong>", or undefined. */
export function authConfigProblem(config: Config): string | undefined {
  if (config.NODE_ENV === 'production' && !config.JWT_SECRET) {
    return 'JWT_SECRET is required in production (at least 32 random characters, e.g. `openssl rand -base64 48`)'
  }
  try {
    parseProviders(config.OAUTH_PROVIDERS)
  } catch (err) {
    if (err instanceof ProviderConfigError) return err.message
    throw err
  }
  return undefined
}
