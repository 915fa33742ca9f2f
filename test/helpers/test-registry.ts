// A Docker Registry (HTTP API v2) on loopback that accepts pushes, for the build tests: blob uploads
// (monolithic, chunked, cross-repository mount), manifests by tag and by digest, tag lists, and the two
// authentication schemes registries use — HTTP Basic on every request, or a Bearer token issued by its own
// token service (which checks HTTP Basic and grants `repository:<name>:pull,push` scopes). Content is
// verified as a real registry does (a digest that does not match the bytes is 400 DIGEST_INVALID, a
// manifest naming unknown blobs is 400 MANIFEST_BLOB_UNKNOWN), so a client that gets a 201 really pushed.
import { basicLogin } from './basic-auth.ts'
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface TestRegistryOptions {
  /** `basic` (default): HTTP Basic on every request; `bearer`: token handshake; `none`: anonymous push. */
  auth?: 'basic' | 'bearer' | 'none'
  /** Defaults: `builder` and a random password. */
  username?: string
  password?: string
  /** `service` named in the Bearer challenge (default `test-registry`). */
  service?: string
}

export interface StoredManifest { digest: string; mediaType: string; body: Buffer }

export interface TestRegistry {
  /** http://127.0.0.1:PORT */
  url: string
  /** 127.0.0.1:PORT — the registry part of image references and the key of a docker config.json `auths` entry. */
  host: string
  username: string
  password: string
  /** `{"auths":{"<host>":{"auth":"<base64 user:pass>"}}}`, optionally for another login (to test refusals). */
  dockerConfigJson(login?: { username: string; password: string }): string
  /** Requests received with the answer given; `auth` says which scheme was presented, never its value. */
  requests: Array<{ method: string; path: string; status: number; auth?: 'basic' | 'bearer' }>
  /** A manifest as pushed, by tag or digest. */
  manifest(name: string, reference: string): StoredManifest | undefined
  blob(digest: string): Buffer | undefined
  tags(name: string): string[]
  close(): Promise<void>
}

const NAME = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*'
const ROUTE = new RegExp(`^/v2/(${NAME})/(blobs/uploads/?(.*)|blobs/(.+)|manifests/(.+)|tags/list)$`)
const DIGEST = /^sha256:[a-f0-9]{64}$/
const TAG = /^[\w][\w.-]{0,127}$/

const sha256 = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = []
  for await (const c of req) parts.push(c as Buffer)
  return Buffer.concat(parts)
}

export async function startTestRegistry(options: TestRegistryOptions = {}): Promise<TestRegistry> {
  const mode = options.auth ?? 'basic'
  const username = options.username ?? 'builder'
  const password = options.password ?? randomBytes(12).toString('hex')
  const service = options.service ?? 'test-registry'
  const requests: TestRegistry['requests'] = []
  const blobs = new Map<string, Buffer>()
  /** Blobs linked into each repository (a blob pushed to one repository is not visible from another). */
  const links = new Map<string, Set<string>>()
  const manifests = new Map<string, Map<string, StoredManifest>>()
  const tagMap = new Map<string, Map<string, string>>()
  const uploads = new Map<string, { name: string; data: Buffer[]; size: number }>()
  /** Issued tokens → repository → granted actions. */
  const tokens = new Map<string, Map<string, Set<string>>>()
  let base = ''

  const loginOk = (req: IncomingMessage) => {
    const l = basicLogin(req)
    return l !== null && l.user === username && l.pass === password
  }
  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string | number> = {}) => {
    const text = body === undefined ? '' : JSON.stringify(body)
    res.writeHead(status, { 'docker-distribution-api-version': 'registry/2.0', ...(body === undefined ? { 'content-length': 0 } : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }), ...headers })
    res.end(text)
  }
  const error = (res: ServerResponse, status: number, code: string, message: string, headers: Record<string, string> = {}) =>
    send(res, status, { errors: [{ code, message, detail: null }] }, headers)

  /** Whether the request may do `action` on repository `name` (undefined name: the /v2/ ping). */
  const allowed = (req: IncomingMessage, name: string | undefined, action: 'pull' | 'push'): boolean => {
    if (mode === 'none') return true
    if (mode === 'basic') return loginOk(req)
    const m = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')
    const grants = m ? tokens.get(m[1]) : undefined
    if (!grants) return false
    return name === undefined || (grants.get(name)?.has(action) ?? false)
  }
  const challenge = (name: string | undefined, action: 'pull' | 'push', insufficient: boolean): string => {
    if (mode === 'basic') return 'Basic realm="test-registry"'
    const scope = name ? `,scope="repository:${name}:${action === 'push' ? 'pull,push' : 'pull'}"` : ''
    return `Bearer realm="${base}/token",service="${service}"${scope}${insufficient ? ',error="insufficient_scope"' : ''}`
  }

  const token = (req: IncomingMessage, url: URL, res: ServerResponse) => {
    if (url.searchParams.get('service') !== service) return send(res, 400, { details: 'unknown service' })
    if (!loginOk(req)) return send(res, 401, { details: 'incorrect username or password' }, { 'www-authenticate': 'Basic realm="test-registry token service"' })
    const grants = new Map<string, Set<string>>()
    for (const scope of url.searchParams.getAll('scope').flatMap((s) => s.split(' '))) {
      const m = /^repository:(.+):([a-z,*]+)$/.exec(scope)
      if (!m) continue
      const actions = new Set(m[2].split(',').flatMap((a) => (a === '*' ? ['pull', 'push'] : [a])).filter((a) => a === 'pull' || a === 'push'))
      grants.set(m[1], new Set([...(grants.get(m[1]) ?? []), ...actions]))
    }
    const t = randomBytes(16).toString('hex')
    tokens.set(t, grants)
    send(res, 200, { token: t, access_token: t, expires_in: 300, issued_at: new Date().toISOString() })
  }

  const link = (name: string, digest: string) => {
    const s = links.get(name) ?? new Set<string>()
    s.add(digest)
    links.set(name, s)
  }
  const uploadHeaders = (name: string, id: string, size: number) => ({
    location: `/v2/${name}/blobs/uploads/${id}`, 'docker-upload-uuid': id, range: `0-${Math.max(0, size - 1)}`,
  })
  const finishUpload = (res: ServerResponse, name: string, digest: string | null, data: Buffer) => {
    if (!digest || !DIGEST.test(digest)) return error(res, 400, 'DIGEST_INVALID', 'provided digest did not match uploaded content')
    if (sha256(data) !== digest) return error(res, 400, 'DIGEST_INVALID', 'provided digest did not match uploaded content')
    blobs.set(digest, data)
    link(name, digest)
    send(res, 201, undefined, { location: `/v2/${name}/blobs/${digest}`, 'docker-content-digest': digest })
  }
  const findManifest = (name: string, reference: string): StoredManifest | undefined => {
    const digest = DIGEST.test(reference) ? reference : tagMap.get(name)?.get(reference)
    return digest ? manifests.get(name)?.get(digest) : undefined
  }

  const handle = async (req: IncomingMessage, res: ServerResponse, url: URL) => {
    const method = req.method ?? 'GET'
    if (url.pathname === '/token' && mode === 'bearer' && method === 'GET') return token(req, url, res)
    if (url.pathname === '/v2/' || url.pathname === '/v2') {
      if (!allowed(req, undefined, 'pull')) return error(res, 401, 'UNAUTHORIZED', 'authentication required', { 'www-authenticate': challenge(undefined, 'pull', false) })
      return send(res, 200, {})
    }
    const m = ROUTE.exec(url.pathname)
    if (!m) return error(res, 404, 'NOT_FOUND', 'no such endpoint')
    const [, name, , uploadId, blobDigest, reference] = m
    const action = method === 'GET' || method === 'HEAD' ? 'pull' : 'push'
    if (!allowed(req, name, action)) {
      const insufficient = mode === 'bearer' && /^Bearer /i.test(req.headers.authorization ?? '') && tokens.has(req.headers.authorization!.slice(7))
      return error(res, 401, 'UNAUTHORIZED', 'authentication required', { 'www-authenticate': challenge(name, action, insufficient) })
    }
    const body = await readBody(req)

    if (url.pathname.includes('/blobs/uploads')) {
      if (!uploadId) {
        if (method !== 'POST') return error(res, 405, 'UNSUPPORTED', 'method not allowed')
        const mount = url.searchParams.get('mount')
        const from = url.searchParams.get('from')
        if (mount && from && links.get(from)?.has(mount)) {
          link(name, mount)
          return send(res, 201, undefined, { location: `/v2/${name}/blobs/${mount}`, 'docker-content-digest': mount })
        }
        if (url.searchParams.has('digest')) return finishUpload(res, name, url.searchParams.get('digest'), body)
        const id = randomUUID()
        uploads.set(id, { name, data: [], size: 0 })
        return send(res, 202, undefined, uploadHeaders(name, id, 0))
      }
      const up = uploads.get(uploadId)
      if (!up || up.name !== name) return error(res, 404, 'BLOB_UPLOAD_UNKNOWN', 'blob upload unknown to registry')
      if (method === 'GET') return send(res, 204, undefined, uploadHeaders(name, uploadId, up.size))
      if (method === 'DELETE') { uploads.delete(uploadId); return send(res, 204, undefined) }
      const range = /^(\d+)-(\d+)$/.exec(String(req.headers['content-range'] ?? ''))
      if (range && Number(range[1]) !== up.size) return error(res, 416, 'BLOB_UPLOAD_INVALID', 'content range does not continue the upload', { range: `0-${Math.max(0, up.size - 1)}` })
      up.data.push(body)
      up.size += body.length
      if (method === 'PATCH') return send(res, 202, undefined, uploadHeaders(name, uploadId, up.size))
      if (method === 'PUT') { uploads.delete(uploadId); return finishUpload(res, name, url.searchParams.get('digest'), Buffer.concat(up.data)) }
      return error(res, 405, 'UNSUPPORTED', 'method not allowed')
    }

    if (blobDigest !== undefined) {
      if (!DIGEST.test(blobDigest)) return error(res, 400, 'DIGEST_INVALID', 'invalid digest')
      const data = links.get(name)?.has(blobDigest) ? blobs.get(blobDigest) : undefined
      if (method === 'DELETE') { if (!data) return error(res, 404, 'BLOB_UNKNOWN', 'blob unknown to registry'); links.get(name)!.delete(blobDigest); return send(res, 202, undefined) }
      if (method !== 'GET' && method !== 'HEAD') return error(res, 405, 'UNSUPPORTED', 'method not allowed')
      if (!data) return method === 'HEAD' ? send(res, 404, undefined) : error(res, 404, 'BLOB_UNKNOWN', 'blob unknown to registry')
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': data.length, 'docker-content-digest': blobDigest, etag: `"${blobDigest}"`, 'docker-distribution-api-version': 'registry/2.0' })
      return res.end(method === 'HEAD' ? undefined : data)
    }

    if (reference !== undefined) {
      if (!DIGEST.test(reference) && !TAG.test(reference)) return error(res, 400, 'TAG_INVALID', 'manifest tag did not match URI')
      if (method === 'PUT') {
        let doc: { mediaType?: string; config?: { digest?: string }; layers?: { digest?: string }[]; manifests?: { digest?: string }[] }
        try { doc = JSON.parse(body.toString('utf8')) } catch { return error(res, 400, 'MANIFEST_INVALID', 'manifest invalid') }
        if (typeof doc !== 'object' || doc === null) return error(res, 400, 'MANIFEST_INVALID', 'manifest invalid')
        const digest = sha256(body)
        if (DIGEST.test(reference) && reference !== digest) return error(res, 400, 'DIGEST_INVALID', 'provided digest did not match uploaded content')
        const store = manifests.get(name) ?? new Map<string, StoredManifest>()
        const missingBlob = [doc.config?.digest, ...(doc.layers ?? []).map((l) => l.digest)].find((d) => d !== undefined && !links.get(name)?.has(d))
        if (missingBlob) return error(res, 400, 'MANIFEST_BLOB_UNKNOWN', `blob unknown to registry: ${missingBlob}`)
        const missingChild = (doc.manifests ?? []).map((x) => x.digest).find((d) => d !== undefined && !store.has(d))
        if (missingChild) return error(res, 400, 'MANIFEST_UNKNOWN', `manifest unknown: ${missingChild}`)
        const mediaType = String(req.headers['content-type'] ?? doc.mediaType ?? 'application/vnd.oci.image.manifest.v1+json').split(';')[0].trim()
        store.set(digest, { digest, mediaType, body })
        manifests.set(name, store)
        if (!DIGEST.test(reference)) { const t = tagMap.get(name) ?? new Map<string, string>(); t.set(reference, digest); tagMap.set(name, t) }
        return send(res, 201, undefined, { location: `/v2/${name}/manifests/${digest}`, 'docker-content-digest': digest })
      }
      const found = findManifest(name, reference)
      if (method === 'DELETE') {
        if (!DIGEST.test(reference)) return error(res, 400, 'UNSUPPORTED', 'manifests are deleted by digest')
        if (!found) return error(res, 404, 'MANIFEST_UNKNOWN', 'manifest unknown')
        manifests.get(name)!.delete(reference)
        for (const [t, d] of tagMap.get(name) ?? []) if (d === reference) tagMap.get(name)!.delete(t)
        return send(res, 202, undefined)
      }
      if (method !== 'GET' && method !== 'HEAD') return error(res, 405, 'UNSUPPORTED', 'method not allowed')
      if (!found) return method === 'HEAD' ? send(res, 404, undefined) : error(res, 404, 'MANIFEST_UNKNOWN', 'manifest unknown')
      res.writeHead(200, { 'content-type': found.mediaType, 'content-length': found.body.length, 'docker-content-digest': found.digest, etag: `"${found.digest}"`, 'docker-distribution-api-version': 'registry/2.0' })
      return res.end(method === 'HEAD' ? undefined : found.body)
    }

    if (method !== 'GET') return error(res, 405, 'UNSUPPORTED', 'method not allowed')
    const tags = [...(tagMap.get(name)?.keys() ?? [])].sort()
    if (!tags.length && !manifests.has(name)) return error(res, 404, 'NAME_UNKNOWN', 'repository name not known to registry')
    return send(res, 200, { name, tags })
  }

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', base)
    const scheme = /^(Basic|Bearer) /i.exec(req.headers.authorization ?? '')?.[1].toLowerCase() as 'basic' | 'bearer' | undefined
    res.on('finish', () => requests.push({ method: req.method ?? 'GET', path: url.pathname + url.search, status: res.statusCode, ...(scheme ? { auth: scheme } : {}) }))
    handle(req, res, url).catch(() => { if (!res.headersSent) error(res, 500, 'UNKNOWN', 'internal error'); else res.destroy() })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  base = `http://127.0.0.1:${port}`
  const host = `127.0.0.1:${port}`
  return {
    url: base, host, username, password, requests,
    dockerConfigJson: (login = { username, password }) => JSON.stringify({ auths: { [host]: { auth: Buffer.from(`${login.username}:${login.password}`).toString('base64') } } }),
    manifest: (name, reference) => findManifest(name, reference),
    blob: (digest) => blobs.get(digest),
    tags: (name) => [...(tagMap.get(name)?.keys() ?? [])].sort(),
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }),
  }
}

/**
 * The reference registry (CNCF distribution, Debian package `docker-registry`; `htpasswd` from
 * `apache2-utils` makes the bcrypt login file) on a free loopback port with HTTP Basic auth, for a check
 * against a registry implementation that is not ours. Resolves to the reason instead when a binary is missing.
 */
export async function startDistributionRegistry(): Promise<Pick<TestRegistry, 'url' | 'host' | 'username' | 'password' | 'dockerConfigJson' | 'close'> | { skip: string }> {
  const { spawn, spawnSync } = await import('node:child_process')
  const { mkdtempSync, rmSync, writeFileSync } = await import('node:fs')
  const { tmpdir } = await import('node:os')
  const { join } = await import('node:path')
  const { freePort } = await import('./ports.ts')
  for (const bin of ['docker-registry', 'htpasswd']) {
    if (spawnSync('sh', ['-c', `command -v ${bin}`]).status !== 0) return { skip: `${bin} not found (apt-get install docker-registry apache2-utils)` }
  }
  const username = 'builder'
  const password = randomBytes(12).toString('hex')
  const dir = mkdtempSync(join(tmpdir(), 'distribution-'))
  const hash = spawnSync('htpasswd', ['-Bbn', username, password], { encoding: 'utf8' })
  if (hash.status !== 0) { rmSync(dir, { recursive: true, force: true }); return { skip: `htpasswd failed: ${hash.stderr}` } }
  writeFileSync(join(dir, 'htpasswd'), hash.stdout)
  const port = await freePort()
  writeFileSync(join(dir, 'config.yml'), [
    'version: 0.1', 'log:', '  level: error', 'storage:', '  filesystem:', `    rootdirectory: ${join(dir, 'data')}`,
    'http:', `  addr: 127.0.0.1:${port}`, 'auth:', '  htpasswd:', '    realm: test', `    path: ${join(dir, 'htpasswd')}`, '',
  ].join('\n'))
  const child = spawn('docker-registry', ['serve', join(dir, 'config.yml')], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (c: Buffer) => { stderr += c.toString() })
  const url = `http://127.0.0.1:${port}`
  const close = async () => {
    if (child.exitCode === null) { child.kill('SIGKILL'); await new Promise((r) => child.once('exit', r)) }
    rmSync(dir, { recursive: true, force: true })
  }
  // Ready when /v2/ answers its challenge.
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) { await close(); return { skip: `docker-registry exited: ${stderr.slice(0, 500)}` } }
    const status = await fetch(`${url}/v2/`).then((r) => r.status, () => 0)
    if (status === 401) break
    if (i > 100) { await close(); return { skip: 'docker-registry did not start within 10 s' } }
    await new Promise((r) => setTimeout(r, 100))
  }
  const host = `127.0.0.1:${port}`
  return {
    url, host, username, password, close,
    dockerConfigJson: (login = { username, password }) => JSON.stringify({ auths: { [host]: { auth: Buffer.from(`${login.username}:${login.password}`).toString('base64') } } }),
  }
}
