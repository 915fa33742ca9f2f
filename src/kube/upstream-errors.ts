// What a failed call to a cluster means, in words a user can act on. Built from error codes and HTTP
// statuses only: the raw text of a failure can carry request details, so it never reaches a reply.
import { UpstreamError } from '../errors.ts'

const TLS_TRUST = new Set(['DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'UNABLE_TO_GET_ISSUER_CERT', 'CERT_SIGNATURE_FAILURE', 'CERT_UNTRUSTED'])
const NETWORK: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by the server',
  ETIMEDOUT: 'timed out',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EPIPE: 'connection closed by the server',
}

function codes(err: unknown): string[] {
  const found: string[] = []
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, errno } = e as { code?: unknown; errno?: unknown }
    if (typeof code === 'string') found.push(code)
    if (typeof errno === 'string') found.push(errno)
  }
  return found
}

function isApiException(err: unknown): err is { code: number } {
  return err instanceof Error && typeof (err as { code?: unknown }).code === 'number' && 'body' in err && 'headers' in err
}

/** A one-line description of why a cluster call failed. */
export function describeClusterError(err: unknown): string {
  // client-node's ApiException: an HTTP status in `code`, with the reply's body and headers.
  if (isApiException(err)) {
    if (err.code === 401) return 'the cluster refused the credentials (401 Unauthorized)'
    if (err.code === 403) return 'the credentials lack permission for this request (403 Forbidden)'
    return `the cluster answered ${err.code}`
  }
  const all = codes(err)
  const tls = all.find((c) => TLS_TRUST.has(c))
  if (tls) return `TLS verification failed (${tls}): the cluster's certificate is not trusted; check ca_data`
  if (all.includes('CERT_HAS_EXPIRED')) return 'TLS verification failed (CERT_HAS_EXPIRED): the cluster\'s certificate has expired'
  if (all.includes('ERR_TLS_CERT_ALTNAME_INVALID')) return 'TLS verification failed (ERR_TLS_CERT_ALTNAME_INVALID): the certificate does not name this server'
  if (all.some((c) => c.startsWith('ERR_SSL') || c === 'EPROTO')) return 'TLS handshake failed'
  const net = all.find((c) => c in NETWORK)
  if (net) return `cannot reach the cluster: ${NETWORK[net]}`
  return 'the cluster did not answer as expected'
}

export function clusterUpstreamError(err: unknown): UpstreamError {
  return new UpstreamError(describeClusterError(err))
}

/** Rejects with an ETIMEDOUT-coded error when `promise` takes longer than `ms`. */
export async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`timed out after ${ms} ms`), { code: 'ETIMEDOUT' })), ms)
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}
