// What bench/status.ts observes, each entry stamped with performance.now() the moment this process received
// it: the events of an SSE stream (as a browser's subscriber gets them) and the watch events of the cluster
// (our own watch through @kubernetes/client-node, standing for "the simulator reports it"). Waits look for
// the first matching entry after a mark, so an event that arrived before the wait began is not missed, and
// every wait is bounded: null means "not seen within the timeout".
import http from 'node:http'
import { performance } from 'node:perf_hooks'
import { KubeConfig, Watch } from '@kubernetes/client-node'

export interface Entry<T> { at: number; value: T }

export class Timeline<T> {
  readonly entries: Array<Entry<T>> = []
  private readonly waiters = new Set<{ from: number; match: (v: T) => boolean; resolve: (e: Entry<T>) => void }>()

  push(value: T): void {
    const entry = { at: performance.now(), value }
    this.entries.push(entry)
    const index = this.entries.length - 1
    for (const w of [...this.waiters]) if (index >= w.from && w.match(value)) { this.waiters.delete(w); w.resolve(entry) }
  }

  /** Where the next entry will go: pass it to `first` to consider only what comes after now. */
  mark(): number { return this.entries.length }

  /** The first entry at or after `from` that matches, waiting up to `timeoutMs`; null if none came. */
  first(match: (v: T) => boolean, from: number, timeoutMs: number): Promise<Entry<T> | null> {
    for (let i = from; i < this.entries.length; i++) if (match(this.entries[i].value)) return Promise.resolve(this.entries[i])
    return new Promise((resolve) => {
      const waiter = { from, match, resolve: (e: Entry<T> | null) => { clearTimeout(timer); resolve(e) } }
      const timer = setTimeout(() => { this.waiters.delete(waiter); resolve(null) }, timeoutMs)
      this.waiters.add(waiter)
    })
  }
}

export interface SseEvent { type: string; data: any } // eslint-disable-line @typescript-eslint/no-explicit-any

/** An SSE subscriber over a real socket; resolves once the response headers arrived (200 only). */
export function openSse(url: string, token: string, into: Timeline<SseEvent>): Promise<{ close(): void }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' }, agent: false }, (res) => {
      if (res.statusCode !== 200) { res.resume(); reject(new Error(`GET ${url}: ${res.statusCode}`)); return }
      let pending = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        pending += chunk
        let end: number
        while ((end = pending.indexOf('\n\n')) >= 0) {
          const block = pending.slice(0, end)
          pending = pending.slice(end + 2)
          let type = 'message'
          const data: string[] = []
          for (const line of block.split('\n')) {
            if (line.startsWith('event:')) type = line.slice(6).trim()
            else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''))
          }
          if (data.length) into.push({ type, data: JSON.parse(data.join('\n')) })
        }
      })
      resolve({ close: () => req.destroy() })
    })
    req.on('error', reject)
  })
}

export interface WatchEvent { type: string; kind: 'Pod' | 'Deployment' | 'Service'; obj: any } // eslint-disable-line @typescript-eslint/no-explicit-any

/** Cluster-wide watches of pods, Deployments and Services, re-opened if the server ends one. */
export async function watchCluster(kc: KubeConfig, into: Timeline<WatchEvent>): Promise<{ close(): void }> {
  const watch = new Watch(kc)
  const controllers: AbortController[] = []
  let closed = false
  const paths: Array<[WatchEvent['kind'], string]> = [['Pod', '/api/v1/pods'], ['Deployment', '/apis/apps/v1/deployments'], ['Service', '/api/v1/services']]
  const open = async (kind: WatchEvent['kind'], path: string): Promise<void> => {
    const controller = await watch.watch(path, {}, (type, obj) => { if (type !== 'BOOKMARK') into.push({ type, kind, obj }) }, () => {
      if (!closed) void open(kind, path)
    })
    controllers.push(controller)
  }
  for (const [kind, path] of paths) await open(kind, path)
  return { close: () => { closed = true; for (const c of controllers) c.abort() } }
}

/** The waiting reasons of a pod's containers (ErrImagePull, CrashLoopBackOff, ...). */
export function waitingReasons(pod: any): string[] { // eslint-disable-line @typescript-eslint/no-explicit-any
  return ((pod?.status?.containerStatuses ?? []) as Array<{ state?: { waiting?: { reason?: string } } }>)
    .map((c) => c.state?.waiting?.reason).filter((r): r is string => typeof r === 'string')
}

/** Ready and desired replicas as a node's status on the stream says them (`ready: "a/b"` or the counters). */
export function readyOf(status: any): { ready: number; desired: number } | null { // eslint-disable-line @typescript-eslint/no-explicit-any
  if (typeof status?.ready === 'string') {
    const m = /^(\d+)\/(\d+)$/.exec(status.ready)
    if (m) return { ready: Number(m[1]), desired: Number(m[2]) }
  }
  if (typeof status?.readyReplicas === 'number' && typeof status?.replicas === 'number') return { ready: status.readyReplicas, desired: status.replicas }
  return null
}
