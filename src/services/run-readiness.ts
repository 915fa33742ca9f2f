// After the apply, a run waits (bounded) for its workloads to become ready, so "completed" means the graph
// is up, not merely accepted. The wait reads the watch hub's derived state (resource-watch-service): the
// same state, from the same pods, that the streams publish, so a run and its subscribers never disagree,
// and a workload whose pods cannot start ends the wait as soon as a pod says so, not at the timeout.
import type { DerivedStatus } from '../kube/status/index.ts'
import type { AwaitedStatus, ObjectRef } from './resource-watch-service.ts'

export const WORKLOAD_KINDS: ReadonlySet<string> = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Pod'])

/** What a run needs of the watchers: follow what it applied, and tell when each workload settles. */
export interface LiveFollower {
  hold(ownerId: string, workflowId: string): void
  release(ownerId: string, workflowId: string): void
  follow(ownerId: string, workflowId: string): Promise<void>
  awaitStatus(ownerId: string, clusterId: string, ref: ObjectRef & { resourceVersion: string | null }, settled: (d: DerivedStatus) => boolean, timeoutMs: number): Promise<AwaitedStatus>
}

export type Readiness = { ready: true } | { ready: false; message: string }

/**
 * Ends the wait: ready (running, completed), or a state that will not turn ready without a change: failed,
 * degraded (`warning`: some replicas serve while others cannot start, or a paused rollout), deleted.
 */
export const settles = (d: DerivedStatus): boolean => d.status !== 'pending' && d.status !== 'unknown'

const READY = new Set(['running', 'completed'])

export async function awaitReady(live: LiveFollower, ownerId: string, clusterId: string, ref: ObjectRef & { resourceVersion: string | null }, timeoutMs: number): Promise<Readiness> {
  const outcome = await live.awaitStatus(ownerId, clusterId, ref, settles, timeoutMs)
  const last = outcome.last
  if (outcome.settled && last && READY.has(last.status)) return { ready: true }
  if (last?.status === 'deleted') return { ready: false, message: `${ref.kind} ${ref.name} disappeared after it was applied` }
  if (outcome.settled && last) return { ready: false, message: last.message }
  if (!outcome.followed && !last) return { ready: false, message: 'its status could not be followed (the service is stopping, or its record could not be written)' }
  const seconds = Math.round(timeoutMs / 100) / 10
  return { ready: false, message: `not ready after ${seconds}s: ${last?.message ?? 'no status observed yet (the cluster\'s watch has not answered)'}` }
}
