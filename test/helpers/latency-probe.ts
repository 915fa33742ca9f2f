// GET /healthz over real HTTP, one request after another, while a test makes the service do something
// heavy: the worst answer time tells whether anything held the event loop. A new connection per request
// (no keep-alive pool to hide behind), bounded by its own deadline so a stalled server fails the probe
// instead of hanging it.
import { request } from 'node:http'

export interface LatencyReport { worstMs: number; count: number; failures: string[] }

function once(base: string, deadlineMs: number): Promise<number> {
  const started = performance.now()
  return new Promise((resolve, reject) => {
    const req = request(`${base}/healthz`, { agent: false, timeout: deadlineMs }, (res) => {
      res.resume()
      res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - started) : reject(new Error(`/healthz answered ${res.statusCode}`))))
    })
    req.on('timeout', () => req.destroy(new Error(`/healthz did not answer within ${deadlineMs} ms`)))
    req.on('error', reject)
    req.end()
  })
}

/** Probes until `work` settles (and at least `minProbes` times); answers the work's outcome and the probe's report. */
export async function whileProbing<T>(base: string, work: () => Promise<T>, { minProbes = 5, deadlineMs = 5000 } = {}): Promise<{ result: T; latency: LatencyReport }> {
  const report: LatencyReport = { worstMs: 0, count: 0, failures: [] }
  let done = false
  const probing = (async () => {
    while (!done || report.count < minProbes) {
      try {
        report.worstMs = Math.max(report.worstMs, await once(base, deadlineMs))
      } catch (err) {
        report.failures.push((err as Error).message)
      }
      report.count++
    }
  })()
  try {
    const result = await work()
    return { result, latency: report }
  } finally {
    done = true
    await probing
  }
}

/**
 * Runs a probed attempt until its worst /healthz is within `budgetMs`, at most `tries` times; answers the
 * best attempt and every attempt's worst. Why more than one: the suite runs two test files at once on a
 * 2-core machine, and the operating system can keep the event loop's thread off a CPU for a few hundred
 * milliseconds while it does nothing at all; that delay is random. Work that holds the loop is not: it
 * holds it again on every attempt, so it still fails (the inputs this guards against held it for seconds).
 */
export async function withinBudget<T>(budgetMs: number, attempt: () => Promise<{ result: T; latency: LatencyReport }>, tries = 3): Promise<{ result: T; latency: LatencyReport; worstPerAttempt: number[] }> {
  const worstPerAttempt: number[] = []
  let best: { result: T; latency: LatencyReport } | undefined
  for (let i = 0; i < tries; i++) {
    const outcome = await attempt()
    worstPerAttempt.push(outcome.latency.worstMs)
    if (!best || outcome.latency.failures.length < best.latency.failures.length || (outcome.latency.failures.length === best.latency.failures.length && outcome.latency.worstMs < best.latency.worstMs)) best = outcome
    if (outcome.latency.failures.length === 0 && outcome.latency.worstMs < budgetMs) break
  }
  return { ...best!, worstPerAttempt }
}
