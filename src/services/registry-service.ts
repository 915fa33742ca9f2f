// Container registries: global records that admins manage and every signed-in user reads (to pick a
// registry for an image or a build). Credentials are sealed against the record id and opened only for
// the connection test and for builds that push; no reply or log carries them.
import { BadRequest, NotFound } from '../errors.ts'
import type { Sealer } from '../crypto/sealer.ts'
import type { OutboundPolicy } from '../net/outbound-policy.ts'
import { checkRegistry, parseImageReference, normaliseHost, DOCKER_HUB_HOST, REGISTRY_TIMEOUT_MS, type RegistryCredentials } from '../net/registry-client.ts'
import { isId } from '../repositories/ids.ts'
import { searchFilter, type Page, type PageRequest } from '../repositories/pagination.ts'
import { toRegistry, type Registry, type RegistryChanges, type RegistryDoc, type RegistryRepository, type RegistryType } from '../repositories/registries.ts'

/** Where each hosted registry's API lives when the admin does not say. */
const DEFAULT_URLS: Partial<Record<RegistryType, string>> = {
  dockerhub: 'https://registry-1.docker.io',
  ghcr: 'https://ghcr.io',
  gcr: 'https://gcr.io',
  quay: 'https://quay.io',
}

export interface RegistryServiceDeps {
  registries: RegistryRepository
  sealer: Sealer
  policy: OutboundPolicy
  timeoutMs?: number
  fetch?: typeof fetch
}

interface CredentialFields { username?: string; password?: string; token?: string }
export interface CreateRegistry extends CredentialFields { name: string; registry_type: RegistryType; url?: string; is_default?: boolean }
export interface UpdateRegistry extends CredentialFields { name?: string; registry_type?: RegistryType; url?: string; clear_credentials?: boolean }
export interface RegistryTestResult { status: 'connected' | 'error'; message: string }

/** The secret half of a login: a password and a token are the same thing to a registry, so one of them. */
function secretOf(body: CredentialFields): string | undefined {
  if (body.password !== undefined && body.token !== undefined) throw new BadRequest('give either password or token, not both')
  return body.password ?? body.token
}

function trimmedName(name: string): string {
  const trimmed = name.trim()
  if (!trimmed) throw new BadRequest('body/name must not be blank')
  return trimmed
}

export class RegistryService {
  constructor(private readonly deps: RegistryServiceDeps) {}

  private context(id: string): string { return `registries:${id}` }

  private seal(id: string, creds: RegistryCredentials): string {
    return this.deps.sealer.seal(creds, this.context(id))
  }

  private open(doc: RegistryDoc): RegistryCredentials | null {
    return doc.credentials_sealed === null ? null : this.deps.sealer.open<RegistryCredentials>(doc.credentials_sealed, this.context(doc._id))
  }

  /**
   * The url to store and the host images name the registry by. Saving refuses what every connection would
   * (scheme, credentials in the URL, a refused literal address) but resolves no name: a registry may be
   * added while its host is unreachable from here, and where the name points is checked on each connection.
   */
  private endpoint(type: RegistryType, given: string | undefined): { url: string; host: string } {
    const raw = given ?? DEFAULT_URLS[type]
    if (raw === undefined) throw new BadRequest(`url is required for ${type} registries`)
    const url = this.deps.policy.checkFormat(raw.trim(), 'url')
    if (url.search || url.hash) throw new BadRequest('url must not have a query or a fragment')
    // Docker Hub's API host is not the host its images are named by; a mirror of it serves docker.io names too.
    return { url: url.toString().replace(/\/+$/, ''), host: type === 'dockerhub' ? DOCKER_HUB_HOST : normaliseHost(url.host) }
  }

  private async find(id: string): Promise<RegistryDoc> {
    const doc = isId(id) ? await this.deps.registries.findById(id) : null
    if (!doc) throw new NotFound('registry')
    return doc
  }

  // Reads (every signed-in user)

  list(req: PageRequest, filter: { registry_type?: RegistryType } = {}): Promise<Page<Registry>> {
    return this.deps.registries.list(req, filter)
  }

  async get(id: string): Promise<Registry> {
    return toRegistry(await this.find(id))
  }

  /** The registry an image would be pulled from (or pushed to), by the host its reference names. */
  async lookup(image: string): Promise<Registry> {
    const { host } = parseImageReference(image)
    const doc = await this.deps.registries.findByHost(host)
    if (!doc) throw new NotFound(`registry for ${host}`)
    return toRegistry(doc)
  }

  /** Registries whose name or url matches, for global search. */
  async search(q: string, limit: number): Promise<Array<{ id: string; name: string }>> {
    const docs = await this.deps.registries.search(searchFilter<RegistryDoc>(q, ['name', 'url']), limit)
    return docs.map((d) => ({ id: d._id, name: d.name }))
  }

  /**
   * The stored login, opened, for a build that pushes to the registry; null for anonymous access. Never
   * to be put in a reply or a log.
   */
  async credentialsFor(id: string): Promise<{ registry: Registry; credentials: RegistryCredentials | null }> {
    const doc = await this.find(id)
    return { registry: toRegistry(doc), credentials: this.open(doc) }
  }

  // Administration (the routes live under /v1/api/admin, so only admins reach these)

  async create(body: CreateRegistry): Promise<Registry> {
    const name = trimmedName(body.name)
    const secret = secretOf(body)
    if (secret !== undefined && body.username === undefined) throw new BadRequest('a password or token needs a username')
    const { url, host } = this.endpoint(body.registry_type, body.url)
    const id = this.deps.registries.newId()
    let doc = await this.deps.registries.create(id, {
      name, registry_type: body.registry_type, url, host, username: body.username ?? null,
      credentials_sealed: secret === undefined ? null : this.seal(id, { username: body.username!, secret }),
    })
    if (body.is_default) doc = (await this.deps.registries.setDefault(id)) ?? doc
    else if (await this.deps.registries.claimDefault(id)) doc = { ...doc, is_default: true }
    // Tested at once, so the record says connected or error from the start rather than "unknown" until
    // someone presses Test; a registry that cannot be reached now is still added, with that error.
    return toRegistry((await this.check(doc)).doc)
  }

  async update(id: string, body: UpdateRegistry): Promise<Registry> {
    const doc = await this.find(id)
    const changes: RegistryChanges = {}
    if (body.name !== undefined) changes.name = trimmedName(body.name)

    if (body.url !== undefined || body.registry_type !== undefined) {
      const type = body.registry_type ?? doc.registry_type
      // A new type brings its own default url; a type without one needs the url given.
      const url = body.url ?? (body.registry_type !== undefined && body.registry_type !== doc.registry_type ? DEFAULT_URLS[type] : doc.url)
      Object.assign(changes, { registry_type: type }, this.endpoint(type, url))
    }

    const secret = secretOf(body)
    if (body.clear_credentials) {
      if (secret !== undefined || body.username !== undefined) throw new BadRequest('clear_credentials cannot be combined with new credentials')
      Object.assign(changes, { username: null, credentials_sealed: null })
    } else if (secret !== undefined) {
      const username = body.username ?? doc.username
      if (username === null) throw new BadRequest('a password or token needs a username')
      Object.assign(changes, { username, credentials_sealed: this.seal(doc._id, { username, secret }) })
    } else if (body.username !== undefined) {
      const stored = this.open(doc)
      Object.assign(changes, { username: body.username, credentials_sealed: stored ? this.seal(doc._id, { ...stored, username: body.username }) : null })
    }

    // A different endpoint or login makes the last test's outcome meaningless.
    const retest = ['url', 'registry_type', 'username', 'credentials_sealed'].some((k) => k in changes && changes[k as keyof RegistryChanges] !== doc[k as keyof RegistryDoc])
    if (retest) Object.assign(changes, { status: 'unknown', status_message: 'changed since the last test', last_checked_at: null })

    const updated = await this.deps.registries.update(doc._id, changes)
    if (!updated) throw new NotFound('registry')
    // …so it is tested again with what changed, as an add is.
    return toRegistry(retest ? (await this.check(updated)).doc : updated)
  }

  async delete(id: string): Promise<void> {
    if (!isId(id)) throw new NotFound('registry')
    const removed = await this.deps.registries.delete(id)
    if (!removed) throw new NotFound('registry')
    if (removed.is_default) await this.deps.registries.ensureDefault()
  }

  async setDefault(id: string): Promise<Registry> {
    const doc = await this.find(id)
    const updated = await this.deps.registries.setDefault(doc._id)
    if (!updated) throw new NotFound('registry')
    return toRegistry(updated)
  }

  /** The v2 handshake with the stored login; the outcome is stored and returned either way. */
  async test(id: string): Promise<RegistryTestResult> {
    return (await this.check(await this.find(id))).result
  }

  /** The handshake for `doc`, its outcome stored; the record as it now stands beside it. */
  private async check(doc: RegistryDoc): Promise<{ result: RegistryTestResult; doc: RegistryDoc }> {
    let creds: RegistryCredentials | null
    try {
      creds = this.open(doc)
    } catch {
      return this.record(doc, { ok: false, message: 'credentials cannot be opened with the current encryption keys' })
    }
    const result = await checkRegistry(doc.url, creds, { policy: this.deps.policy, timeoutMs: this.deps.timeoutMs ?? REGISTRY_TIMEOUT_MS, ...(this.deps.fetch && { fetch: this.deps.fetch }) })
    return this.record(doc, result)
  }

  private async record(doc: RegistryDoc, outcome: { ok: boolean; message: string }): Promise<{ result: RegistryTestResult; doc: RegistryDoc }> {
    const status = outcome.ok ? 'connected' : 'error'
    const at = new Date()
    await this.deps.registries.recordStatus(doc._id, status, outcome.message, at)
    return { result: { status, message: outcome.message }, doc: { ...doc, status, status_message: outcome.message, last_checked_at: at } }
  }
}
