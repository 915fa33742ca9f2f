// Pods: phase first, then what their containers are waiting on. A container stuck on an image pull or
// crash-looping will not recover by waiting, so the pod is `failed`; one still starting is `pending`.
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
    if (waiting && STUCK_REASONS.has(waiting.reason)) {
      return `container ${c.name}: ${waiting.reason}${str(waiting.message) ? `: ${waiting.message}` : ''}`
    }
    // Between two back-offs a crash-looping container runs for a moment: without this, a watcher would see
    // failed → pending → failed at every restart.
    const last = c?.lastState?.terminated as Loose | undefined
    if (c?.ready !== true && last && num(last.exitCode) !== 0 && num(c?.restartCount) >= CRASH_LOOP_RESTARTS) {
      return `container ${c.name}: CrashLoopBackOff: restarted ${num(c.restartCount)} times, last exit ${str(last.reason) ?? 'Error'} (code ${num(last.exitCode)})`
    }
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
    const scheduled = condition(pod, 'PodScheduled')
    if (scheduled?.status === 'False') return result('pending', `not scheduled: ${scheduled.message ?? scheduled.reason ?? 'no node fits'}`, ready, counters)
    const waiting = containerStatuses(pod).map((c) => c?.state?.waiting?.reason).find((r): r is string => typeof r === 'string')
    return result('pending', waiting ? `containers ${waiting}` : 'waiting to start', ready, counters)
  }
  if (phase === 'Running') {
    if (isPodReady(pod)) return result('running', 'running and ready', ready, counters)
    return result('pending', `running, ${ready} containers ready`, ready, counters)
  }
  return result('unknown', `phase ${phase}`, ready, counters)
}
