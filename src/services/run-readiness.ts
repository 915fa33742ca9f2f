// After the apply, a run waits (bounded) for its workloads to become ready, so "completed" means the
// graph is up, not merely accepted. Polling with a growing interval: a run lasts seconds and touches few
// workloads, so a watch per kind would cost more connections than it saves.
import type { KubeConfig } from '@kubernetes/client-node'
import { isNotFound, objectClient, plain } from '../kube/deploy-client.ts'
import type { KubeObject } from '../manifests/types.ts'
import type { Schedule } from './run-limiter.ts'

export const WORKLOAD_KINDS: ReadonlySet<string> = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Pod'])

export interface Derived { status: string; message: string }
export type DeriveStatus = (object: KubeObject, ctx?: { pods?: KubeObject[] }) => Derived

export interface ObjectRef { apiVersion: string; kind: string; name: string; namespace: string | null }

export interface LiveReader {
  read(ref: ObjectRef): Promise<KubeObject | null>
  /** The pods a workload selects (its spec.selector.matchLabels), for a message that says why it is not ready. */
  pods(namespace: string, matchLabels: Record<string, string>): Promise<KubeObject[]>
  close(): void
}

/** Reads through the deploy's pooled client (one keep-alive pool, a time limit per request), each read scheduled within the cluster's bound. */
export async function liveReader(kc: KubeConfig, schedule: Schedule = (task) => task(), timeoutMs?: number): Promise<LiveReader> {
  const client = await objectClient(kc, timeoutMs)
  return {
    read: (ref) => schedule(async () => {
      try {
        return plain(await client.api.read({ apiVersion: ref.apiVersion, kind: ref.kind, metadata: { name: ref.name, ...(ref.namespace && { namespace: ref.namespace }) } }))
      } catch (err) {
        if (isNotFound(err)) return null
        throw err
      }
    }),
    pods: (namespace, matchLabels) => schedule(async () => {
      const labelSelector = Object.entries(matchLabels).map(([k, v]) => `${k}=${v}`).join(',')
      const list = await client.api.list('v1', 'Pod', namespace, undefined, undefined, undefined, undefined, labelSelector)
      return (list.items ?? []).map(plain)
    }),
    close: () => client.close(),
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
