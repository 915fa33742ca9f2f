// What a failed outbound connection means, from error codes and names only: the text of a network error
// can carry the URL (and so credentials), so it is never shown. Shared by cluster and registry calls.
import { POLICY_REFUSED } from './outbound-policy.ts'
const TLS_TRUST = new Set(['DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'UNABLE_TO_GET_ISSUER_CERT', 'CERT_SIGNATURE_FAILURE', 'CERT_UNTRUSTED'])
const NETWORK: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by the server',
  ETIMEDOUT: 'timed out',
  UND_ERR_CONNECT_TIMEOUT: 'timed out while connecting',
  UND_ERR_HEADERS_TIMEOUT: 'timed out waiting for an answer',
  UND_ERR_SOCKET: 'connection closed by the server',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EPIPE: 'connection closed by the server',
}

/** The string `code`s and `name`s along an error's cause chain. */
export function errorCodes(err: unknown): { codes: string[]; names: string[] } {
  const codes: string[] = []
  const names: string[] = []
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 6; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, errno, name } = e as { code?: unknown; errno?: unknown; name?: unknown }
    if (typeof code === 'string') codes.push(code)
    if (typeof errno === 'string') codes.push(errno)
    if (typeof name === 'string') names.push(name)
  }
  return { codes, names }
}

export interface NetworkFailure { kind: 'tls-trust' | 'tls' | 'network' | 'policy'; message: string }

/** A description of a TLS or network failure reaching `what` ("cluster", "registry"), or undefined. */
export function describeNetworkError(err: unknown, what: string): NetworkFailure | undefined {
  const { codes } = errorCodes(err)
  // Refused before any packet was sent, so the words are the same whether something listens there or not;
  // no address is named because clients such as node-fetch keep only the error's code.
  if (codes.includes(POLICY_REFUSED)) return { kind: 'policy', message: `cannot reach the ${what}: the address is not allowed by the outbound policy` }
  const trust = codes.find((c) => TLS_TRUST.has(c))
  if (trust) return { kind: 'tls-trust', message: `TLS verification failed (${trust}): the ${what}'s certificate is not trusted` }
  if (codes.includes('CERT_HAS_EXPIRED')) return { kind: 'tls', message: `TLS verification failed (CERT_HAS_EXPIRED): the ${what}'s certificate has expired` }
  if (codes.includes('ERR_TLS_CERT_ALTNAME_INVALID')) return { kind: 'tls', message: `TLS verification failed (ERR_TLS_CERT_ALTNAME_INVALID): the certificate does not name the ${what}'s host` }
  if (codes.some((c) => c.startsWith('ERR_SSL') || c === 'EPROTO')) return { kind: 'tls', message: `TLS handshake with the ${what} failed` }
  const net = codes.find((c) => c in NETWORK)
  if (net) return { kind: 'network', message: `cannot reach the ${what}: ${NETWORK[net]}` }
  return undefined
}
