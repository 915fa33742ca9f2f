import type { ServerResponse } from 'node:http'
import type { ObjectApi } from './api.ts'
import { apiVersionOf, storageKey, type ResourceType } from './resources.ts'
import { statusObject } from './status.ts'
import type { StoreEvent } from './store.ts'
import { toTable, type IncludeObject } from './table.ts'
import type { KObject } from './util.ts'

export interface WatchRequest {
  rt: ResourceType
  namespace?: string
  filter: (o: KObject) => boolean
  resourceVersion?: string
  allowBookmarks: boolean
  sendInitialEvents: boolean
  timeoutSeconds?: number
  /** Set when the client asked for Table rows; each event's object is then a one-row Table. */
  table?: IncludeObject
}

interface OpenWatch { res: ServerResponse; close(): void }

/** An open watch as `GET /debug/watches` lists it: who is watching what (tests count a client's watches). */
export interface WatchInfo { path: string; query: string; user_agent: string }

/**
 * Streams watch events as newline-delimited JSON, the framing both client-go and client-node read:
 * `{"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":{...}}` per line.
 */
export class WatchHub {
  private readonly open = new Set<OpenWatch>()

  constructor(private readonly api: ObjectApi, private readonly bookmarkIntervalMs: number) {}

  get count(): number { return this.open.size }

  /** The open watches, each with the request path, query string (without `?`) and User-Agent it was opened with. */
  list(): WatchInfo[] {
    return [...this.open].map(({ res }) => {
      const url = res.req?.url ?? ''
      const q = url.indexOf('?')
      const ua = res.req?.headers['user-agent']
      return { path: q < 0 ? url : url.slice(0, q), query: q < 0 ? '' : url.slice(q + 1), user_agent: typeof ua === 'string' ? ua : '' }
    })
  }

  /** Ends every open watch cleanly, as an apiserver restart or a load balancer timeout would. */
  dropAll(): void {
    for (const w of [...this.open]) w.close()
  }

  serve(res: ServerResponse, w: WatchRequest): void {
    const { rt } = w
    const key = storageKey(rt)
    const store = this.api.store
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' })
    // Clients block on headers before they consider the watch established; send them now.
    res.flushHeaders()

    const send = (type: string, obj: object) => {
      if (res.writableEnded || res.destroyed) return
      res.write(JSON.stringify({ type, object: obj }) + '\n')
    }
    const render = (o: KObject) => {
      const presented = this.api.present(rt, o)
      return w.table ? toTable(rt, [presented], w.table, { resourceVersion: o.metadata.resourceVersion }) : presented
    }
    const bookmark = (annotations?: Record<string, string>) => {
      const metadata: Record<string, unknown> = { resourceVersion: String(store.resourceVersion) }
      if (annotations) metadata.annotations = annotations
      send('BOOKMARK', { kind: rt.kind, apiVersion: apiVersionOf(rt), metadata })
    }
    const inScope = (o: KObject) => !rt.namespaced || !w.namespace || o.metadata.namespace === w.namespace
    const deliver = (e: StoreEvent) => {
      if (e.key !== key || !inScope(e.object)) return
      const now = e.type !== 'DELETED' && w.filter(e.object)
      const before = e.old !== undefined && w.filter(e.old)
      // An object that stops matching a selector is DELETED for this watcher, and one that starts matching is ADDED.
      if (e.type === 'DELETED') { if (before) send('DELETED', render(e.object)) } else if (now && before) send('MODIFIED', render(e.object))
      else if (now) send('ADDED', render(e.object))
      else if (before) send('DELETED', render(e.object))
    }

    let unsubscribe = () => {}
    const timers: NodeJS.Timeout[] = []
    const entry: OpenWatch = {
      res,
      close: () => {
        unsubscribe()
        for (const t of timers) clearTimeout(t)
        this.open.delete(entry)
        if (!res.writableEnded) res.end()
      },
    }
    this.open.add(entry)
    res.on('close', () => entry.close())

    const rv = w.resourceVersion
    if (w.sendInitialEvents || !rv || rv === '0') {
      for (const o of this.api.store.list(key, rt.namespaced ? w.namespace : undefined)) if (w.filter(o)) send('ADDED', render(o))
      if (w.sendInitialEvents && w.allowBookmarks) bookmark({ 'k8s.io/initial-events-end': 'true' })
    } else {
      const past = store.since(Number(rv))
      if (past === 'expired') {
        // A real apiserver answers 200 and then an ERROR event carrying the 410, which is what informers handle.
        send('ERROR', statusObject(410, `too old resource version: ${rv} (${store.compactedThrough})`, 'Expired'))
        entry.close()
        return
      }
      for (const e of past) deliver(e)
    }
    unsubscribe = store.subscribe(deliver)
    if (w.allowBookmarks) {
      const tick = () => { bookmark(); timers[0] = setTimeout(tick, this.bookmarkIntervalMs).unref() }
      timers[0] = setTimeout(tick, this.bookmarkIntervalMs).unref()
    }
    if (w.timeoutSeconds && w.timeoutSeconds > 0) timers.push(setTimeout(() => entry.close(), w.timeoutSeconds * 1000).unref())
  }
}
