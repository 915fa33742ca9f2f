// What every reply must satisfy, whatever was sent: no 5xx except a documented 502/503, a status the
// operation documents, `{error}` and nothing else on errors, and no stack trace, driver text or seeded
// secret anywhere in the body. Each breach has a kind, so distinct defects are reported separately.
import type { Operation } from './fuzz-requests.ts'

export interface Breach {
  /** Groups counterexamples: one finding per operation and kind. */
  kind: string
  detail: string
}

const STACK = /\n\s+at \S|\(?(?:file:\/\/)?\/[\w./-]+\.[cm]?[jt]s:\d+:\d+/
const DRIVER = /MongoServerError|MongoError|MongoNetworkError|E11000|BSONError|BSONVersionError|\bBSON\b/

/** A status is documented when the operation lists it, its class (`4XX`) or a `default` reply. */
export function documented(operation: Operation, status: number): boolean {
  const codes = Object.keys(operation.op.responses ?? {})
  return codes.includes(String(status)) || codes.includes(`${String(status)[0]}XX`) || codes.includes('default')
}

export function judge(operation: Operation, status: number, body: string, secrets: string[]): Breach[] {
  const breaches: Breach[] = []
  if (status >= 500 && !([502, 503].includes(status) && documented(operation, status))) {
    breaches.push({ kind: `status ${status}`, detail: `answered ${status}` })
  } else if (!documented(operation, status)) {
    breaches.push({ kind: `undocumented ${status}`, detail: `answered ${status}, documented: ${Object.keys(operation.op.responses ?? {}).join(', ')}` })
  }
  if (status >= 400) {
    let parsed: unknown
    try { parsed = JSON.parse(body) } catch { parsed = undefined }
    const ok = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) &&
      Object.keys(parsed).length === 1 && typeof (parsed as { error?: unknown }).error === 'string' && (parsed as { error: string }).error.length > 0
    if (!ok) breaches.push({ kind: `error body of ${status} is not {error}`, detail: `body ${body.slice(0, 200)}` })
  }
  if (STACK.test(body)) breaches.push({ kind: 'stack trace in body', detail: body.slice(0, 300) })
  if (DRIVER.test(body)) breaches.push({ kind: 'driver text in body', detail: body.slice(0, 300) })
  for (const secret of secrets) if (body.includes(secret)) breaches.push({ kind: 'secret in body', detail: `contains a seeded secret (${secret.slice(0, 6)}…)` })
  return breaches
}
