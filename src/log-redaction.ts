// What may be logged of a value: credentials scrubbed out of text, and errors reduced to type, message and
// code. No dependency on the web framework, so services log errors the same way without importing it.

export const SECRET_KEYS = ['password', 'current_password', 'new_password', 'token', 'refresh_token', 'id_token', 'access_token',
  'credentials', 'secret', 'client_secret', 'kubeconfig', 'code', 'state', 'invite_code']

const SECRET_QUERY = new RegExp(`([?&](?:${SECRET_KEYS.join('|')})=)[^&#]*`, 'gi')

/** Replaces the values of secret-bearing query parameters in a URL with a marker. */
export function redactUrl(url: string): string {
  return url.replace(SECRET_QUERY, '$1[REDACTED]')
}

// Credentials that can ride inside an error's text: user:password in a URI, and bearer tokens.
const URI_CREDENTIALS = /([a-z][a-z0-9+.-]*:\/\/)[^\s/@:]+(:[^\s/@]*)?@/gi
const BEARER = /(bearer\s+)[A-Za-z0-9._~+/=-]+/gi

/** Scrubs credentials out of free text (error messages, stacks) before it is logged. */
export function redactText(text: string): string {
  return redactUrl(text.replace(URI_CREDENTIALS, '$1[REDACTED]@').replace(BEARER, '$1[REDACTED]'))
}

const isCode = (code: unknown): code is string | number => typeof code === 'string' || typeof code === 'number'

/**
 * The `err` of a log line: type, message and code (Node's ERR_ and E codes, HTTP statuses), the cause's message
 * and code, and for an Error its stack, all scrubbed of credentials. Also for what is not an Error: a plain
 * `{ message, code }` (as callers pass to log a message they redacted themselves) keeps its fields, and any
 * other value says what it was, so a line never reads `[object Object]`.
 */
export function serializeError(err: unknown, depth = 0): Record<string, unknown> {
  if (err === null || typeof err !== 'object') return { message: redactText(String(err)) }
  const e = err as { name?: unknown; type?: unknown; message?: unknown; code?: unknown; cause?: unknown; stack?: unknown }
  const type = err instanceof Error ? err.name : typeof e.type === 'string' ? e.type : typeof e.name === 'string' ? e.name : undefined
  const message = typeof e.message === 'string'
    ? redactText(e.message)
    // Key names only: the values of an unknown object may be anything, secrets included.
    : `a value that is not an Error (${err.constructor?.name ?? 'object'} with keys ${Object.keys(err).slice(0, 10).join(', ') || 'none'})`
  return {
    ...(type && { type }), message, ...(isCode(e.code) && { code: e.code }),
    ...(e.cause !== undefined && depth < 1 && { cause: serializeError(e.cause, depth + 1) }),
    ...(err instanceof Error && depth === 0 && typeof e.stack === 'string' && { stack: redactText(e.stack) }),
  }
}

/**
 * What a service logs as `err` when the message may hold values of its own to hide (a run's secret values):
 * type, message (through `redact`) and code, with no stack, whose text the redaction would not reach.
 */
export function errorForLog(err: unknown, redact: (text: string) => string = (text) => text): Record<string, unknown> {
  const { stack: _stack, ...fields } = serializeError(err)
  const cause = fields.cause as { message?: string } | undefined
  return { ...fields, message: redact(String(fields.message)), ...(cause && { cause: { ...cause, message: redact(String(cause.message)) } }) }
}
