// One cluster's part of the overview: its nodes and pods, read with two list calls under one deadline.
// The watch hub cannot answer this: it watches only the kinds and namespaces of tracked resources, never
// nodes nor every pod. A pod list is needed beside the node list because pod phases and requests are per
// pod; both run at once, so a cluster costs one round trip. The pod list asks for one page (POD_LIST_LIMIT)
// so a very large cluster cannot make one overview read an unbounded reply: beyond it the figures say partial.
import type { KubeConfig } from '@kubernetes/client-node'
import { k8s } from '../../kube/client.ts'
import { readNodes, readPods, type NodeTotals, type PodTotals } from '../../kube/cluster-usage.ts'
import { describeClusterError, withTimeout } from '../../kube/upstream-errors.ts'
import { AppError } from '../../errors.ts'

export const POD_LIST_LIMIT = 5000

export type ClusterReading =
  | { reachable: true; nodes: NodeTotals; pods: PodTotals & { partial: boolean } }
  | { reachable: false; message: string }

/** Reads the cluster, or says why it could not within `timeoutMs` (connecting included); never throws. */
export async function readCluster(connect: () => Promise<KubeConfig>, timeoutMs: number, podLimit = POD_LIST_LIMIT): Promise<ClusterReading> {
  const { CoreV1Api } = await k8s() // loading the client is not the cluster's time
  try {
    return await withTimeout((async () => {
      const api = (await connect()).makeApiClient(CoreV1Api)
      const [nodes, pods] = await Promise.all([api.listNode(), api.listPodForAllNamespaces({ limit: podLimit })])
      return { reachable: true as const, nodes: readNodes(nodes.items), pods: { ...readPods(pods.items), partial: Boolean(pods.metadata?._continue) } }
    })(), timeoutMs)
  } catch (err) {
    // Service errors (credentials that no longer open, an address the policy refuses) carry their own words.
    return { reachable: false, message: err instanceof AppError ? err.message : describeClusterError(err) }
  }
}
