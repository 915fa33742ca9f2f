// Deployments, StatefulSets, DaemonSets and ReplicaSets: desired against ready replicas, after the controller
// has observed the latest spec (otherwise the counts describe an older one). Argo CD's gitops-engine
// health checks are the model.
//
// When the caller passes the workload's pods, pods that will not become ready without a change (crash
// loop, image pull, bad config, no node fits; see podProblem) decide before the counts, as soon as a pod
// says so (Argo CD's Degraded):
// - a rollout whose new pods have such a problem is `failed` even while the old pods still serve: the new
//   spec will not go live, and the counts alone read "ready == desired" (the old pods) until the progress
//   deadline, ten minutes later. Which pods are new is read from the pods (revisions.ts);
// - otherwise (one revision) none ready is `failed` (nothing serves), some ready is `warning`: the spec
//   runs on the other pods, so the failing one is more likely a local matter (its node, its data) and the
//   workload serves, degraded.
// Without pods the object alone decides: such a workload reads `pending` until Deployment's progress
// deadline turns it `failed`.
import { condition, describeCondition, notObserved, result, spec, status, num, type DerivedStatus, type KubeObject, type StatusContext, type Counters, type Loose } from './types.ts'
import { isPodReady, podProblem } from './pods.ts'
import { splitByTemplate, splitStatefulSet, type RevisionSplit } from './revisions.ts'

/** Pods named in a message; the rest are counted. */
export const NAMED_PODS = 3

/** "pod a container web: ImagePullBackOff: …; pod b …; and 2 more pods" over the pods with a problem, by name. */
function describeProblems(pods: KubeObject[]): string | null {
  const problems = pods.map((p) => ({ name: String(p.metadata.name ?? ''), problem: podProblem(p) }))
    .filter((p): p is { name: string; problem: string } => p.problem !== null)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  if (!problems.length) return null
  const named = problems.slice(0, NAMED_PODS).map((p) => `pod ${p.name} ${p.problem}`)
  const more = problems.length - named.length
  return named.join('; ') + (more ? `; and ${more} more pod${more === 1 ? '' : 's'}` : '')
}

const live = (pods: KubeObject[]): KubeObject[] => pods.filter((p) => !(p.metadata as Loose).deletionTimestamp && status(p).phase !== 'Succeeded' && status(p).phase !== 'Failed')

/** What the pods say beyond the counts (rules in the head comment); null when they add nothing. */
function podVerdict(desired: number, ready: number, counters: Counters, ctx: StatusContext, split: RevisionSplit | null): DerivedStatus | null {
  const readyText = `${ready}/${desired}`
  if (split && live(split.old).length) {
    const stuck = describeProblems(split.current)
    if (stuck) {
      const oldReady = live(split.old).filter(isPodReady).length
      return result('failed', `rollout stuck: ${stuck}; ${oldReady ? `${oldReady}/${desired} old replicas still serve` : 'no old replica serves'}`, readyText, counters)
    }
  }
  const stuck = ready < desired ? describeProblems(ctx.pods ?? []) : null
  if (!stuck) return null
  return ready === 0 ? result('failed', `no replica ready: ${stuck}`, readyText, counters) : result('warning', `${readyText} ready: ${stuck}`, readyText, counters)
}

/** The counts' verdict once the pods have had their say. */
function byReplicas(desired: number, ready: number, counters: Counters, waiting: string | null): DerivedStatus {
  const readyText = `${ready}/${desired}`
  if (waiting) return result('pending', waiting, readyText, counters)
  if (ready < desired) return result('pending', `${readyText} replicas ready`, readyText, counters)
  return result('running', desired === 0 ? `scaled to zero` : `${readyText} replicas ready`, readyText, counters)
}

const OBSERVING = 'waiting for the controller to observe the new spec'

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
    const why = describeProblems(ctx.pods ?? [])
    return result('failed', describeCondition(progressing) + (why ? ` (${why})` : ''), readyText, counters)
  }
  // The deployment controller writes observedGeneration on every sync, within milliseconds of a spec change
  // and whatever its pods do, so this message lasts as long as the controller's reaction.
  if (notObserved(o)) return result('pending', OBSERVING, readyText, counters)
  const pods = ctx.pods ?? []
  const verdict = podVerdict(desired, ready, counters, ctx, pods.length ? splitByTemplate(spec(o).template, pods, 'pod-template-hash') : null)
  if (verdict) return verdict
  let waiting: string | null = null
  if (updated < desired) waiting = `rollout: ${updated} of ${desired} replicas updated`
  else if (num(s.replicas) > updated) waiting = `rollout: ${num(s.replicas) - updated} old replicas pending termination`
  else if (available < updated) waiting = `${available} of ${updated} replicas available` // the tail of a rollout, or a pod being replaced: no "rollout" here
  return byReplicas(desired, ready, counters, waiting)
}

export function statefulSetStatus(o: KubeObject, ctx: StatusContext = {}): DerivedStatus {
  const s = status(o)
  const desired = num(spec(o).replicas, 1)
  const ready = num(s.readyReplicas)
  const updated = num(s.updatedReplicas)
  const counters = { replicas: desired, readyReplicas: ready, currentReplicas: num(s.currentReplicas), updatedReplicas: updated }
  if (notObserved(o)) return result('pending', OBSERVING, `${ready}/${desired}`, counters)
  const pods = ctx.pods ?? []
  const verdict = podVerdict(desired, ready, counters, ctx, pods.length ? splitStatefulSet(o, pods) : null)
  if (verdict) return verdict
  const partition = num(spec(o).updateStrategy?.rollingUpdate?.partition)
  const rolling = spec(o).updateStrategy?.type !== 'OnDelete' && s.updateRevision && s.currentRevision !== s.updateRevision && updated < desired - partition
  return byReplicas(desired, ready, counters, rolling ? `rollout: ${updated} of ${desired - partition} replicas updated` : null)
}

export function daemonSetStatus(o: KubeObject, ctx: StatusContext = {}): DerivedStatus {
  const s = status(o)
  const desired = num(s.desiredNumberScheduled)
  const ready = num(s.numberReady)
  const updated = num(s.updatedNumberScheduled)
  const counters = { desiredNumberScheduled: desired, currentNumberScheduled: num(s.currentNumberScheduled), numberReady: ready, numberAvailable: num(s.numberAvailable), updatedNumberScheduled: updated }
  if (notObserved(o) || s.desiredNumberScheduled === undefined) return result('pending', OBSERVING, `${ready}/${desired}`, counters)
  const pods = ctx.pods ?? []
  const verdict = podVerdict(desired, ready, counters, ctx, pods.length ? splitByTemplate(spec(o).template, pods, 'controller-revision-hash') : null)
  if (verdict) return verdict
  const rolling = spec(o).updateStrategy?.type !== 'OnDelete' && updated < desired
  return byReplicas(desired, ready, counters, rolling ? `rollout: ${updated} of ${desired} nodes updated` : null)
}

export function replicaSetStatus(o: KubeObject, ctx: StatusContext = {}): DerivedStatus {
  const s = status(o)
  const desired = num(spec(o).replicas, 1)
  const ready = num(s.readyReplicas)
  const counters = { replicas: desired, readyReplicas: ready, availableReplicas: num(s.availableReplicas) }
  const failure = condition(o, 'ReplicaFailure')
  if (failure?.status === 'True') return result('failed', describeCondition(failure), `${ready}/${desired}`, counters)
  if (notObserved(o)) return result('pending', OBSERVING, `${ready}/${desired}`, counters)
  // A ReplicaSet has no rollout: a template change only shapes the pods it makes from then on.
  return podVerdict(desired, ready, counters, ctx, null) ?? byReplicas(desired, ready, counters, null)
}
