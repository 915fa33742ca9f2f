import { statusObject, type StatusObject } from './status.ts'

export interface FailOptions {
  /** Only requests whose path starts with this count (e.g. `/apis/apps/v1/namespaces/default/deployments`). */
  pathPrefix?: string
  /** Only requests with this HTTP method count. */
  method?: string
  message?: string
}

interface Failure { remaining: number; status: number; opts: FailOptions }

/** A request held before it is handled (see Faults.hold). */
export interface RequestHold {
  /** Resolves when the first matching request has arrived and is waiting. */
  reached: Promise<void>
  /** Lets it (and any later match) be handled. */
  release(): void
}

interface Hold { opts: FailOptions; reached: () => void; released: Promise<void>; release(): void }

const matches = (opts: FailOptions, method: string, path: string) => (!opts.method || opts.method.toUpperCase() === method.toUpperCase()) && (!opts.pathPrefix || path.startsWith(opts.pathPrefix))

/** Injected misbehaviour, consulted by the server for every API request (health endpoints excepted). */
export class Faults {
  latencyMs = 0
  private failures: Failure[] = []

  failNext(n: number, status: number, opts: FailOptions = {}): void {
    if (n > 0) this.failures.push({ remaining: n, status, opts })
  }

  private holds: Hold[] = []

  /**
   * Holds the next request matching `opts` (and any later one until released) before it is handled, so a
   * test can act while a client waits on it, e.g. open a stream while a Job is still being created.
   */
  hold(opts: FailOptions): RequestHold {
    let reached!: () => void
    let release!: () => void
    const seen = new Promise<void>((resolve) => { reached = resolve })
    const released = new Promise<void>((resolve) => { release = resolve })
    const hold: Hold = { opts, reached, released, release: () => { this.holds = this.holds.filter((h) => h !== hold); release() } }
    this.holds.push(hold)
    return { reached: seen, release: hold.release }
  }

  /** Waits while a hold matches this request. */
  async gate(method: string, path: string): Promise<void> {
    const hold = this.holds.find((h) => matches(h.opts, method, path))
    if (!hold) return
    hold.reached()
    await hold.released
  }

  clear(): void {
    this.failures = []
    this.latencyMs = 0
    for (const h of this.holds) h.release()
  }

  /** Consumes one injected failure matching this request, if any. */
  take(method: string, path: string): StatusObject | undefined {
    const f = this.failures.find((x) => matches(x.opts, method, path))
    if (!f) return undefined
    f.remaining--
    if (f.remaining <= 0) this.failures.splice(this.failures.indexOf(f), 1)
    const s = statusObject(f.status, f.opts.message ?? `kube-sim injected failure (${f.status})`)
    // client-go honours Retry-After on 429/5xx, so injected throttling behaves like the real thing.
    if (f.status === 429) s.details = { retryAfterSeconds: 1 }
    return s
  }
}
