// What a failed call to a cluster means, in words a user can act on. Built from error codes and HTTP
// statuses only: the raw text of a failure can carry request details, so it never reaches a reply.
import { UpstreamError } from '../errors.ts'
import { describeNetworkError } from '../net/network-errors.ts'

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
  const failure = describeNetworkError(err, 'cluster')
  if (failure) return failure.kind === 'tls-trust' ? `${failure.message}; check ca_data` : failure.message
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
