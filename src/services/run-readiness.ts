// After the apply, a run waits (bounded) for its workloads to become ready, so "completed" means the
// graph is up, not merely accepted. Polling with a growing interval: a run lasts seconds and touches few
// workloads, so a watch per kind would cost more connections than it saves.
import type { KubeConfig } from '@kubernetes/client-node'
import { k8s } from '../kube/client.ts'
import type { KubeObject } from '../manifests/types.ts'

export const WORKLOAD_KINDS: ReadonlySet<string> = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Pod'])

export interface Derived { status: string; message: string }
export type DeriveStatus = (object: KubeObject, ctx?: { pods?: KubeObject[] }) => Derived

export interface ObjectRef { apiVersion: string; kind: string; name: string; namespace: string | null }

export interface LiveReader {
  read(ref: ObjectRef): Promise<KubeObject | null>
  /** The pods a workload selects (its spec.selector.matchLabels), for a message that says why it is not ready. */
  pods(namespace: string, matchLabels: Record<string, string>): Promise<KubeObject[]>
}

export async function liveReader(kc: KubeConfig): Promise<LiveReader> {
  const { KubernetesObjectApi, CoreV1Api } = await k8s()
  const objects = KubernetesObjectApi.makeApiClient(kc)
  const core = kc.makeApiClient(CoreV1Api)
  const plain = (o: unknown) => JSON.parse(JSON.stringify(o)) as KubeObject
  return {
    async read(ref) {
      try {
        return plain(await objects.read({ apiVersion: ref.apiVersion, kind: ref.kind, metadata: { name: ref.name, ...(ref.namespace && { namespace: ref.namespace }) } }))
      } catch (err) {
        if ((err as { code?: number }).code === 404) return null
        throw err
      }
    },
    async pods(namespace, matchLabels) {
      const labelSelector = Object.entries(matchLabels).map(([k, v]) => `${k}=${v}`).join(',')
      const list = await core.listNamespacedPod({ namespace, labelSelector })
      return (list.items ?? []).map(plain)
    },
  }
}

export type Readiness = { ready: true; live: KubeObject } | { ready: false; message: string; live: KubeObject | null }

const READY = new Set(['running', 'completed'])

/**
 * Waits until the workload derives as running (or completed), fails fast when it derives as failed, and
 * gives up after `timeoutMs` with the last status message (read with its pods, which say why).
 */
export async function waitReady(reader: LiveReader, ref: ObjectRef, derive: DeriveStatus, timeoutMs: number, signal?: AbortSignal): Promise<Readiness> {
  const deadline = Date.now() + timeoutMs
  let interval = 20
  let live: KubeObject | null = null
  let last: Derived = { status: 'pending', message: 'not observed yet' }
  for (;;) {
    try {
      live = await reader.read(ref)
      if (!live) return { ready: false, message: `${ref.kind} ${ref.name} disappeared after it was applied`, live: null }
      last = derive(live)
      if (READY.has(last.status)) return { ready: true, live }
      if (last.status === 'failed') break
    } catch (err) {
      last = { status: 'unknown', message: `could not read it: ${(err as { code?: number }).code ?? 'no answer'}` }
    }
    if (Date.now() + interval > deadline || signal?.aborted) break
    await new Promise((resolve) => setTimeout(resolve, interval))
    interval = Math.min(interval * 2, 500)
  }
  // One more reading with the pods: a workload alone says "0/1 ready", its pods say "ImagePullBackOff".
  if (live && ref.kind !== 'Pod' && ref.namespace) {
    const selector = (live.spec as { selector?: { matchLabels?: Record<string, string> } } | undefined)?.selector?.matchLabels
    if (selector && Object.keys(selector).length) {
      try {
        const withPods = derive(live, { pods: await reader.pods(ref.namespace, selector) })
        if (READY.has(withPods.status)) return { ready: true, live }
        last = withPods
      } catch { /* the message without pods stands */ }
    }
  }
  const seconds = Math.round(timeoutMs / 100) / 10
  return { ready: false, message: last.status === 'failed' ? last.message : `not ready after ${seconds}s: ${last.message}`, live }
}
