// Serves one hub key as Server-Sent Events on a Fastify reply (API.md §7): headers flushed at once, the
// first frame carries `retry: 3000` and the `metadata` snapshot, then `id/event/data` frames (LF only, one
// line of JSON), `: ping` comments every SSE_HEARTBEAT_MS so proxies keep the connection, and an end on
// client disconnect, hub close (shutdown), or on request after one final frame (a stream of a kind bounded
// per user ended to make room for a newer one, API.md §14).
//
// Every byte goes through the reply object (API.md §14): it alone knows when the status line and headers
// have reached the socket, so a frame written beside it can overtake them (Node 24.22 sends the head later
// than 24.21 did, and replayed frames overtook it on every connection). The same code serves HTTP/1.1
// (ServerResponse) and HTTP/2 (Http2ServerResponse, where the "socket" is the shared session's).
//
// Backpressure: a frame is written only when the reply drained the previous one, so its buffer holds at
// most one frame beyond its high-water mark; a client that cannot keep up fills its bounded hub buffer
// instead, and events are dropped there (spec delivery rule 2), never queued without bound.
import { once } from 'node:events'
import type { ServerResponse } from 'node:http'
import type { Http2ServerResponse } from 'node:http2'
import type { Writable } from 'node:stream'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { StreamEvent, StreamHub, Subscription } from './stream-hub.ts'
import type { UserLimits } from '../services/user-limits.ts'
import { RawJson } from './raw-json.ts'

export const RETRY_MS = 3000
export const DEFAULT_HEARTBEAT_MS = 15_000

export interface ServeStreamOptions {
  hub: StreamHub
  key: string
  /** The snapshot sent first as `metadata`; throwing (e.g. NotFound) answers with the error before any stream starts. */
  metadata: () => Promise<unknown>
  /** Called once the caller is known to be allowed, before the headers go out; throwing answers with the error. */
  onOpen?: () => void | Promise<void>
  /** Called once when the stream ends, for whatever reason, if onOpen succeeded. */
  onClose?: () => void
  /** Heartbeat period; defaults to the app's SSE_HEARTBEAT_MS (15 s). */
  heartbeatMs?: number
  /**
   * Re-encodes every event (the metadata snapshot too) for a client that speaks another dialect (the
   * KubeOrch UI adapter, src/compat/kubeorch/). Keep one function per dialect and stream kind, defined once:
   * its encodings are cached per event like the plain ones.
   */
  reframe?: Reframe
  /**
   * Counts the stream among its user's streams of a bounded kind (newest wins, src/events/newest-wins.ts).
   * Called before the stream's MAX_STREAMS_PER_USER slot is taken, so a stream ended to make room gives its
   * slot back first; the admission is left when this stream ends or is refused.
   */
  admit?: () => StreamAdmission
}

/** Ends a started stream from outside: one final frame (`event` and `data`, no `id`), then the end. */
export type EndStream = (type: string, data: unknown) => void

/** A stream's place among its user's streams of a bounded kind. */
export interface StreamAdmission {
  /** The stream started: `end` ends it when a newer stream needs its place. */
  started(end: EndStream): void
  /** The stream ended, or never started. Idempotent. */
  leave(): void
}

/**
 * One event as another dialect sends it: JSON `data`, one line of raw `text` (CR and LF become spaces), or
 * `null` to leave the event out. Its `data` argument is the event's payload as plain JSON.
 */
export type Reframe = (type: string, data: unknown) => { type: string; data: unknown } | { type: string; text: string } | null

const LAST_EVENT_ID = /^\d{1,15}$/

/** The Last-Event-ID a reconnecting client sent, if it is one of ours (a non-negative integer). */
export function lastEventId(req: FastifyRequest): number | undefined {
  const header = req.headers['last-event-id']
  const value = Array.isArray(header) ? header[0] : header
  return typeof value === 'string' && LAST_EVENT_ID.test(value.trim()) ? Number(value.trim()) : undefined
}

/** One SSE frame. JSON.stringify never emits a raw CR or LF, so `data` is always one line (RawJson text is JSON.stringify's). */
export function frame(id: number, type: string, data: unknown, retryMs?: number): string {
  const json = data instanceof RawJson ? data.text : JSON.stringify(data ?? null)
  return `${retryMs !== undefined ? `retry: ${retryMs}\n` : ''}id: ${id}\nevent: ${type}\ndata: ${json}\n\n`
}

// A hub event object is shared by all subscribers of its key in this process: encode it once.
const encoded = new WeakMap<StreamEvent, Buffer>()
function encode(event: StreamEvent): Buffer {
  let bytes = encoded.get(event)
  if (!bytes) {
    bytes = Buffer.from(frame(event.id, event.type, event.data))
    encoded.set(event, bytes)
  }
  return bytes
}

// Per dialect: a WeakMap per reframe function, holding null for an event the dialect leaves out.
const reframed = new WeakMap<Reframe, WeakMap<StreamEvent, Buffer | null>>()
const plainJson = (data: unknown) => data instanceof RawJson ? JSON.parse(data.text) as unknown : data
const ONE_LINE = /\r\n|\r|\n/g

/** The frame text of an event in a dialect, or null when the dialect leaves it out. */
export function reframedFrame(reframe: Reframe, id: number, type: string, data: unknown, retryMs?: number): string | null {
  const out = reframe(type, plainJson(data))
  if (!out) return null
  if ('text' in out) return `${retryMs !== undefined ? `retry: ${retryMs}\n` : ''}id: ${id}\nevent: ${out.type}\ndata: ${out.text.replace(ONE_LINE, ' ')}\n\n`
  return frame(id, out.type, out.data, retryMs)
}

/**
 * A frame that is not a hub event (a stream's final `replaced`): no `id`, so a client reconnecting keeps the
 * Last-Event-ID of the last event it had; every dialect gets it as is.
 */
export function controlFrame(type: string, data: unknown): string {
  return `event: ${type}\ndata: ${JSON.stringify(data ?? null)}\n\n`
}

function encodeIn(reframe: Reframe, event: StreamEvent): Buffer | null {
  let cache = reframed.get(reframe)
  if (!cache) { cache = new WeakMap(); reframed.set(reframe, cache) }
  let bytes = cache.get(event)
  if (bytes === undefined) {
    const text = reframedFrame(reframe, event.id, event.type, event.data)
    bytes = text === null ? null : Buffer.from(text)
    cache.set(event, bytes)
  }
  return bytes
}

const PING = Buffer.from(': ping\n\n')

// One timer per heartbeat period for all streams, not one per stream: 10,000 streams are 10,000 timers
// otherwise. A stream that opened just before a tick gets its first ping early, which is harmless.
const tickers = new Map<number, { timer: NodeJS.Timeout; beats: Set<() => void> }>()
function onHeartbeat(periodMs: number, beat: () => void): () => void {
  let ticker = tickers.get(periodMs)
  if (!ticker) {
    const beats = new Set<() => void>()
    const timer = setInterval(() => { for (const b of beats) b() }, periodMs)
    timer.unref()
    ticker = { timer, beats }
    tickers.set(periodMs, ticker)
  }
  const { beats, timer } = ticker
  beats.add(beat)
  return () => {
    beats.delete(beat)
    if (beats.size === 0 && tickers.get(periodMs)?.timer === timer) {
      clearInterval(timer)
      tickers.delete(periodMs)
    }
  }
}

export const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
} as const

/**
 * Subscribes, checks (metadata, onOpen), then takes the reply over and streams until the client leaves or
 * the hub closes. Resolves when the stream has ended; rejects only before the stream started (the error
 * then answers the request as any route error does).
 */
export async function serveStream(req: FastifyRequest, reply: FastifyReply, opts: ServeStreamOptions): Promise<void> {
  // Subscribed before the snapshot is read, so nothing published in between is missed.
  let dropped = 0
  let sent = 0
  const sub = opts.hub.subscribe(opts.key, { lastEventId: lastEventId(req), onDrop: () => { dropped++ } })
  let metadata: unknown
  let release: (() => void) | undefined
  let admission: StreamAdmission | undefined
  try {
    metadata = await opts.metadata()
    // HEAD (Fastify answers it on every GET route): the checks and the headers, no stream.
    if (req.raw.method === 'HEAD') {
      sub.close()
      reply.hijack()
      reply.raw.writeHead(200, { ...replyHeaders(reply), ...SSE_HEADERS })
      reply.raw.end()
      return
    }
    admission = opts.admit?.()
    // Every stream route counts against its user's MAX_STREAMS_PER_USER (429 before any stream starts).
    release = takeStreamSlot(req)
    await opts.onOpen?.()
  } catch (err) {
    admission?.leave()
    release?.()
    sub.close()
    throw err
  }
  const config = (req.server as { config?: { SSE_HEARTBEAT_MS?: number } }).config
  const heartbeatMs = opts.heartbeatMs ?? config?.SSE_HEARTBEAT_MS ?? DEFAULT_HEARTBEAT_MS

  reply.hijack()
  const res = reply.raw as ServerResponse | Http2ServerResponse
  // What tells whether the client is gone and whether writes back up: the response itself on HTTP/1.1,
  // the request's own stream (not the shared session) on HTTP/2.
  const out: Writable & { destroyed: boolean } = 'stream' in res ? res.stream : res
  if (req.raw.httpVersionMajor === 1) {
    const socket = req.raw.socket
    socket.setNoDelay(true)
    socket.setKeepAlive(true)
    // The body ends with the connection (`Connection: close`) rather than being chunked: a frame is then
    // one socket write where chunked encoding makes four, and the fan-out to thousands of subscribers stays
    // near what writing beside the reply cost (bench/stream.ts). A stream is long-lived, so the connection
    // it cannot hand back is no loss; HTTP/2 multiplexes anyway.
    const http1 = res as ServerResponse
    http1.useChunkedEncodingByDefault = false
  }
  res.writeHead(200, { ...replyHeaders(reply), ...SSE_HEADERS })

  const send = (bytes: Buffer | string): boolean => (res as ServerResponse).write(bytes)
  let closed = false
  let endedWith: string | undefined
  const gone = () => closed || out.destroyed || req.raw.socket?.destroyed === true
  const stopHeartbeat = onHeartbeat(heartbeatMs, () => {
    if (gone()) { end(); return }
    // A ping behind a backlog says nothing and would grow it.
    if (!out.writableNeedDrain) send(PING)
  })
  const end = () => {
    if (closed) return
    closed = true
    stopHeartbeat()
    sub.close()
    release?.()
    admission?.leave()
    try { opts.onClose?.() } catch (err) { req.log.error({ err: { message: (err as Error)?.message } }, 'stream onClose failed') }
    if (!res.writableEnded) res.end()
    // A taken-over reply is not in the access log: this line is, when the stream ends.
    req.log.info({ req, stream: opts.key, events: sent, dropped, ...(endedWith && { final: endedWith }), responseTime: Math.round(reply.elapsedTime) }, 'stream closed')
  }
  res.on('close', end)
  res.on('error', end)
  // The client may have left while the snapshot was read, before there was a listener to tell.
  if (gone()) end()
  // Written after whatever frame went before it (writes are queued in order), then the stream ends.
  admission?.started((type, data) => {
    if (gone()) { end(); return }
    send(controlFrame(type, data))
    endedWith = type
    end()
  })

  try {
    const { reframe } = opts
    // Sent even when a dialect leaves the snapshot out: the retry delay must reach the client, and the
    // first write is what sends the headers.
    const first = reframe ? reframedFrame(reframe, sub.since, 'metadata', metadata, RETRY_MS) ?? `retry: ${RETRY_MS}\n\n` : frame(sub.since, 'metadata', metadata, RETRY_MS)
    if (!gone() && !send(first)) await drained(res, out, sub)
    for await (const event of sub as AsyncIterable<StreamEvent>) {
      if (gone() || sub.closed) break
      const bytes = reframe ? encodeIn(reframe, event) : encode(event)
      if (!bytes) continue
      sent++
      if (!send(bytes)) await drained(res, out, sub)
    }
  } finally {
    end()
  }
}

/** A stream slot of the signed-in user, when the app keeps per-user limits (plugins/streams.ts). */
function takeStreamSlot(req: FastifyRequest): (() => void) | undefined {
  const limits = (req.server as { userLimits?: UserLimits }).userLimits
  const userId = (req as { user?: { id?: string } }).user?.id
  return limits && userId ? limits.acquire('streams', userId) : undefined
}

/** Reply headers set by hooks so far (CORS, security headers), to go out with the stream's own. */
function replyHeaders(reply: FastifyReply): Record<string, string | number | string[]> {
  const headers: Record<string, string | number | string[]> = {}
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) headers[name] = value as string | number | string[]
  return headers
}

/** Waits for the reply to drain, or for the stream to end meanwhile. */
async function drained(res: ServerResponse | Http2ServerResponse, out: Writable & { destroyed: boolean }, sub: Subscription): Promise<void> {
  if (out.destroyed || sub.closed) return
  const ac = new AbortController()
  try {
    await Promise.race([once(res, 'drain', { signal: ac.signal }), once(res, 'close', { signal: ac.signal }), sub.done])
  } catch { /* aborted */ } finally {
    ac.abort()
  }
}
