import { randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { parse as parseYaml } from 'yaml'
import { decodeProtobuf } from './protobuf.ts'
import { ApiError, badRequest, type StatusObject } from './status.ts'
import type { Json } from './util.ts'

const maxBody = 3 * 1024 * 1024

export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (c: Buffer) => {
      size += c.length
      if (size > maxBody) { reject(new ApiError(413, 'Request entity too large: limit is 3145728', 'RequestEntityTooLarge')); req.destroy(); return }
      chunks.push(c)
    })
    req.on('end', () => resolve(Buffer.concat(chunks)))
    req.on('error', reject)
  })
}

/** Decodes a request body by content type; YAML is accepted wherever the apiserver accepts it. */
export function decodeBody(buf: Buffer, contentType: string | undefined): Json {
  const ct = (contentType ?? 'application/json').split(';')[0].trim().toLowerCase()
  if (ct === 'application/vnd.kubernetes.protobuf') return decodeProtobuf(buf)
  if (ct.includes('protobuf') || ct.includes('cbor')) throw new ApiError(415, `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml`, 'UnsupportedMediaType')
  const text = buf.toString('utf8')
  if (!text.trim()) throw badRequest('the request body is empty')
  try {
    if (ct.includes('yaml')) return parseYaml(text)
    return JSON.parse(text)
  } catch (e) {
    throw badRequest(`error decoding ${ct.includes('yaml') ? 'YAML' : 'JSON'}: ${(e as Error).message}`)
  }
}

export function commonHeaders(): Record<string, string> {
  return { 'Audit-Id': randomUUID(), 'Cache-Control': 'no-cache, private' }
}

export function sendJson(res: ServerResponse, code: number, body: unknown, extra: Record<string, string> = {}, pretty = false): void {
  if (res.headersSent) { res.end(); return }
  const text = pretty ? JSON.stringify(body, null, 2) : JSON.stringify(body)
  res.writeHead(code, { 'Content-Type': 'application/json', ...commonHeaders(), ...extra, 'Content-Length': Buffer.byteLength(text + '\n') })
  res.end(text + '\n')
}

export function sendStatus(res: ServerResponse, s: StatusObject): void {
  const extra: Record<string, string> = {}
  if (s.details?.retryAfterSeconds) extra['Retry-After'] = String(s.details.retryAfterSeconds)
  sendJson(res, s.code, s, extra)
}

export function boolParam(q: URLSearchParams, name: string): boolean {
  const v = q.get(name)
  return v === 'true' || v === '1'
}

export function intParam(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name)
  if (v === null || v === '') return undefined
  const n = Number(v)
  if (!Number.isFinite(n)) throw badRequest(`invalid value for ${name}: ${v}`)
  return n
}
