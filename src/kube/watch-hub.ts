// One watch per (cluster, kind, namespace), shared by every tracked resource of that kind there: the number of
// connections grows with kinds × namespaces, never with resources (the system we replace opened one per
// resource). Each stream is a small informer, client-go's reflector being the model: list (label-selected on
// our managed-by label), then watch from the list's resourceVersion with bookmarks; a dropped watch resumes
// from the last resourceVersion seen after an exponential backoff; a 410 (history compacted) relists and
// diffs the listing against the cache, so objects that went away meanwhile are reported DELETED.
// The cache holds the stream's objects; listeners subscribe by object name, or to every object ('*').
// While streams of a cluster wait in backoff, one probe per cluster (watch-probe.ts) notices the cluster
// answering again and reconnects them at once, so recovery follows the outage, not the backoff.
import type { KubeConfig } from '@kubernetes/client-node'
import { k8s } from './client.ts'
import { objectClient, plain, isNotFound } from './deploy-client.ts'
import { backoffDelay, type BackoffOptions } from './watch-backoff.ts'
import { ClusterProbes, type ProbeInfo } from './watch-probe.ts'
import { watchFailureReason } from './watch-reason.ts'
import type { KubeObject } from '../manifests/types.ts'

export interface StreamKey { cluster: string; apiVersion: string; kind: string; namespace: string | null }
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED'

export interface StreamListener {
  /** The object this listener follows, or '*' for every object of the stream. */
  name: string
  event(type: WatchEventType, object: KubeObject): void
  /** After every complete (re)list: the cache is authoritative; an object absent from it is not in the cluster. */
  synced?(): void
}

export interface ReconnectInfo { cluster: string; kind: string; namespace: string | null; attempt: number; delayMs: number; reason: string }
export type { ProbeInfo } from './watch-probe.ts'

/** Probe period while a stream of a cluster waits in backoff (config WATCH_PROBE_INTERVAL_MS). */
export const DEFAULT_PROBE_INTERVAL_MS = 2000

export interface WatchHubOptions {
  labelSelector: string
  backoff: BackoffOptions
  /** Credentials for a cluster key, asked at every (re)list, so renewed credentials are picked up. */
  connect(cluster: string): Promise<KubeConfig>
  onReconnect?(info: ReconnectInfo): void
  /** Period of the cluster probe while a stream waits in backoff; 0 turns it off. Default 2000 ms. */
  probeIntervalMs?: number
  /** Timeout of one probe; default the interval (at least 1 s), at most `requestTimeoutMs`. */
  probeTimeoutMs?: number
  /** After every probe (tests and the benchmark count them). */
  onProbe?(info: ProbeInfo): void
  requestTimeoutMs?: number
  random?: () => number
}

export const streamKeyText = (k: StreamKey): string => JSON.stringify([k.cluster, k.apiVersion, k.kind, k.namespace])

/** A watch answers 200 then sends an ERROR event carrying a Status; 410 means the resourceVersion is gone. */
const statusCode = (o: unknown): number | null => {
  const code = (o as { code?: unknown })?.code
  return typeof code === 'number' ? code : null
}

/** Secret values never stay in memory here: only the metadata decides a Secret's status. */
function scrub(o: KubeObject): KubeObject {
  const copy = plain(o)
  if (copy.kind === 'Secret') {
    delete (copy as Record<string, unknown>).data
    delete (copy as Record<string, unknown>).stringData
  }
  return copy
}

class Stream {
  readonly cache = new Map<string, KubeObject>()
  readonly listeners = new Set<StreamListener>()
  synced = false
  private rv: string | null = null
  private path: string | null = null
  private kc: KubeConfig | null = null
  private attempt = 0
  private controller: AbortController | null = null
  private timer: NodeJS.Timeout | null = null
  private stopped = false
  /** The open watch request has been answered (headers received): counted as a connection. */
  open = false
  /** Dropped and not back yet (waiting in backoff or reconnecting): its cluster is probed meanwhile. */
  recovering = false

  constructor(readonly key: StreamKey, private readonly hub: WatchHub, private readonly o: WatchHubOptions) {}

  start(): void { void this.relist() }

  stop(): void {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    this.controller?.abort()
    this.controller = null
    this.open = false
    this.recovering = false
  }

  /** Waiting in backoff (not while a reconnect is under way). */
  get waiting(): boolean { return this.timer !== null }

  /** The cluster answers again: reconnect now, counting attempts afresh. False when not waiting. */
  wake(): boolean {
    if (this.stopped || !this.timer) return false
    clearTimeout(this.timer)
    this.timer = null
    this.attempt = 0
    this.reconnect()
    return true
  }

  private dispatch(type: WatchEventType, obj: KubeObject): void {
    for (const l of [...this.listeners]) {
      if (l.name !== '*' && l.name !== obj.metadata?.name) continue
      try { l.event(type, obj) } catch { /* a listener's failure is its own */ }
    }
  }

  private async client() {
    this.kc = await this.o.connect(this.key.cluster)
    return objectClient(this.kc, this.o.requestTimeoutMs)
  }

  /** Full list: the cache becomes the listing, differences go out as events, then the watch resumes from it. */
  private async relist(): Promise<void> {
    if (this.stopped) return
    try {
      const client = await this.client()
      try {
        const { apiVersion, kind, namespace } = this.key
        if (!this.path) {
          const served = await client.api.discover(apiVersion, kind)
          if (!served) throw new Error(`the cluster does not serve ${kind} (${apiVersion})`)
          const prefix = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`
          this.path = `${prefix}${served.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : ''}/${served.name}`
        }
        const list = await client.api.list(apiVersion, kind, namespace ?? undefined, undefined, undefined, undefined, undefined, this.o.labelSelector)
        if (this.stopped) return
        const items = new Map<string, KubeObject>()
        for (const item of list.items ?? []) {
          const o = scrub({ ...(item as KubeObject), apiVersion, kind })
          items.set(o.metadata.name, o)
        }
        const before = new Map(this.cache)
        this.cache.clear()
        for (const [name, o] of items) this.cache.set(name, o)
        for (const [name, old] of before) if (!items.has(name)) this.dispatch('DELETED', old)
        for (const [name, o] of items) {
          const old = before.get(name)
          if (!old) this.dispatch('ADDED', o)
          else if (old.metadata.resourceVersion !== o.metadata.resourceVersion) this.dispatch('MODIFIED', o)
        }
        this.rv = list.metadata?.resourceVersion ?? null
        this.synced = true
        for (const l of [...this.listeners]) { try { l.synced?.() } catch { /* its own */ } }
      } finally {
        client.close()
      }
      await this.watch()
    } catch (err) {
      this.retry(err, 'list')
    }
  }

  private async watch(): Promise<void> {
    if (this.stopped || !this.kc || !this.path) return
    const { Watch } = await k8s()
    let expired = false
    let healthy = false
    const startedAt = Date.now()
    const done = (err: unknown) => {
      this.open = false
      this.controller = null
      if (this.stopped) return
      if (healthy || Date.now() - startedAt >= this.o.backoff.maxMs) this.attempt = 0
      // Expired: as an ERROR event (what API servers send) or as the answer to the request itself.
      if (expired || (err as { statusCode?: unknown })?.statusCode === 410) { this.rv = null; void this.relist(); return }
      this.retry(err, 'watch')
    }
    const controller = await new Watch(this.kc).watch(this.path, {
      allowWatchBookmarks: true, labelSelector: this.o.labelSelector, ...(this.rv && { resourceVersion: this.rv }),
    }, (type: string, obj: KubeObject) => {
      if (this.stopped) return
      if (type === 'ERROR') {
        if (statusCode(obj) === 410) expired = true
        return
      }
      healthy = true
      const rv = obj?.metadata?.resourceVersion
      if (typeof rv === 'string' && rv) this.rv = rv
      if (type === 'BOOKMARK') return
      if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') return
      const o = scrub({ ...obj, apiVersion: this.key.apiVersion, kind: this.key.kind })
      if (type === 'DELETED') this.cache.delete(o.metadata.name)
      else this.cache.set(o.metadata.name, o)
      this.dispatch(type, o)
    }, done)
    if (this.stopped) { controller.abort(); return }
    // `done` may already have run (the request failed): then there is no watch to hold on to.
    if (!controller.signal.aborted) { this.controller = controller; this.open = true; this.recovering = false }
  }

  private retry(err: unknown, what: 'list' | 'watch'): void {
    if (this.stopped) return
    const delayMs = backoffDelay(this.attempt, this.o.backoff, this.o.random)
    const info: ReconnectInfo = { cluster: this.key.cluster, kind: this.key.kind, namespace: this.key.namespace, attempt: this.attempt + 1, delayMs, reason: `${what}: ${watchFailureReason(err)}` }
    this.attempt++
    this.hub.reconnects.push(delayMs)
    if (this.hub.reconnects.length > 1000) this.hub.reconnects.splice(0, 500)
    try { this.o.onReconnect?.(info) } catch { /* logging must not stop the watch */ }
    this.recovering = true
    this.timer = setTimeout(() => { this.timer = null; this.reconnect() }, delayMs)
    this.timer.unref?.()
    this.hub.probes.watch(this.key.cluster)
  }

  private reconnect(): void {
    if (this.stopped) return
    // Resume from the last resourceVersion when there is one (the cluster replays what changed meanwhile);
    // otherwise (never listed) list first. A 410 on resuming relists and diffs the cache.
    if (this.synced && this.rv) {
      // Fresh credentials for every reconnect (an OIDC token may have expired meanwhile).
      void (async () => { this.kc = await this.o.connect(this.key.cluster); await this.watch() })().catch((e) => this.retry(e, 'watch'))
    } else void this.relist()
  }

  /** One object read by name (a listener joined after the listing): absent → DELETED to its listeners. */
  async recheck(name: string): Promise<void> {
    if (this.stopped || this.cache.has(name)) return
    try {
      const client = await this.client()
      try {
        const { apiVersion, kind, namespace } = this.key
        const found = await client.api.read({ apiVersion, kind, metadata: { name, ...(namespace && { namespace }) } })
        if (this.stopped || this.cache.has(name)) return
        const o = scrub({ ...(found as KubeObject), apiVersion, kind })
        const selected = this.o.labelSelector.split(',').every((part) => {
          const [k, v] = part.split('=')
          return o.metadata.labels?.[k] === v
        })
        if (selected) { this.cache.set(name, o); this.dispatch('ADDED', o) } else this.dispatch('DELETED', o)
      } finally {
        client.close()
      }
    } catch (err) {
      if (isNotFound(err) && !this.stopped && !this.cache.has(name)) {
        this.dispatch('DELETED', { apiVersion: this.key.apiVersion, kind: this.key.kind, metadata: { name, ...(this.key.namespace && { namespace: this.key.namespace }) } } as KubeObject)
      }
      // Any other failure: the watch will say when the object shows up or goes.
    }
  }
}

export class WatchHub {
  private readonly streams = new Map<string, Stream>()
  /** Recent reconnect delays (ms), for tests and the benchmark to check the backoff bounds. */
  readonly reconnects: number[] = []
  readonly probes: ClusterProbes

  constructor(private readonly o: WatchHubOptions) {
    const intervalMs = o.probeIntervalMs ?? DEFAULT_PROBE_INTERVAL_MS
    this.probes = new ClusterProbes({
      intervalMs,
      timeoutMs: o.probeTimeoutMs ?? Math.min(o.requestTimeoutMs ?? 10_000, Math.max(1000, intervalMs)),
      connect: (cluster) => o.connect(cluster),
      recovering: (cluster) => this.ofCluster(cluster).filter((s) => s.recovering).length,
      wake: (cluster) => this.ofCluster(cluster).filter((s) => s.wake()).length,
      onProbe: o.onProbe,
    })
  }

  private ofCluster(cluster: string): Stream[] { return [...this.streams.values()].filter((s) => s.key.cluster === cluster) }

  /**
   * The cluster answers (its health check succeeded, say): every stream of it waiting in backoff reconnects
   * now with its attempts counted afresh. Answers how many did.
   */
  clusterAnswered(cluster: string): number { return this.probes.answered(cluster) }

  /** Streams of `cluster` waiting in backoff now. */
  waitingStreams(cluster: string): number { return this.ofCluster(cluster).filter((s) => s.waiting).length }

  /** Follows `listener.name` (or every object) in the stream of `key`, opening the stream if needed. */
  subscribe(key: StreamKey, listener: StreamListener): () => void {
    const text = streamKeyText(key)
    let stream = this.streams.get(text)
    if (!stream) {
      stream = new Stream(key, this, this.o)
      this.streams.set(text, stream)
      stream.listeners.add(listener)
      stream.start()
    } else {
      stream.listeners.add(listener)
      // Joined a stream that already listed: the object may have been applied since; ask for it by name.
      if (stream.synced && listener.name !== '*' && !stream.cache.has(listener.name)) void stream.recheck(listener.name)
    }
    const s = stream
    return () => {
      if (!s.listeners.delete(listener)) return
      if (s.listeners.size === 0) {
        s.stop()
        if (this.streams.get(text) === s) this.streams.delete(text)
        this.probes.release(key.cluster)
      }
    }
  }

  isSynced(key: StreamKey): boolean { return this.streams.get(streamKeyText(key))?.synced ?? false }
  object(key: StreamKey, name: string): KubeObject | undefined { return this.streams.get(streamKeyText(key))?.cache.get(name) }
  objects(key: StreamKey): KubeObject[] { return [...(this.streams.get(streamKeyText(key))?.cache.values() ?? [])] }

  /** Streams held (one per cluster, kind and namespace with a follower). */
  streamCount(): number { return this.streams.size }
  /** Watch requests currently open against clusters. */
  openWatches(): number { return [...this.streams.values()].filter((s) => s.open).length }

  close(): void {
    this.probes.close()
    for (const s of this.streams.values()) s.stop()
    this.streams.clear()
  }
}
