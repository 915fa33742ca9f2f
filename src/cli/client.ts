// The API client: openapi-fetch on the types generated from openapi.yaml, so every path, parameter and body
// is checked against the API at compile time. Failures become one line: the API's own `{error}`.
import createClient, { type Client } from 'openapi-fetch'
import type { paths } from './api/openapi.ts'
import { CliError } from './errors.ts'

export type ApiClient = Client<paths>

export function apiClient(server: string, token: string | null, signal?: AbortSignal): ApiClient {
  return createClient<paths>({
    baseUrl: server,
    headers: { 'user-agent': 'cwo', ...(token && { authorization: `Bearer ${token}` }) },
    // Ctrl-C aborts what is in flight, not only what follows.
    ...(signal && { fetch: (req: Request) => fetch(req, { signal }) }),
  })
}

/** The reason a request never got an answer, without the URL or the stack of undici's error. */
export function unreachable(server: string, err: unknown): CliError {
  if ((err as Error)?.name === 'AbortError') return new CliError('interrupted', 130)
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause
  const why = cause?.code === 'ECONNREFUSED' ? 'connection refused'
    : cause?.code === 'ENOTFOUND' ? 'unknown host'
      : cause?.code ?? cause?.message ?? (err as Error)?.message ?? 'no answer'
  return new CliError(`cannot reach ${server}: ${why}`)
}

/** The message for a refused request: the API's `{error}`, with the status, and what to do about a 401. */
export function apiError(status: number, body: unknown): CliError {
  const message = body && typeof body === 'object' && typeof (body as { error?: unknown }).error === 'string'
    ? (body as { error: string }).error
    : typeof body === 'string' && body ? body.slice(0, 200) : 'no message'
  const hint = status === 401 ? ' (log in again: cwo login)' : ''
  return new CliError(`${status}: ${message}${hint}`)
}

/**
 * Awaits an openapi-fetch call and answers its data, or throws the API's error. `server` names the server
 * in the message when it cannot be reached.
 */
export async function ok<T>(server: string, call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response }
  try { result = await call } catch (err) { throw unreachable(server, err) }
  if (!result.response.ok) throw apiError(result.response.status, result.error)
  return result.data as T
}
