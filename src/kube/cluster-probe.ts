// Light calls that tell whether a cluster answers and what it is: the connection test, the health check
// and the metadata refresh all go through here.
import type { KubeConfig } from '@kubernetes/client-node'
import { k8s } from './client.ts'
import { withTimeout } from './upstream-errors.ts'

export interface ProbeResult { version: string; platform: string; nodes: number }
export interface ClusterMetadata { version: string; platform: string; node_count: number; namespaces: string[] }

/**
 * The health-check ping: the version endpoint, and the core discovery document, which (unlike /version on
 * many clusters) needs an authenticated caller, so a ping also proves the credentials are accepted.
 */
export async function pingCluster(kc: KubeConfig, timeoutMs: number): Promise<{ version: string; platform: string }> {
  const { VersionApi, CoreApi } = await k8s()
  const [info] = await Promise.all([
    withTimeout(kc.makeApiClient(VersionApi).getCode(), timeoutMs),
    withTimeout(kc.makeApiClient(CoreApi).getAPIVersions(), timeoutMs),
  ])
  return { version: info.gitVersion, platform: info.platform }
}

/** The connection test: version and number of nodes (which also proves the credentials can read). */
export async function probeCluster(kc: KubeConfig, timeoutMs: number): Promise<ProbeResult> {
  const { CoreV1Api } = await k8s()
  const [info, nodes] = await Promise.all([pingCluster(kc, timeoutMs), withTimeout(kc.makeApiClient(CoreV1Api).listNode(), timeoutMs)])
  return { ...info, nodes: nodes.items.length }
}

export async function clusterMetadata(kc: KubeConfig, timeoutMs: number): Promise<ClusterMetadata> {
  const { CoreV1Api } = await k8s()
  const core = kc.makeApiClient(CoreV1Api)
  const [info, nodes, namespaces] = await Promise.all([
    pingCluster(kc, timeoutMs),
    withTimeout(core.listNode(), timeoutMs),
    withTimeout(core.listNamespace(), timeoutMs),
  ])
  return { ...info, node_count: nodes.items.length, namespaces: namespaces.items.map((n) => n.metadata?.name ?? '').filter(Boolean).sort() }
}
