// Deployments, StatefulSets, DaemonSets and ReplicaSets: desired against ready replicas, after the controller
// has observed the latest spec (otherwise the counts describe an older one). Argo CD's gitops-engine
// health checks are the model.
//
// Pods that cannot start (crash loop, image pull, bad config; see STUCK_REASONS) decide the rest when the
// caller passes the workload's pods: none ready → `failed` (nothing serves, and waiting will not fix it),
// some ready → `warning` (serving, degraded). Without pods the object alone decides: such a workload reads
// `pending` until Deployment's progress deadline turns it `failed`.
import { condition, describeCondition, notObserved, result, spec, status, num, type DerivedStatus, type KubeObject, type StatusContext, type Counters } from './types.ts'
import { stuckContainer } from './pods.ts'

/** The rollout-independent verdict once counts are known; `stuck` pods turn a shortfall into failed/warning. */
function byReplicas(desired: number, ready: number, counters: Counters, ctx: StatusContext, waiting: string | null): DerivedStatus {
  const readyText = `${ready}/${desired}`
  const stuck = (ctx.pods ?? []).map((p) => ({ name: p.metadata.name, problem: stuckContainer(p) })).find((p) => p.problem)
  if (ready < desired && stuck) {
    const what = `pod ${stuck.name} ${stuck.problem}`
    return ready === 0 ? result('failed', `no replica ready: ${what}`, readyText, counters) : result('warning', `${readyText} ready: ${what}`, readyText, counters)
  }
  if (waiting) return result('pending', waiting, readyText, counters)
  if (ready < desired) return result('pending', `${readyText} replicas ready`, readyText, counters)
  return result('running', desired === 0 ? `scaled to zero` : `${readyText} replicas ready`, readyText, counters)
}

export function deploymentStatus(o: KubeObject, ctx: StatusContext = {}): DerivedStatus {
  const s = status(o)
  const desired = num(spec(o).replicas, 1)
  const ready = num(s.readyReplicas)
  const updated = num(s.updatedReplicas)
  const available = num(s.availableReplicas)
  const counters = { replicas: desired, readyReplicas: ready, availableReplicas: available, updatedReplicas: updated }
  const readyText = `${ready}/${desired}`
  if (spec(o).paused === true) return result('warning', 'rollout paused', readyText, counters)
  const progressing = condition(o, 'Progressing')
  if (progressing?.status === 'False' && progressing.reason === 'ProgressDeadlineExceeded') {
    return result('failed', describeCondition(progressing), readyText, counters)
  }
  if (notObserved(o)) return result('pending', 'waiting for the controller to observe the new spec', readyText, counters)
  let waiting: string | null = null
  if (updated < desired) waiting = `rollout: ${updated} of ${desired} replicas updated`
  else if (num(s.replicas) > updated) waiting = `rollout: ${num(s.replicas) - updated} old replicas pending termination`
  else if (available < updated) waiting = `rollout: ${available} of ${updated} updated replicas available`
  return byReplicas(desired, ready, counters, ctx, waiting)
}

export function statefulSetStatus(o: KubeObject, ctx: StatusContext = {}): DerivedStatus {
  const s = status(o)
  const desired = num(spec(o).replicas, 1)
  const ready = num(s.readyReplicas)
  const updated = num(s.updatedReplicas)
  const counters = { replicas: desired, readyReplicas: ready, currentReplicas: num(s.currentReplicas), updatedReplicas: updated }
  if (notObserved(o)) return result('pending', 'waiting for the controller to observe the new spec', `${ready}/${desired}`, counters)
  const partition = num(spec(o).updateStrategy?.rollingUpdate?.partition)
  const rolling = spec(o).updateStrategy?.type !== 'OnDelete' && s.updateRevision && s.currentRevision !== s.updateRevision && updated < desired - partition
  return byReplicas(desired, ready, counters, ctx, rolling ? `rollout: ${updated} of ${desired - partition} replicas updated` : null)
}

export function daemonSetStatus(o: KubeObject, ctx: StatusContext = {}): DerivedStatus {
  const s = status(o)
  const desired = num(s.desiredNumberScheduled)
  const ready = num(s.numberReady)
  const updated = num(s.updatedNumberScheduled)
  const counters = { desiredNumberScheduled: desired, currentNumberScheduled: num(s.currentNumberScheduled), numberReady: ready, numberAvailable: num(s.numberAvailable), updatedNumberScheduled: updated }
  if (notObserved(o) || s.desiredNumberScheduled === undefined) return result('pending', 'waiting for the controller to observe the new spec', `${ready}/${desired}`, counters)
  const rolling = spec(o).updateStrategy?.type !== 'OnDelete' && updated < desired
  return byReplicas(desired, ready, counters, ctx, rolling ? `rollout: ${updated} of ${desired} nodes updated` : null)
}

export function replicaSetStatus(o: KubeObject, ctx: StatusContext = {}): DerivedStatus {
  const s = status(o)
  const desired = num(spec(o).replicas, 1)
  const ready = num(s.readyReplicas)
  const counters = { replicas: desired, readyReplicas: ready, availableReplicas: num(s.availableReplicas) }
  const failure = condition(o, 'ReplicaFailure')
  if (failure?.status === 'True') return result('failed', describeCondition(failure), `${ready}/${desired}`, counters)
  if (notObserved(o)) return result('pending', 'waiting for the controller to observe the new spec', `${ready}/${desired}`, counters)
  return byReplicas(desired, ready, counters, ctx, null)
}
