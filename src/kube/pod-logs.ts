// Pod logs onto the SSE hub. One upstream request (the pod's `log` subresource) per (cluster, namespace, pod,
// container, options), shared by every subscriber of its key and stopped when the last one leaves; a
// `follow=false` request gets an upstream of its own that sends the tail and `complete`.
//
// The request is made with node's https and the cluster's credentials (KubeConfig.applyToHTTPSOptions)
// rather than client-node's Log: aborting a followed log there leaves an error on a body stream nobody
// listens to, which takes the process down (the crash ARCHITECTURE.md notes for 2.x). Here every stream has
// an error listener and stopping is a plain destroy.
//
// Bounded everywhere: a line longer than maxLineBytes is cut (and marked); the partial line being read is
// the only buffer; the hub drops events for a subscriber that cannot keep up; an error reply is read up to
// 64 KiB.
import { endingAfter } from '../events/ending-subscription.ts'
import { request as httpRequest, type IncomingMessage, type ClientRequest, type Agent } from 'node:http'
import { request as httpsRequest, type RequestOptions } from 'node:https'
import { StringDecoder } from 'node:string_decoder'
import type { KubeConfig } from '@kubernetes/client-node'
import { MemoryStreamHub, type StreamHub, type Subscription, type SubscribeOptions } from '../events/stream-hub.ts'
import { describeNetworkError } from '../net/network-errors.ts'

export interface LogTarget {
  cluster: { id: string; name: string }
  namespace: string
  pod: string
  container: string
}

export interface LogOptions {
  tail: number
  sinceSeconds?: number
  follow: boolean
  /** Keep the RFC 3339 time in front of each line (the `timestamp` field has it either way). */
  timestamps: boolean
}

export interface LogLine { line: string; timestamp: string | null }

export interface PodLogDeps {
  /** The app's hub: followed logs are published there, under keys shared by their subscribers. */
  hub: StreamHub
  /** The hub's per-subscriber buffer (events); a subscriber's is raised to hold its whole tail. */
  bufferSize: number
  /** Largest `tail` a request may ask for. */
  maxTail: number
  maxLineBytes: number
  /** Until the cluster answers with headers; a followed log then stays open as long as it has subscribers. */
  connectTimeoutMs: number
  log: { warn(obj: object, msg: string): void }
}

const ERROR_BODY_MAX = 64 * 1024
const TRUNCATED = ' …[line truncated]'
const STAMPED = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})) (.*)$/s
/** Events after which a log stream is over: serveStream's reply ends once it has written one. */
const FINAL = new Set(['complete'])
const ONCE_PREFIX = 'pod-logs:once:'
/** Room beyond the tail in a subscriber's buffer: the lines that arrive while the tail is being written. */
const TAIL_SLACK = 64

/** Splits a byte stream into lines, cutting any longer than `max` bytes; at most one partial line is held. */
export class LineSplitter {
  private readonly decoder = new StringDecoder('utf8')
  private partial = ''
  private skipping = false

  constructor(private readonly max: number, private readonly emit: (line: string) => void) {}

  write(chunk: Buffer): void {
    let text = this.decoder.write(chunk)
    while (text.length) {
      const nl = text.indexOf('\n')
      const piece = nl === -1 ? text : text.slice(0, nl)
      text = nl === -1 ? '' : text.slice(nl + 1)
      if (!this.skipping) {
        this.partial += piece
        if (Buffer.byteLength(this.partial) > this.max) {
          this.emit(cut(this.partial, this.max) + TRUNCATED)
          this.partial = ''
          this.skipping = nl === -1
          if (nl !== -1) continue
        }
      }
      if (nl !== -1) {
        if (!this.skipping) this.emit(this.partial.replace(/\r$/, ''))
        this.partial = ''
        this.skipping = false
      }
    }
  }

  end(): void {
    const rest = this.partial + this.decoder.end()
    if (rest && !this.skipping) this.emit(Buffer.byteLength(rest) > this.max ? cut(rest, this.max) + TRUNCATED : rest)
    this.partial = ''
  }
}

/** The first `max` bytes of a string, not splitting a character. */
function cut(text: string, max: number): string {
  const bytes = Buffer.from(text)
  return new StringDecoder('utf8').write(bytes.subarray(0, max))
}

/** A kubelet line (requested with timestamps) as a log event. */
export function parseLine(raw: string, keepTimestamp: boolean): LogLine {
  const m = STAMPED.exec(raw)
  if (!m) return { line: raw, timestamp: null }
  const parsed = Date.parse(m[1])
  return { line: keepTimestamp ? raw : m[2], timestamp: Number.isNaN(parsed) ? m[1] : new Date(parsed).toISOString() }
}

/** The upstream path and query of a log request. Timestamps are always asked for: `timestamp` needs them. */
export function logPath(target: LogTarget, opts: LogOptions): string {
  const q = new URLSearchParams({ container: target.container, follow: String(opts.follow), timestamps: 'true', tailLines: String(opts.tail) })
  if (opts.sinceSeconds !== undefined) q.set('sinceSeconds', String(opts.sinceSeconds))
  return `/api/v1/namespaces/${encodeURIComponent(target.namespace)}/pods/${encodeURIComponent(target.pod)}/log?${q}`
}

function statusMessage(status: number, body: string): string {
  let message: unknown
  try { message = (JSON.parse(body) as { message?: unknown }).message } catch { /* not a Status */ }
  // A 400 is the apiserver explaining the pod's state ("container ... is waiting to start: ContainerCreating").
  if (status === 400 && typeof message === 'string' && message) return `the cluster cannot serve these logs: ${message.slice(0, 300)}`
  if (status === 401) return 'the cluster refused the credentials (401 Unauthorized)'
  if (status === 403) return 'the credentials may not read pod logs (403 Forbidden)'
  if (status === 404) return 'the pod is no longer in the cluster'
  return `the cluster answered ${status} to the log request`
}

class Upstream {
  private req: ClientRequest | null = null
  private agent: Agent | undefined
  private stopped = false
  subscribers = 0
  /** The hub id of this upstream's first event, for late joiners' replay. */
  firstId = 0

  constructor(
    private readonly key: string,
    private readonly target: LogTarget,
    readonly opts: LogOptions,
    private readonly hub: StreamHub,
    private readonly deps: PodLogDeps,
    private readonly onEnd: () => void,
  ) {}

  async start(kc: KubeConfig): Promise<void> {
    const server = kc.getCurrentCluster()?.server
    if (!server) { this.fail('the cluster has no server address'); return }
    const options: RequestOptions = { method: 'GET', headers: { Accept: '*/*' } }
    try {
      await kc.applyToHTTPSOptions(options)
    } catch {
      this.fail('the cluster\'s credentials could not be applied')
      return
    }
    this.agent = options.agent as Agent | undefined
    if (this.stopped) { this.agent?.destroy(); return }
    const url = new URL(logPath(this.target, this.opts), server.replace(/\/+$/, '') + '/')
    const req = (url.protocol === 'http:' ? httpRequest : httpsRequest)(url, options)
    this.req = req
    const connectTimer = setTimeout(() => { if (!this.stopped) { this.fail('the cluster did not answer the log request in time'); req.destroy() } }, this.deps.connectTimeoutMs)
    req.on('error', (err) => {
      clearTimeout(connectTimer)
      if (!this.stopped) this.fail(describeNetworkError(err, 'cluster')?.message ?? 'the log stream from the cluster broke off')
    })
    req.on('response', (res) => {
      clearTimeout(connectTimer)
      res.on('error', () => { if (!this.stopped) this.fail('the log stream from the cluster broke off') })
      if (res.statusCode !== 200) { this.readError(res); return }
      this.stream(res)
    })
    req.end()
  }

  private stream(res: IncomingMessage): void {
    const splitter = new LineSplitter(this.deps.maxLineBytes, (raw) => this.hub.publish(this.key, 'log', parseLine(raw, this.opts.timestamps)))
    res.on('data', (chunk: Buffer) => { if (!this.stopped) splitter.write(chunk) })
    res.on('end', () => {
      if (this.stopped) return
      splitter.end()
      this.finish()
    })
    res.on('close', () => {
      if (!this.stopped && !res.complete) this.fail('the log stream from the cluster broke off')
    })
  }

  private readError(res: IncomingMessage): void {
    let body = ''
    res.setEncoding('utf8')
    res.on('data', (chunk: string) => { if (body.length < ERROR_BODY_MAX) body += chunk.slice(0, ERROR_BODY_MAX - body.length) })
    res.on('end', () => { if (!this.stopped) this.fail(statusMessage(res.statusCode ?? 0, body)) })
  }

  private fail(message: string): void {
    if (this.stopped) return
    this.hub.publish(this.key, 'error', { error: message })
    this.finish()
  }

  /** The log ended (container stopped, tail sent) or failed: every subscriber gets `complete`. */
  private finish(): void {
    if (this.stopped) return
    this.hub.publish(this.key, 'complete', {})
    this.stop()
  }

  stop(): void {
    if (this.stopped) return
    this.stopped = true
    this.req?.destroy()
    this.agent?.destroy()
    this.onEnd()
  }
}


export class PodLogStreams {
  private readonly upstreams = new Map<string, Upstream>()
  private onceCounter = 0
  /** Upstream requests started and stopped so far (tests and metrics). */
  readonly stats = { started: 0, stopped: 0 }
  /** The hub serveStream reads from: the app's hub, with log streams ending after `complete` and late joiners of a shared upstream replayed its recent lines. */
  readonly hub: StreamHub

  /**
   * One-shot streams (follow=false, or one that cannot start) live on a hub of their own without a replay
   * window: resuming one is meaningless, and each would otherwise leave its lines in the shared hub's window.
   */
  private readonly onceHub: MemoryStreamHub

  constructor(private readonly deps: PodLogDeps) {
    this.onceHub = new MemoryStreamHub({ replaySize: 0, bufferSize: deps.maxTail + TAIL_SLACK, log: deps.log })
    const route = (key: string): StreamHub => (key.startsWith(ONCE_PREFIX) ? this.onceHub : deps.hub)
    this.hub = {
      publish: (key, type, data) => route(key).publish(key, type, data),
      subscriberCount: (key) => route(key).subscriberCount(key),
      close: () => this.close(),
      subscribe: (key, opts) => endingAfter(key.startsWith(ONCE_PREFIX) ? this.onceHub.subscribe(key, opts) : this.subscribeJoining(key, opts), FINAL),
    }
  }

  /** Upstream requests open now. */
  active(): number {
    return this.upstreams.size
  }

  /** The hub key: shared for a followed log with the same options; one of its own otherwise. */
  keyFor(target: LogTarget, opts: LogOptions): string {
    if (!opts.follow) return `${ONCE_PREFIX}${++this.onceCounter}`
    const q = new URLSearchParams({ tail: String(opts.tail), since: String(opts.sinceSeconds ?? ''), ts: String(opts.timestamps) })
    return `pod-logs:${target.cluster.id}/${target.namespace}/${target.pod}/${target.container}?${q}`
  }

  /** A subscriber joining a running upstream first gets its recent lines (up to `tail`, within the hub's replay window). */
  private subscribeJoining(key: string, given: SubscribeOptions = {}): Subscription {
    // The tail arrives in a burst: the subscriber's buffer holds all of it rather than dropping most.
    const tail = Number(/[?&]tail=(\d+)/.exec(key)?.[1] ?? 0)
    const opts = { ...given, bufferSize: Math.max(given.bufferSize ?? this.deps.bufferSize, Math.min(tail, this.deps.maxTail) + TAIL_SLACK) }
    const up = this.upstreams.get(key)
    const sub = this.deps.hub.subscribe(key, opts)
    if (!up || opts.lastEventId !== undefined || up.firstId === 0) return sub
    const from = Math.max(up.firstId - 1, sub.since - up.opts.tail)
    if (from >= sub.since) return sub
    sub.close()
    return this.deps.hub.subscribe(key, { ...opts, lastEventId: from })
  }

  /** Starts the key's upstream or joins it; the returned release stops it when the last subscriber leaves. */
  acquire(kc: KubeConfig, key: string, target: LogTarget, opts: LogOptions): () => void {
    const hub = key.startsWith(ONCE_PREFIX) ? this.onceHub : this.deps.hub
    let up = this.upstreams.get(key)
    if (!up) {
      const created: Upstream = new Upstream(key, target, opts, hub, this.deps, () => {
        this.stats.stopped++
        if (this.upstreams.get(key) === created) this.upstreams.delete(key)
      })
      up = created
      this.upstreams.set(key, up)
      this.stats.started++
      // The key's next id is the upstream's first event (publishing is synchronous, so nothing comes between).
      const probe = hub.subscribe(key)
      up.firstId = probe.since + 1
      probe.close()
      void up.start(kc).catch((err: unknown) => this.deps.log.warn({ err: { message: (err as Error)?.message } }, 'pod log upstream failed to start'))
    }
    up.subscribers++
    const joined = up
    let released = false
    return () => {
      if (released) return
      released = true
      if (--joined.subscribers <= 0) joined.stop()
    }
  }

  /** Ends a stream that cannot start (unknown container): its subscribers get `error`, then `complete`. */
  fail(key: string, message: string): void {
    this.hub.publish(key, 'error', { error: message })
    this.hub.publish(key, 'complete', {})
  }

  /** Stops every upstream (shutdown). */
  close(): void {
    for (const up of [...this.upstreams.values()]) up.stop()
    this.onceHub.close()
  }
}
