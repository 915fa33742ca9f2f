// One delivery attempt: a POST through the guarded transport (src/net/guarded-fetch.ts), which connects
// only to addresses the outbound policy allows and never follows a redirect itself. Redirects are followed
// here, at most MAX_REDIRECTS, each hop's URL checked (scheme, credentials, literal address) before its
// connection is made (address by address, through the policy's resolver). Every redirect re-sends the same
// POST: a webhook without its body is no delivery (307/308 semantics, also for 301/302/303).
//
// The outcome says what the queue does next: `delivered` on a 2xx; `retry` on 5xx, 429, a timeout or a
// connection error (the receiver may be back later); `failed` on anything else (another 4xx, a refused
// address at any hop, too many redirects), which another try would not change. Errors are described from
// codes only: never the response body, never a network error's text (it can carry the URL).
import type { OutboundPolicy } from '../../../net/outbound-policy.ts'
import { POLICY_REFUSED } from '../../../net/outbound-policy.ts'
import { guardedFetch } from '../../../net/guarded-fetch.ts'
import { describeNetworkError, errorCodes } from '../../../net/network-errors.ts'

export const MAX_REDIRECTS = 3
const REDIRECTS = new Set([301, 302, 303, 307, 308])

export type PostOutcome = 'delivered' | 'retry' | 'failed'

export interface PostResult { outcome: PostOutcome; status_code: number | null; error: string | null; redirects: number; duration_ms: number }

export interface PostOptions {
  policy: OutboundPolicy
  timeoutMs: number
  /** Aborts the attempt (shutdown); the result is then `retry` with `aborted: true`. */
  signal?: AbortSignal
  /** The transport; guardedFetch on the policy unless a test swaps the DNS through the policy itself. */
  fetch?: typeof fetch
}

export function classifyStatus(status: number): PostOutcome {
  if (status >= 200 && status < 300) return 'delivered'
  if (status === 429 || (status >= 500 && status < 600)) return 'retry'
  return 'failed'
}

export async function postWebhook(url: string, body: string, headers: Record<string, string>, opts: PostOptions): Promise<PostResult & { aborted?: boolean }> {
  const started = performance.now()
  // One controller of our own, held by its timer, rather than AbortSignal.any over AbortSignal.timeout:
  // Node has had bugs where such a composite signal never aborts once collected (nodejs/node#57736).
  const controller = new AbortController()
  let timedOut = false
  const timer = setTimeout(() => { timedOut = true; controller.abort() }, opts.timeoutMs)
  const stop = () => controller.abort()
  if (opts.signal?.aborted) stop()
  else opts.signal?.addEventListener('abort', stop, { once: true })
  try {
    return await attempt(url, body, headers, opts, controller.signal, () => timedOut, started)
  } finally {
    clearTimeout(timer)
    opts.signal?.removeEventListener('abort', stop)
  }
}

async function attempt(url: string, body: string, headers: Record<string, string>, opts: PostOptions, signal: AbortSignal, timedOut: () => boolean, started: number): Promise<PostResult & { aborted?: boolean }> {
  const doFetch = opts.fetch ?? guardedFetch(opts.policy, 'webhook')
  let redirects = 0
  let current = url
  let lastStatus: number | null = null
  const done = (outcome: PostOutcome, error: string | null) => ({ outcome, status_code: lastStatus, error, redirects, duration_ms: Math.round(performance.now() - started) })
  for (;;) {
    try {
      // The first URL was checked when saved; checking each hop here also covers a policy changed since.
      opts.policy.checkFormat(current, 'webhook URL')
    } catch (err) {
      return done('failed', hopRefused(redirects, (err as { code?: string }).code === POLICY_REFUSED ? 'the address is not allowed by the outbound policy' : (err as Error).message))
    }
    let res: Response
    try {
      res = await doFetch(current, { method: 'POST', headers, body, signal, redirect: 'manual' })
    } catch (err) {
      if (opts.signal?.aborted) return { ...done('retry', 'interrupted: the server was shutting down'), aborted: true }
      if (timedOut()) return done('retry', `timed out after ${opts.timeoutMs} ms`)
      const { codes } = errorCodes(err)
      if (codes.includes(POLICY_REFUSED)) return done('failed', hopRefused(redirects, 'the address is not allowed by the outbound policy'))
      return done('retry', describeNetworkError(err, 'receiver')?.message ?? 'the request failed')
    }
    lastStatus = res.status
    // The answer's body is never read: it is not shown, and a large one must not be held.
    await res.body?.cancel().catch(() => undefined)
    if (!REDIRECTS.has(res.status)) {
      const outcome = classifyStatus(res.status)
      return done(outcome, outcome === 'delivered' ? null : `the receiver answered ${res.status}`)
    }
    const location = res.headers.get('location')
    if (!location) return done('failed', `the receiver answered ${res.status} without a Location`)
    if (redirects >= MAX_REDIRECTS) return done('failed', `more than ${MAX_REDIRECTS} redirects`)
    try {
      current = new URL(location, current).href
    } catch {
      return done('failed', 'a redirect to something that is not a URL')
    }
    redirects++
  }
}

function hopRefused(redirects: number, why: string): string {
  return redirects ? `redirect ${redirects} refused: ${why}` : `refused: ${why}`
}
