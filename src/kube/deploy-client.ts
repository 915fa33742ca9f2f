// The client-node object API as a deploy uses it: one keep-alive connection pool for the whole call (client-node
// makes a fresh agent, so a fresh TLS handshake, for every request), a time limit per request, plain JSON
// results, and failures sorted into "the API server said no" and "the cluster cannot be reached".
import http from 'node:http'
import https from 'node:https'
import type { Configuration, KubeConfig, KubernetesObject, KubernetesObjectApi } from '@kubernetes/client-node'
import { k8s } from './client.ts'
import { describeClusterError } from './upstream-errors.ts'
import { pooledCopy } from '../net/guarded-agent.ts'
import type { KubeObject } from '../manifests/types.ts'

export const DEFAULT_REQUEST_TIMEOUT_MS = 15_000
const POOL_SIZE = 16

/** client-node's object API with its discovery lookup (protected there) made callable. */
export type DeployObjectApi = KubernetesObjectApi & {
  discover(apiVersion: string, kind: string): Promise<{ name: string; namespaced: boolean } | undefined>
}

export interface ObjectClient {
  api: DeployObjectApi
  /** The same connection pool and time limit, for other client-node APIs (discovery). */
  configuration: Configuration
  close(): void
}

export async function objectClient(kc: KubeConfig, timeoutMs = DEFAULT_REQUEST_TIMEOUT_MS): Promise<ObjectClient> {
  const { KubernetesObjectApi, ServerConfiguration, createConfiguration } = await k8s()
  const cluster = kc.getCurrentCluster()
  if (!cluster) throw new Error('the kubeconfig names no current cluster')
  let pooled: http.Agent | undefined
  const config = createConfiguration({
    baseServer: new ServerConfiguration(cluster.server, {}),
    authMethods: { default: kc },
    promiseMiddleware: [{
      pre: async (ctx) => {
        // Only plain agents are pooled: a proxy agent carries per-request state we do not reproduce.
        const agent = ctx.getAgent()
        if (agent && (agent.constructor === https.Agent || agent.constructor === http.Agent)) {
          // The copy keeps the outbound policy's guard (guarded-agent.ts): a pool must not be a way around it.
          pooled ??= pooledCopy(agent, { keepAlive: true, maxSockets: POOL_SIZE })
          ctx.setAgent(pooled)
        }
        ctx.setSignal(AbortSignal.timeout(timeoutMs))
        return ctx
      },
      post: async (rsp) => rsp,
    }],
  })
  // Subclassed for `resource()` (discovery with client-node's own cache, which every request path uses anyway).
  const Api = class extends KubernetesObjectApi {
    discover(apiVersion: string, kind: string) { return this.resource(apiVersion, kind) }
    useContextNamespace(from: KubeConfig) { this.setDefaultNamespace(from) }
  }
  const api = new Api(config)
  api.useContextNamespace(kc)
  return { api, configuration: config, close: () => pooled?.destroy() }
}

/** client-node answers typed model instances (Dates, class instances); deploy results are plain JSON. */
export function plain(obj: unknown): KubeObject {
  const copy = JSON.parse(JSON.stringify(obj)) as KubeObject
  if (copy.metadata) delete copy.metadata.managedFields
  return copy
}

export function asSpec(obj: KubeObject): KubernetesObject & { metadata: { name: string; namespace?: string } } {
  return obj as unknown as KubernetesObject & { metadata: { name: string; namespace?: string } }
}

export interface ApiFailure { code: number; status: { message?: string; reason?: string; details?: { causes?: Array<{ field?: string; message?: string; reason?: string }> } } }

/** An HTTP answer from the API server (client-node's ApiException), with its Status body parsed. */
export function apiFailure(err: unknown): ApiFailure | null {
  if (!(err instanceof Error) || typeof (err as { code?: unknown }).code !== 'number' || !('body' in err)) return null
  const body = (err as { body?: unknown }).body
  let status: ApiFailure['status'] = {}
  try {
    const parsed = typeof body === 'string' ? JSON.parse(body) : body
    if (parsed && typeof parsed === 'object') status = parsed as ApiFailure['status']
  } catch { /* a non-JSON body (a proxy's HTML page) says nothing more than the code */ }
  return { code: (err as unknown as { code: number }).code, status }
}

export function isNotFound(err: unknown): boolean {
  return apiFailure(err)?.code === 404
}

/**
 * Why the cluster could not be reached at all, or null when it answered. A timeout counts: a cluster that does
 * not answer one request in the time limit is not worth sending the next hundred.
 */
export function unreachable(err: unknown): string | null {
  if (apiFailure(err)) return null
  const name = (err as { name?: unknown })?.name
  if (name === 'AbortError' || name === 'TimeoutError') return 'cannot reach the cluster: timed out'
  const text = describeClusterError(err)
  return text === 'the cluster did not answer as expected' ? null : text
}

/** One line from the API server's Status message (bounded), or the HTTP status alone. */
export function apiMessage(f: ApiFailure): string {
  const reason = f.status.reason ? ` (${f.status.reason})` : ''
  const text = (f.status.message ?? '').replace(/\s+/g, ' ').trim()
  const short = text.length > 300 ? `${text.slice(0, 297)}...` : text
  return short ? `the cluster answered ${f.code}${reason}: ${short}` : `the cluster answered ${f.code}${reason}`
}
