// Pods: phase first, then what their containers are waiting on. A container stuck on an image pull or
// crash-looping will not recover by waiting, so the pod is `failed`; one still starting is `pending`.
//
// A pod the scheduler marked Unschedulable is `failed` too (it was `pending`): no node can run it as the
// cluster stands, and nothing in the pod changes that; the scheduler's message names what is missing
// (CPU, a taint, a volume zone). A cluster autoscaler may still add a node; then the pod's next update moves
// the status on, as it does when a registry comes back for a pull in back-off. A scheduling gate
// (SchedulingGated) is deliberate and stays `pending`.
import { condition, result, spec, status, num, str, type DerivedStatus, type KubeObject, type Loose } from './types.ts'

/** Waiting reasons that do not clear without a change (image, configuration, or the program itself). */
export const STUCK_REASONS = new Set([
  'CrashLoopBackOff', 'ImagePullBackOff', 'ErrImagePull', 'InvalidImageName', 'ErrImageNeverPull',
  'CreateContainerConfigError', 'CreateContainerError', 'RunContainerError', 'PreStartHookError', 'PostStartHookError',
])

const containerStatuses = (pod: KubeObject): Loose[] => {
  const s = status(pod)
  return [...(Array.isArray(s.initContainerStatuses) ? s.initContainerStatuses : []), ...(Array.isArray(s.containerStatuses) ? s.containerStatuses : [])]
}

/** Restarts after which a container that keeps failing is crash-looping even while briefly running again. */
export const CRASH_LOOP_RESTARTS = 1

/** The first container of the pod stuck in a state that needs a change, as "container web: CrashLoopBackOff: ...". */
export function stuckContainer(pod: KubeObject): string | null {
  for (const c of containerStatuses(pod)) {
    const waiting = c?.state?.waiting as Loose | undefined
    const last = c?.lastState?.terminated as Loose | undefined
    // One text for a crash loop whether the container is waiting out its back-off or running for a moment
    // between two: the kubelet's own back-off text ("back-off 40s restarting failed container=… pod=…(uid)")
    // says less than the last exit and would change the message at every restart (see messageKey).
    const crashLoop = last && num(last.exitCode) !== 0 ? `container ${c.name}: CrashLoopBackOff: restarted ${num(c.restartCount)} times, last exit ${str(last.reason) ?? 'Error'} (code ${num(last.exitCode)})` : null
    if (waiting && STUCK_REASONS.has(waiting.reason)) {
      if (waiting.reason === 'CrashLoopBackOff' && crashLoop) return crashLoop
      return `container ${c.name}: ${waiting.reason}${str(waiting.message) ? `: ${waiting.message}` : ''}`
    }
    // Between two back-offs a crash-looping container runs for a moment: without this, a watcher would see
    // failed → pending → failed at every restart.
    if (c?.ready !== true && crashLoop && num(c?.restartCount) >= CRASH_LOOP_RESTARTS) return crashLoop
  }
  return null
}

export function podRestarts(pod: KubeObject): number {
  return (Array.isArray(status(pod).containerStatuses) ? status(pod).containerStatuses as Loose[] : []).reduce((n, c) => n + num(c?.restartCount), 0)
}

/** "ready/total" over the pod's regular containers. */
export function podReadyCount(pod: KubeObject): string {
  const statuses = Array.isArray(status(pod).containerStatuses) ? status(pod).containerStatuses as Loose[] : []
  const total = Array.isArray(spec(pod).containers) ? spec(pod).containers.length : statuses.length
  return `${statuses.filter((c) => c?.ready === true).length}/${total}`
}

export const isPodReady = (pod: KubeObject): boolean => condition(pod, 'Ready')?.status === 'True'

/** "not scheduled: <the scheduler's reason>" when the scheduler found no node for the pod (see the head comment). */
export function unschedulable(pod: KubeObject): string | null {
  if (str(status(pod).phase) !== null && status(pod).phase !== 'Pending') return null
  const scheduled = condition(pod, 'PodScheduled')
  return scheduled?.status === 'False' && scheduled.reason === 'Unschedulable' ? `not scheduled: ${str(scheduled.message) ?? 'no node fits'}` : null
}

/**
 * Why a pod will not become ready without a change (a stuck container, no node to run on), or null.
 * A terminating pod is on its way out and a finished one (an evicted pod its ReplicaSet has replaced) no
 * longer counts: neither is a problem of the workload any more.
 */
export function podProblem(pod: KubeObject): string | null {
  const phase = status(pod).phase
  if ((pod.metadata as Loose).deletionTimestamp || phase === 'Succeeded' || phase === 'Failed') return null
  return stuckContainer(pod) ?? unschedulable(pod)
}

export function podStatus(pod: KubeObject): DerivedStatus {
  const s = status(pod)
  const phase = str(s.phase) ?? 'Unknown'
  const ready = podReadyCount(pod)
  const counters = { phase, restarts: podRestarts(pod), podIP: str(s.podIP), nodeName: str(spec(pod).nodeName) }
  if ((pod.metadata as Loose).deletionTimestamp) return result('pending', 'terminating', ready, counters)
  if (phase === 'Succeeded') return result('completed', 'all containers exited successfully', ready, counters)
  if (phase === 'Failed') return result('failed', str(s.message) ?? str(s.reason) ?? 'a container exited with an error', ready, counters)
  const stuck = stuckContainer(pod)
  if (stuck) return result('failed', stuck, ready, counters)
  if (phase === 'Pending') {
    const noNode = unschedulable(pod)
    if (noNode) return result('failed', noNode, ready, counters)
    const scheduled = condition(pod, 'PodScheduled')
    if (scheduled?.status === 'False') return result('pending', `not scheduled: ${scheduled.message ?? scheduled.reason ?? 'waiting for a node'}`, ready, counters)
    const waiting = containerStatuses(pod).map((c) => c?.state?.waiting?.reason).find((r): r is string => typeof r === 'string')
    return result('pending', waiting ? `containers ${waiting}` : 'waiting to start', ready, counters)
  }
  if (phase === 'Running') {
    if (isPodReady(pod)) return result('running', 'running and ready', ready, counters)
    return result('pending', `running, ${ready} containers ready`, ready, counters)
  }
  return result('unknown', `phase ${phase}`, ready, counters)
}
