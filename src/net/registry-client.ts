// Talking to container registries: which registry host an image reference names, and the Docker Registry
// v2 handshake (`GET /v2/`, answering a Basic or Bearer challenge) that proves a registry is reachable and
// accepts the stored credentials.
//
// Every address contacted (the registry, each redirect, the token realm the registry names) passes the
// outbound policy first, because the realm and redirects come from the remote side and could otherwise
// point the server at a metadata endpoint. Outcomes are described from status codes and error codes only:
// neither credentials nor tokens, nor the remote's own text, ever reach a message.
import { BadRequest } from '../errors.ts'
import type { OutboundPolicy } from './outbound-policy.ts'
import { describeNetworkError, errorCodes } from './network-errors.ts'
import { guardedFetch } from './guarded-fetch.ts'

export const REGISTRY_TIMEOUT_MS = 10_000

/** The host Docker Hub images are known by, whatever alias the reference used. */
export const DOCKER_HUB_HOST = 'docker.io'
const DOCKER_HUB_ALIASES = new Set(['docker.io', 'index.docker.io', 'registry-1.docker.io', 'registry.hub.docker.com'])

export interface ImageReference {
  /** Registry host as images name it, lower-case, with an explicit port when it has one (`localhost:5000`). */
  host: string
  /** Repository path inside the registry (`library/nginx` for `nginx`). */
  repository: string
  tag: string | null
  digest: string | null
}

// The grammar of github.com/distribution/reference, in the pieces it is built from.
const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/
const DOMAIN = /^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:.]+\])(?::[0-9]{1,5})?$/
const TAG = /^[\w][\w.-]{0,127}$/
const DIGEST = /^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]{32,}$/
const MAX_NAME = 255

/** Normalises a registry host for comparison: lower-case, Docker Hub aliases folded, the https port dropped. */
export function normaliseHost(host: string): string {
  const lower = host.toLowerCase().replace(/:443$/, '')
  return DOCKER_HUB_ALIASES.has(lower) ? DOCKER_HUB_HOST : lower
}

/**
 * Parses an image reference the way the Docker client does: the first path component is a registry host
 * only when it looks like one (has a `.` or a `:`, or is `localhost`); otherwise the image is on Docker Hub,
 * and a single-component name lives under `library/`. Throws BadRequest when the text is not a reference.
 */
export function parseImageReference(text: string): ImageReference {
  const invalid = (why: string) => new BadRequest(`image "${text.length > 80 ? `${text.slice(0, 80)}…` : text}" is not a valid image reference: ${why}`)
  const ref = text.trim()
  if (!ref) throw invalid('it is empty')
  if (/\s/.test(ref)) throw invalid('it contains whitespace')

  let rest = ref
  let digest: string | null = null
  const at = rest.indexOf('@')
  if (at !== -1) {
    digest = rest.slice(at + 1)
    rest = rest.slice(0, at)
    if (!DIGEST.test(digest)) throw invalid('the digest is malformed')
  }

  let tag: string | null = null
  const lastColon = rest.lastIndexOf(':')
  if (lastColon > rest.lastIndexOf('/')) {
    tag = rest.slice(lastColon + 1)
    rest = rest.slice(0, lastColon)
    if (!TAG.test(tag)) throw invalid('the tag is malformed')
  }

  let host = DOCKER_HUB_HOST
  let path = rest
  const slash = rest.indexOf('/')
  if (slash !== -1) {
    const first = rest.slice(0, slash)
    if (first.includes('.') || first.includes(':') || first === 'localhost') {
      if (!DOMAIN.test(first)) throw invalid('the registry host is malformed')
      host = normaliseHost(first)
      path = rest.slice(slash + 1)
    }
  }
  if (!path) throw invalid('the repository name is missing')
  if (path.length > MAX_NAME) throw invalid(`the repository name is longer than ${MAX_NAME} characters`)
  if (!path.split('/').every((c) => PATH_COMPONENT.test(c))) throw invalid('the repository name must be lower-case letters, digits and separators')
  if (host === DOCKER_HUB_HOST && !path.includes('/')) path = `library/${path}`
  return { host, repository: path, tag, digest }
}

// The handshake

export interface RegistryCredentials { username: string; secret: string }

export interface HandshakeResult { ok: boolean; message: string }

export interface HandshakeOptions {
  policy: OutboundPolicy
  /** The whole handshake, every request included, ends by then. */
  timeoutMs?: number
  /** Injectable for tests; otherwise a fetch whose every connection is held to `policy` (guarded-fetch.ts). */
  fetch?: typeof fetch
}

/** A failure whose message is ready for the user; anything else is described from its error codes. */
class HandshakeFailure extends Error {}

const MAX_REDIRECTS = 5
const MAX_TOKEN_BODY = 256 * 1024

/** What a failed request means, from error codes and names only (fetch's own text can carry the URL). */
export function describeRegistryError(err: unknown, what: string, timeoutMs: number): string {
  if (err instanceof HandshakeFailure || err instanceof BadRequest) return err.message
  const { names } = errorCodes(err)
  if (names.includes('TimeoutError') || names.includes('AbortError')) return `cannot reach the ${what}: no answer within ${Math.round(timeoutMs / 100) / 10} s`
  return describeNetworkError(err, what)?.message ?? `cannot reach the ${what}`
}

export interface Challenge { scheme: 'basic' | 'bearer'; params: Record<string, string> }

/**
 * The challenges of a `WWW-Authenticate` header (several may arrive joined by commas). Parameter values
 * may be quoted, with backslash escapes, and contain commas.
 */
export function parseChallenges(header: string | null): Challenge[] {
  if (!header) return []
  const all: Array<{ scheme: string; params: Record<string, string> }> = []
  // A word followed by "=" is a parameter of the challenge before it; a bare word starts a new challenge.
  const item = /[\s,]*([A-Za-z0-9!#$%&'*+.^_`|~-]+)(?:\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,"]*)))?/y
  for (let m = item.exec(header); m; m = item.exec(header)) {
    const [, name, quoted, bare] = m
    if (quoted === undefined && bare === undefined) all.push({ scheme: name.toLowerCase(), params: {} })
    else if (all.length) all[all.length - 1].params[name.toLowerCase()] = quoted !== undefined ? quoted.replace(/\\(.)/g, '$1') : bare
  }
  return all.filter((c): c is Challenge => c.scheme === 'basic' || c.scheme === 'bearer')
}

const basic = (c: RegistryCredentials) => `Basic ${Buffer.from(`${c.username}:${c.secret}`, 'utf8').toString('base64')}`

/**
 * One GET, following redirects by hand: each hop is checked against the policy, and the Authorization
 * header goes only to the origin it was meant for.
 */
async function get(url: URL, headers: Record<string, string>, opts: Required<Pick<HandshakeOptions, 'policy' | 'fetch'>> & { signal: AbortSignal; what: string; method?: 'GET' | 'HEAD' }): Promise<Response> {
  let current = url
  let sendHeaders = headers
  for (let hop = 0; ; hop++) {
    const res = await opts.fetch(current, { method: opts.method ?? 'GET', headers: { accept: 'application/json', ...sendHeaders }, redirect: 'manual', signal: opts.signal })
    const location = res.status >= 300 && res.status < 400 ? res.headers.get('location') : null
    if (!location) return res
    await res.body?.cancel()
    if (hop >= MAX_REDIRECTS) throw new HandshakeFailure(`the ${opts.what} redirected more than ${MAX_REDIRECTS} times`)
    let next: URL
    try { next = new URL(location, current) } catch { throw new HandshakeFailure(`the ${opts.what} redirected to a malformed address`) }
    try {
      await opts.policy.check(next.toString(), `${opts.what} redirect`)
    } catch (err) {
      throw new HandshakeFailure(`the ${opts.what} redirected to an address that is not allowed: ${(err as Error).message}`)
    }
    if (next.origin !== current.origin) {
      const { authorization: _dropped, ...rest } = sendHeaders
      sendHeaders = rest
    }
    current = next
  }
}

/** Reads at most `limit` bytes of a body as text; a larger body is an error, not a truncation. */
async function readCapped(res: Response, limit: number, what: string): Promise<string> {
  if (!res.body) return ''
  const reader = res.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel()
      throw new HandshakeFailure(`the ${what} answered with more than ${limit} bytes`)
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks).toString('utf8')
}

function statusWords(status: number): string {
  if (status === 401) return 'refused the credentials (401)'
  if (status === 403) return 'denied access with these credentials (403)'
  return `answered ${status}`
}

/** Asks the challenge's token service for a bearer token (anonymous when there are no credentials). */
async function fetchToken(challenge: Challenge, creds: RegistryCredentials | null, opts: Required<HandshakeOptions> & { signal: AbortSignal }): Promise<string> {
  const realm = challenge.params.realm
  if (!realm) throw new HandshakeFailure('the registry asked for a bearer token but named no token service (realm)')
  let url: URL
  try {
    url = await opts.policy.check(realm, 'token service')
  } catch (err) {
    throw new HandshakeFailure(`the registry's token service is not allowed: ${(err as Error).message}`)
  }
  if (challenge.params.service) url.searchParams.set('service', challenge.params.service)
  if (challenge.params.scope) url.searchParams.set('scope', challenge.params.scope)
  if (creds) url.searchParams.set('account', creds.username)
  let res: Response
  try {
    res = await get(url, creds ? { authorization: basic(creds) } : {}, { ...opts, what: 'token service' })
  } catch (err) {
    throw new HandshakeFailure(describeRegistryError(err, 'token service', opts.timeoutMs))
  }
  if (res.status === 401 || res.status === 403) {
    await res.body?.cancel()
    throw new HandshakeFailure(creds ? `registry ${statusWords(res.status)}` : `the registry's token service refused anonymous access (${res.status}); store credentials for it`)
  }
  if (res.status !== 200) {
    await res.body?.cancel()
    throw new HandshakeFailure(`token service answered ${res.status}`)
  }
  let body: unknown
  try {
    body = JSON.parse(await readCapped(res, MAX_TOKEN_BODY, 'token service'))
  } catch (err) {
    if (err instanceof SyntaxError) throw new HandshakeFailure('token service answered with something that is not JSON')
    throw new HandshakeFailure(describeRegistryError(err, 'token service', opts.timeoutMs))
  }
  const { token, access_token } = (body ?? {}) as { token?: unknown; access_token?: unknown }
  const found = typeof token === 'string' && token ? token : typeof access_token === 'string' && access_token ? access_token : null
  if (!found) throw new HandshakeFailure('token service answered without a token')
  return found
}

/**
 * The Docker Registry v2 handshake against `baseUrl` (the registry's API root). Never throws: every
 * outcome is a result with a message fit for the user.
 */
export async function checkRegistry(baseUrl: string, creds: RegistryCredentials | null, options: HandshakeOptions): Promise<HandshakeResult> {
  const timeoutMs = options.timeoutMs ?? REGISTRY_TIMEOUT_MS
  const opts = { policy: options.policy, fetch: options.fetch ?? guardedFetch(options.policy, 'registry'), timeoutMs, signal: AbortSignal.timeout(timeoutMs) }
  const who = creds ? ` as ${creds.username}` : ''
  try {
    const v2 = new URL('v2/', (await options.policy.check(baseUrl, 'url')).toString().replace(/\/?$/, '/'))
    const first = await get(v2, {}, { ...opts, what: 'registry' })
    await first.body?.cancel()
    if (first.status === 200) {
      return { ok: true, message: creds ? 'connected; the registry allows anonymous access, so the credentials were not needed' : 'connected (anonymous access)' }
    }
    if (first.status === 404) return { ok: false, message: 'no Docker Registry v2 API at this url (GET /v2/ answered 404)' }
    if (first.status !== 401) return { ok: false, message: `registry answered ${first.status}` }

    const challenges = parseChallenges(first.headers.get('www-authenticate'))
    const bearer = challenges.find((c) => c.scheme === 'bearer')
    const basicChallenge = challenges.find((c) => c.scheme === 'basic')
    let authorization: string
    let how: string
    if (bearer) {
      authorization = `Bearer ${await fetchToken(bearer, creds, opts)}`
      how = 'token'
    } else if (basicChallenge) {
      if (!creds) return { ok: false, message: 'the registry requires credentials (401, Basic) and none are stored' }
      authorization = basic(creds)
      how = 'basic auth'
    } else {
      return { ok: false, message: 'registry answered 401 without a Basic or Bearer challenge' }
    }

    const second = await get(v2, { authorization }, { ...opts, what: 'registry' })
    await second.body?.cancel()
    if (second.status === 200) return { ok: true, message: `connected${who} (${how})` }
    if (second.status === 401 && bearer) return { ok: false, message: 'registry refused the token its token service issued (401)' }
    return { ok: false, message: `registry ${statusWords(second.status)}` }
  } catch (err) {
    return { ok: false, message: describeRegistryError(err, 'registry', timeoutMs) }
  }
}

// Confirming a pushed image

/** Every manifest media type a build may push: asked for explicitly, or a registry may answer 404 for them. */
const MANIFEST_ACCEPT = [
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.docker.distribution.manifest.v2+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
].join(', ')

export type ManifestCheck = { ok: true; digest: string } | { ok: false; message: string }

/**
 * `HEAD /v2/<repository>/manifests/<reference>` with the stored login (answering the registry's Basic or
 * Bearer challenge, pull scope), so a build is called completed only once its registry serves the image.
 * The digest is the registry's `Docker-Content-Digest`; a registry that omits it is asked by digest instead
 * (`expected`), which it can only answer 200 when it holds exactly those bytes. Never throws.
 */
export async function confirmManifest(baseUrl: string, repository: string, reference: string, creds: RegistryCredentials | null, options: HandshakeOptions & { expected?: string }): Promise<ManifestCheck> {
  const timeoutMs = options.timeoutMs ?? REGISTRY_TIMEOUT_MS
  const opts = { policy: options.policy, fetch: options.fetch ?? guardedFetch(options.policy, 'registry'), timeoutMs, signal: AbortSignal.timeout(timeoutMs) }
  try {
    const root = (await options.policy.check(baseUrl, 'url')).toString().replace(/\/?$/, '/')
    const manifestUrl = (ref: string) => new URL(`v2/${repository}/manifests/${encodeURIComponent(ref)}`, root)
    let authorization: string | null = null
    const head = async (ref: string): Promise<Response> => {
      const res = await get(manifestUrl(ref), { accept: MANIFEST_ACCEPT, ...(authorization && { authorization }) }, { ...opts, what: 'registry', method: 'HEAD' })
      await res.body?.cancel()
      return res
    }
    let res = await head(reference)
    if (res.status === 401 && !authorization) {
      const challenges = parseChallenges(res.headers.get('www-authenticate'))
      const bearer = challenges.find((c) => c.scheme === 'bearer')
      if (bearer) {
        const challenge = { ...bearer, params: { scope: `repository:${repository}:pull`, ...bearer.params } }
        authorization = `Bearer ${await fetchToken(challenge, creds, opts)}`
      } else if (challenges.some((c) => c.scheme === 'basic') && creds) {
        authorization = basic(creds)
      } else {
        return { ok: false, message: 'the registry requires credentials to read the pushed image (401) and none that it accepts are stored' }
      }
      res = await head(reference)
    }
    if (res.status === 404) return { ok: false, message: `the registry does not have ${repository}:${reference} (404): the push did not arrive` }
    if (res.status !== 200) return { ok: false, message: `the registry ${statusWords(res.status)} when asked for the pushed manifest` }
    const digest = res.headers.get('docker-content-digest')
    if (digest && /^sha256:[a-f0-9]{64}$/.test(digest)) return { ok: true, digest }
    if (!options.expected) return { ok: false, message: 'the registry did not say which manifest digest it holds' }
    const byDigest = await head(options.expected)
    if (byDigest.status === 200) return { ok: true, digest: options.expected }
    return { ok: false, message: `the registry does not hold the manifest ${options.expected} (${byDigest.status})` }
  } catch (err) {
    return { ok: false, message: describeRegistryError(err, 'registry', timeoutMs) }
  }
}
