// Clients for the TLS tests: an HTTP/2 session trusting the service's development certificate, requests
// and SSE streams on it (the bytes as they arrive, the order of headers and data), and HTTPS/1.1 requests.
import http2 from 'node:http2'
import https from 'node:https'
import type { IncomingHttpHeaders } from 'node:http'
import { waitFor } from '../kube-sim/test-helpers.ts'

export interface H2Reply { status: number; headers: http2.IncomingHttpHeaders; body: string; json(): any } // eslint-disable-line @typescript-eslint/no-explicit-any

/** One request on an HTTP/2 session, its whole body read. */
export function h2Request(session: http2.ClientHttp2Session, method: string, path: string, options: { headers?: Record<string, string>; body?: unknown } = {}): Promise<H2Reply> {
  return new Promise((resolve, reject) => {
    const headers: http2.OutgoingHttpHeaders = { ':method': method, ':path': path, ...options.headers }
    if (options.body !== undefined) headers['content-type'] = 'application/json'
    const req = session.request(headers)
    let status = 0
    let got: http2.IncomingHttpHeaders = {}
    const chunks: Buffer[] = []
    req.on('response', (h) => { got = h; status = Number(h[':status']) })
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      resolve({ status, headers: got, body, json: () => JSON.parse(body) })
    })
    req.on('error', reject)
    req.end(options.body === undefined ? undefined : JSON.stringify(options.body))
  })
}

export interface H2Stream {
  status(): number
  headers(): http2.IncomingHttpHeaders
  /** What happened, in order: 'response' once, then 'data' per chunk. */
  order: string[]
  text(): string
  until(what: string, pred: (text: string) => boolean): Promise<void>
  close(): void
  closed: Promise<void>
}

/** An SSE stream on an HTTP/2 session, read as text. */
export function h2Stream(session: http2.ClientHttp2Session, path: string, headers: Record<string, string>): H2Stream {
  const req = session.request({ ':method': 'GET', ':path': path, accept: 'text/event-stream', ...headers })
  const order: string[] = []
  let got: http2.IncomingHttpHeaders = {}
  let text = ''
  req.on('response', (h) => { got = h; order.push('response') })
  req.on('data', (c: Buffer) => { order.push('data'); text += c.toString('utf8') })
  req.on('error', () => {})
  const closed = new Promise<void>((resolve) => req.on('close', () => resolve()))
  return {
    status: () => Number(got[':status'] ?? 0),
    headers: () => got,
    order,
    text: () => text,
    until: async (what, pred) => { await waitFor(what, () => pred(text)) },
    close: () => req.close(http2.constants.NGHTTP2_CANCEL),
    closed,
  }
}

/** An HTTPS request over HTTP/1.1 (node:https offers only http/1.1 in ALPN), its whole body read. */
export function h1Request(url: string, ca: Buffer, options: { method?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; headers: IncomingHttpHeaders; httpVersion: string; alpn: string | false | null; body: string }> {
  return new Promise((resolve, reject) => {
    // Offers only http/1.1 in ALPN, as a client without HTTP/2 does.
    const tlsOptions: https.RequestOptions = { ca, method: options.method ?? 'GET', headers: options.headers, agent: false }
    Object.assign(tlsOptions, { ALPNProtocols: ['http/1.1'] })
    const req = https.request(url, tlsOptions, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, httpVersion: res.httpVersion, alpn: (res.socket as import('node:tls').TLSSocket).alpnProtocol, body: Buffer.concat(chunks).toString('utf8') }))
    })
    req.on('error', reject)
    req.end()
  })
}
