import { statusObject, type StatusObject } from './status.ts'

export interface FailOptions {
  /** Only requests whose path starts with this count (e.g. `/apis/apps/v1/namespaces/default/deployments`). */
  pathPrefix?: string
  /** Only requests with this HTTP method count. */
  method?: string
  message?: string
}

interface Failure { remaining: number; status: number; opts: FailOptions }

/** Injected misbehaviour, consulted by the server for every API request (health endpoints excepted). */
export class Faults {
  latencyMs = 0
  private failures: Failure[] = []

  failNext(n: number, status: number, opts: FailOptions = {}): void {
    if (n > 0) this.failures.push({ remaining: n, status, opts })
  }

  clear(): void { this.failures = []; this.latencyMs = 0 }

  /** Consumes one injected failure matching this request, if any. */
  take(method: string, path: string): StatusObject | undefined {
    const f = this.failures.find((x) => (!x.opts.method || x.opts.method.toUpperCase() === method.toUpperCase()) && (!x.opts.pathPrefix || path.startsWith(x.opts.pathPrefix)))
    if (!f) return undefined
    f.remaining--
    if (f.remaining <= 0) this.failures.splice(this.failures.indexOf(f), 1)
    const s = statusObject(f.status, f.opts.message ?? `kube-sim injected failure (${f.status})`)
    // client-go honours Retry-After on 429/5xx, so injected throttling behaves like the real thing.
    if (f.status === 429) s.details = { retryAfterSeconds: 1 }
    return s
  }
}
