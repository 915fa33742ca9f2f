// Which pod and container a log stream or a terminal of a tracked resource reaches: a workload's (the pod
// asked for, or the likeliest), or a Pod record's own (a workload's pod, or one a run applied). The record is the
// owner's alone (404 otherwise); the cluster is reached with the access the caller needs (logs: viewer,
// a shell: deployer), so sharing a cluster as viewer never opens a shell on it.
import type { KubeConfig } from '@kubernetes/client-node'
import { AppError } from '../errors.ts'
import { resourceReader } from '../kube/resource-reader.ts'
import { isPodReady } from '../kube/status/pods.ts'
import type { KubeObject } from '../manifests/types.ts'
import { KINDS_WITH_PODS, livePods } from './resource-service.ts'

export type PodAccessLevel = 'viewer' | 'deployer'

export interface PodTargetDeps {
  /** The owner's tracked resource (NotFound when missing or not theirs). */
  resource: (ownerId: string, id: string) => Promise<{ id: string; kind: string; name: string; namespace: string | null; api_version: string; cluster_id: string; cluster: string; status?: string; parent_id?: string | null }>
  kubeConfigFor: (userId: string, ref: string, need: PodAccessLevel) => Promise<{ kc: KubeConfig; cluster: { id: string; name: string } }>
  timeoutMs: number
}

export interface PodTarget {
  kc: KubeConfig
  cluster: { id: string; name: string }
  namespace: string
  pod: string
  /** The chosen container, or null when `container` named none of the pod's (see `problem`). */
  container: string | null
  containers: string[]
  /** Why the container cannot be used, in words for the user; null when it can. */
  problem: string | null
}

const created = (p: KubeObject) => Date.parse(String(p.metadata.creationTimestamp ?? '')) || 0

/** Ready pods before the rest, newest first within each: the one a user most likely means. */
export function preferredPod(pods: KubeObject[]): KubeObject | undefined {
  return [...pods].sort((a, b) => Number(isPodReady(b)) - Number(isPodReady(a)) || created(b) - created(a) || a.metadata.name.localeCompare(b.metadata.name))[0]
}

function containerNames(pod: KubeObject, withInit: boolean): string[] {
  const spec = pod.spec as { containers?: Array<{ name?: unknown }>; initContainers?: Array<{ name?: unknown }> } | undefined
  const names = (list: Array<{ name?: unknown }> | undefined) => (Array.isArray(list) ? list.map((c) => c?.name).filter((n): n is string => typeof n === 'string') : [])
  return [...names(spec?.containers), ...(withInit ? names(spec?.initContainers) : [])]
}

export class PodTargets {
  constructor(private readonly deps: PodTargetDeps) {}

  /**
   * The pod (the resource itself, or `pod` among the workload's pods, or the preferred one) and container
   * (`container`, or the pod's first). Init containers count for logs only: a shell needs a running one.
   */
  async resolve(userId: string, resourceId: string, need: PodAccessLevel, pick: { pod?: string; container?: string; initContainers?: boolean }): Promise<PodTarget> {
    const doc = await this.deps.resource(userId, resourceId)
    if (!KINDS_WITH_PODS.has(doc.kind)) throw new AppError(404, `a ${doc.kind} has no pods; logs and terminals are for ${[...KINDS_WITH_PODS].join(', ')}`)
    // A workload's pod that went (a rollout, a scale-down) is not coming back under that name: say where its successors are.
    if (doc.kind === 'Pod' && doc.parent_id && doc.status === 'deleted') throw new AppError(404, `pod "${doc.name}" is no longer in the cluster; GET /v1/api/resources/${doc.parent_id}/pods lists its workload's pods now`)
    const { kc, cluster } = await this.deps.kubeConfigFor(userId, doc.cluster_id, need)
    const { live, pods } = await livePods(await resourceReader(kc, this.deps.timeoutMs), doc)
    let pod: KubeObject | undefined
    if (doc.kind === 'Pod') {
      pod = live
      if (pick.pod && pick.pod !== live.metadata.name) throw new AppError(404, `pod "${pick.pod}" is not this resource; it is the pod "${live.metadata.name}"`)
    } else {
      if (pick.pod) {
        pod = pods.find((p) => p.metadata.name === pick.pod)
        if (!pod) throw new AppError(404, `pod "${pick.pod}" is not one of ${doc.kind} "${doc.name}"'s pods; GET /v1/api/resources/${doc.id}/pods lists them`)
      } else {
        pod = preferredPod(pods)
        if (!pod) throw new AppError(404, `${doc.kind} "${doc.name}" has no pods right now`)
      }
    }
    const containers = containerNames(pod, pick.initContainers === true)
    const container = pick.container ?? containers[0] ?? null
    const known = container !== null && containers.includes(container)
    const problem = known ? null
      : container === null ? `pod "${pod.metadata.name}" has no containers`
        : `container "${container}" is not in pod "${pod.metadata.name}"; its containers: ${containers.join(', ') || 'none'}`
    return { kc, cluster, namespace: pod.metadata.namespace ?? doc.namespace ?? 'default', pod: pod.metadata.name, container: known ? container : null, containers, problem }
  }
}
