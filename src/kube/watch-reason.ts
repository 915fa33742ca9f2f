// Why a watch dropped, in words for the cluster's connection log. The log is read back through the API, so
// the words come from status codes, Kubernetes Status answers and error codes, never from a client's raw
// error text (node-fetch puts the whole request URL in its messages). The reason is kept whole; only a
// pathological one is shortened, at a word boundary and marked with an ellipsis, never mid-word.
import { STATUS_CODES } from 'node:http'
import { describeNetworkError, errorCodes } from '../net/network-errors.ts'

/** Longest reason kept; the log entry around it adds about a hundred characters. */
export const WATCH_REASON_MAX = 500

/** `text` on one line, at most `max` characters: whole when it fits, else cut after a word with '…'. */
export function clipAtWord(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim()
  if (line.length <= max) return line
  const room = Math.max(1, max - 1)
  const cut = line.slice(0, room + 1).lastIndexOf(' ')
  // A single word longer than the room (a token-like run of characters) has no boundary to cut at.
  const end = cut > room / 2 ? cut : room
  return `${line.slice(0, end).replace(/[\s,;:.(-]+$/, '')}…`
}

function httpStatus(err: object): number | null {
  // The watch's own request answers `statusCode`; client-node's ApiException (list, discovery) answers `code`.
  const { statusCode, code } = err as { statusCode?: unknown; code?: unknown }
  if (typeof statusCode === 'number') return statusCode
  return typeof code === 'number' ? code : null
}

/** The message of a Kubernetes Status in an ApiException's body, when the cluster sent one. */
function statusMessage(err: object): string | null {
  let body = (err as { body?: unknown }).body
  if (typeof body === 'string') {
    try { body = JSON.parse(body) } catch { return null }
  }
  const { kind, message } = (body ?? {}) as { kind?: unknown; message?: unknown }
  return kind === 'Status' && typeof message === 'string' && message.trim() ? message.trim() : null
}

/** Errors this code throws itself (no `code`, no cause) carry words written for this log. */
function ownMessage(err: unknown): string | null {
  if (!(err instanceof Error) || !err.message) return null
  const { codes, names } = errorCodes(err)
  if (codes.length || (err as { cause?: unknown }).cause || (err as { type?: unknown }).type) return null
  if (names.some((n) => n !== 'Error')) return null
  return err.message
}

/** Why a list or watch request ended, as one line for the connection log. */
export function watchFailureReason(err: unknown): string {
  if (!err) return 'the server closed the watch'
  if (typeof err !== 'object') return clipAtWord(String(err), WATCH_REASON_MAX) || 'connection failed'
  const status = httpStatus(err)
  if (status !== null) {
    const said = statusMessage(err)
    return clipAtWord(`HTTP ${status} ${STATUS_CODES[status] ?? ''}${said ? `: ${said}` : ''}`, WATCH_REASON_MAX)
  }
  const network = describeNetworkError(err, 'cluster')
  if (network) return network.message
  const { codes, names } = errorCodes(err)
  if (names.includes('AbortError') || names.includes('TimeoutError')) return 'the request timed out'
  const own = ownMessage(err)
  if (own) return clipAtWord(own, WATCH_REASON_MAX)
  return codes.length ? `connection failed (${codes[0]})` : 'connection failed'
}
