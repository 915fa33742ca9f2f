// Shared by the simulator's own tests (not a test file itself).
import { request } from 'node:https'
import type { KubeSim } from './index.ts'

export interface RawResponse { status: number; headers: Record<string, string | string[] | undefined>; text: string; json: any } // eslint-disable-line @typescript-eslint/no-explicit-any

export interface RawOptions {
  body?: unknown
  contentType?: string
  accept?: string
  /** Bearer token; default the admin token. `null` sends no credentials. */
  token?: string | null
  cert?: { certPem: string; keyPem: string }
}

/** A plain HTTPS request to the simulator, for asserting wire-level behaviour. */
export function raw(sim: KubeSim, method: string, path: string, o: RawOptions = {}): Promise<RawResponse> {
  const body = o.body === undefined ? undefined : typeof o.body === 'string' ? o.body : JSON.stringify(o.body)
  const headers: Record<string, string> = { Accept: o.accept ?? 'application/json' }
  if (body !== undefined) {
    headers['Content-Type'] = o.contentType ?? 'application/json'
    headers['Content-Length'] = String(Buffer.byteLength(body))
  }
  const token = o.token === undefined ? sim.identities.admin.token : o.token
  if (token) headers.Authorization = `Bearer ${token}`
  const url = new URL(path, sim.url)
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, ca: sim.caPem, cert: o.cert?.certPem, key: o.cert?.keyPem, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        let json: unknown
        try { json = JSON.parse(text) } catch { json = undefined }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json })
      })
      res.on('error', reject)
    })
    req.on('error', reject)
    if (body !== undefined) req.write(body)
    req.end()
  })
}

type Falsy = false | 0 | '' | null | undefined

/** Polls until `fn` returns a truthy value (and returns it), failing with `what` after the deadline. */
export async function waitFor<T>(what: string, fn: () => T | Falsy | Promise<T | Falsy>, timeoutMs = 10_000, intervalMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  for (;;) {
    try {
      const v = await fn()
      if (v) return v as T
      last = v
    } catch (e) { last = e }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`)
    await new Promise((r) => setTimeout(r, intervalMs))
  }
}

export interface RawStream { status: Promise<number>; lines: string[]; ended: Promise<void>; close(): void }

/** Opens a streaming GET (watch, follow) and collects its lines as they arrive. */
export function rawStream(sim: KubeSim, path: string, o: RawOptions = {}): RawStream {
  const headers: Record<string, string> = { Accept: o.accept ?? 'application/json', Authorization: `Bearer ${o.token ?? sim.identities.admin.token}` }
  const lines: string[] = []
  let buf = ''
  let resolveStatus!: (n: number) => void
  let resolveEnded!: () => void
  const status = new Promise<number>((r) => { resolveStatus = r })
  const ended = new Promise<void>((r) => { resolveEnded = r })
  const req = request(new URL(path, sim.url), { method: 'GET', headers, ca: sim.caPem, agent: false }, (res) => {
    resolveStatus(res.statusCode ?? 0)
    res.on('data', (c: Buffer) => { buf += c.toString(); const parts = buf.split('\n'); buf = parts.pop()!; lines.push(...parts.filter((l) => l !== '')) })
    res.on('end', () => resolveEnded())
    res.on('close', () => resolveEnded())
    res.on('error', () => resolveEnded())
  })
  req.on('error', () => { resolveStatus(0); resolveEnded() })
  req.end()
  return { status, lines, ended, close: () => req.destroy() }
}
