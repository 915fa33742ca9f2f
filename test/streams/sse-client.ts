// A raw SSE client for tests: node:http, so the bytes on the wire are what the tests see (LF only, the
// retry line, comments), plus parsed events and bounded waits on them (no sleeps).
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { App } from '../../src/app-types.ts'
import { waitFor } from '../kube-sim/test-helpers.ts'

export interface SseEvent { id: number | null; type: string; data: any; retry?: number } // eslint-disable-line @typescript-eslint/no-explicit-any

export interface SseStream {
  status: number
  headers: http.IncomingHttpHeaders
  /** Everything received so far, as text. */
  raw(): string
  events: SseEvent[]
  comments: string[]
  ended: Promise<void>
  readonly isEnded: boolean
  /** Waits (bounded) until `pred` holds over the events received so far. */
  until(what: string, pred: (events: SseEvent[]) => boolean, timeoutMs?: number): Promise<SseEvent[]>
  /** Stops reading (the socket backs up) / resumes. */
  pause(): void
  resume(): void
  close(): void
  /** The JSON body of a non-200 answer. */
  body?: any // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** The app listening on a free local port (streams cannot be tested with inject); returns its base URL. */
export async function listen(app: App): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  return `http://127.0.0.1:${port}`
}

function parseBlock(block: string, stream: { events: SseEvent[]; comments: string[] }): void {
  const event: SseEvent = { id: null, type: 'message', data: undefined }
  let data: string | undefined
  let isEvent = false
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) { stream.comments.push(line.slice(1).trim()); continue }
    const colon = line.indexOf(':')
    const field = colon < 0 ? line : line.slice(0, colon)
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
    if (field === 'id') { event.id = Number(value); isEvent = true }
    else if (field === 'event') { event.type = value; isEvent = true }
    else if (field === 'data') { data = data === undefined ? value : `${data}\n${value}`; isEvent = true }
    else if (field === 'retry') event.retry = Number(value)
  }
  if (!isEvent) return
  event.data = data === undefined ? undefined : JSON.parse(data)
  stream.events.push(event)
}

export function openStream(base: string, path: string, headers: Record<string, string> = {}): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${base}${path}`, { headers, agent: false }, (res) => {
      const chunks: Buffer[] = []
      let pending = ''
      const events: SseEvent[] = []
      const comments: string[] = []
      let isEnded = false
      const ended = new Promise<void>((done) => {
        const finish = () => { isEnded = true; done() }
        res.on('end', finish)
        res.on('close', finish)
        res.on('error', finish)
      })
      const stream: SseStream = {
        status: res.statusCode ?? 0, headers: res.headers, events, comments, ended,
        get isEnded() { return isEnded },
        raw: () => Buffer.concat(chunks).toString('utf8'),
        until: (what, pred, timeoutMs = 15_000) => waitFor(what, () => (pred(events) ? events : null), timeoutMs, 5),
        pause: () => { res.pause() },
        resume: () => { res.resume() },
        close: () => { req.destroy() },
      }
      if (res.statusCode !== 200) {
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => {
          try { stream.body = JSON.parse(stream.raw()) } catch { stream.body = stream.raw() }
          resolve(stream)
        })
        return
      }
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk)
        pending += chunk.toString('utf8')
        let end: number
        while ((end = pending.indexOf('\n\n')) >= 0) {
          parseBlock(pending.slice(0, end), stream)
          pending = pending.slice(end + 2)
        }
      })
      resolve(stream)
    })
    req.on('error', reject)
  })
}
