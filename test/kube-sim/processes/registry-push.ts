import { STATUS_CODES } from 'node:http'
import type { BuiltImage } from './image.ts'

// The builder's push, as containerd's pusher does it against the Registry v2 API: HEAD each blob, upload
// the missing ones (POST, then PUT with ?digest=), then PUT the manifest under the tag. Authentication
// follows the registry's challenge: HTTP Basic from the docker config.json login, or a Bearer token
// fetched from the realm with that login (anonymously without one). Failures are thrown with the
// wording BuildKit prints after `failed to push <ref>: `.

export class PushError extends Error {}

export interface PushTarget { host: string; name: string; tag: string; insecure: boolean }
export interface Login { username: string; password: string }

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/

function parseChallenge(h: string): { scheme: string; params: Record<string, string> } {
  const m = /^(\w+)\s*(.*)$/.exec(h.trim())
  const params: Record<string, string> = {}
  for (const p of (m?.[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)) params[p[1]] = p[2]
  return { scheme: (m?.[1] ?? '').toLowerCase(), params }
}

const status = (r: Response) => `${r.status} ${STATUS_CODES[r.status] ?? ''}`.trim()

export async function pushImage(target: PushTarget, image: BuiltImage, login: Login | undefined, signal: AbortSignal): Promise<void> {
  const base = `${target.insecure ? 'http' : 'https'}://${target.host}`
  const hostname = target.host.replace(/:\d+$/, '')
  let authorization: string | undefined

  const send = async (method: string, url: string, body?: Buffer, headers: Record<string, string> = {}): Promise<Response> => {
    const goMethod = method[0] + method.slice(1).toLowerCase()
    if (!LOOPBACK.test(hostname)) throw new PushError(`failed to do request: ${goMethod} "${url}": dial tcp: lookup ${hostname}: no such host`)
    try {
      return await fetch(url, { method, body, headers: { ...headers, ...(authorization ? { authorization } : {}) }, signal, redirect: 'manual' })
    } catch (e) {
      if (signal.aborted) throw e
      const cause = (e as { cause?: { code?: string; message?: string } }).cause
      const why = cause?.code === 'ECONNREFUSED' ? `dial tcp ${target.host}: connect: connection refused`
        : /SSL|TLS|EPROTO/i.test(`${cause?.code} ${cause?.message}`) ? 'http: server gave HTTP response to HTTPS client'
          : cause?.message ?? (e as Error).message
      throw new PushError(`failed to do request: ${goMethod} "${url}": ${why}`)
    }
  }

  const authorize = async (res: Response): Promise<boolean> => {
    const ch = parseChallenge(res.headers.get('www-authenticate') ?? '')
    if (ch.scheme === 'basic') {
      if (!login) return false
      authorization = `Basic ${Buffer.from(`${login.username}:${login.password}`).toString('base64')}`
      return true
    }
    if (ch.scheme !== 'bearer' || !ch.params.realm) return false
    const realm = new URL(ch.params.realm)
    realm.searchParams.set('scope', `repository:${target.name}:pull,push`)
    if (ch.params.service) realm.searchParams.set('service', ch.params.service)
    const headers: Record<string, string> = login ? { authorization: `Basic ${Buffer.from(`${login.username}:${login.password}`).toString('base64')}` } : {}
    let tr: Response
    try {
      tr = await fetch(realm, { headers, signal })
    } catch (e) {
      if (signal.aborted) throw e
      throw new PushError(`failed to authorize: failed to fetch oauth token: Get "${realm}": ${(e as { cause?: Error }).cause?.message ?? (e as Error).message}`)
    }
    if (tr.status !== 200) throw new PushError(`failed to authorize: failed to fetch oauth token: unexpected status from GET request to ${realm}: ${status(tr)}`)
    const doc = await tr.json() as { token?: string; access_token?: string }
    const token = doc.token ?? doc.access_token
    if (!token) throw new PushError('failed to authorize: failed to fetch oauth token: no token in the response')
    authorization = `Bearer ${token}`
    return true
  }

  /** One request, answering an authentication challenge once. */
  const request = async (method: string, url: string, body?: Buffer, headers?: Record<string, string>): Promise<Response> => {
    let res = await send(method, url, body, headers)
    if (res.status === 401 && (await authorize(res))) res = await send(method, url, body, headers)
    if (res.status === 401 || res.status === 403) throw new PushError(`unexpected status from ${method} request to ${url}: ${status(res)}`)
    return res
  }

  for (const blob of [image.layer, image.config]) {
    const blobUrl = `${base}/v2/${target.name}/blobs/${blob.digest}`
    const head = await request('HEAD', blobUrl)
    if (head.status === 200) continue
    if (head.status !== 404) throw new PushError(`unexpected status from HEAD request to ${blobUrl}: ${status(head)}`)
    const startUrl = `${base}/v2/${target.name}/blobs/uploads/`
    const start = await request('POST', startUrl)
    if (start.status !== 202) throw new PushError(`unexpected status from POST request to ${startUrl}: ${status(start)}`)
    const loc = new URL(start.headers.get('location') ?? '', `${base}/`)
    loc.searchParams.set('digest', blob.digest)
    const put = await request('PUT', loc.toString(), blob.data, { 'content-type': 'application/octet-stream' })
    if (put.status !== 201) throw new PushError(`unexpected status from PUT request to ${loc}: ${status(put)}`)
  }
  const manifestUrl = `${base}/v2/${target.name}/manifests/${target.tag}`
  const put = await request('PUT', manifestUrl, image.manifest.body, { 'content-type': image.manifest.mediaType })
  if (put.status !== 201) throw new PushError(`unexpected status from PUT request to ${manifestUrl}: ${status(put)}`)
}
