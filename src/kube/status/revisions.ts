// Which of a workload's pods run its current pod template and which an older one, read from the pods alone
// (no ReplicaSet or ControllerRevision watch): a rollout whose new pods cannot start is failed even while
// the old pods still serve, and only the new pods' failure may say so.
//
// StatefulSet: exact. The controller labels every pod `controller-revision-hash` with the name of the
// revision it was made from, and reports the one it rolls to as `status.updateRevision`.
//
// Deployment (label `pod-template-hash`) and DaemonSet (label `controller-revision-hash`): pods are grouped
// by their revision label (one group per ReplicaSet or DaemonSet revision), and the current group is:
//   1. the one group whose pods carry the workload's pod template: every field the template sets has the
//      same value in the pod (labels, annotations, containers, images, env, volumes...). A pod is a copy of
//      its template, so this holds for the current revision; fields admission adds (a sidecar, a token
//      volume, defaults) do not break it, and an older revision differs where its template differed, which
//      covers image changes, `kubectl rollout restart` (an annotation), a new env var or ConfigMap name;
//   2. otherwise (several match: the change was to something the pods do not show; or none: admission
//      rewrote a field, as a VPA does to resources) the group holding the most recently created pod, since
//      during a rollout only the new ReplicaSet is scaled up, old ones only down. Rule 1 goes first because
//      this one is wrong for a moment after a rollback (the old ReplicaSet is current again before it has
//      made a pod) and when an old ReplicaSet replaces an evicted pod;
//   3. when the newest pods of two groups share their creation second (timestamps have second precision),
//      the pods cannot tell, and no rollout verdict is given (the counts and the plain pod rule still are).
// The Deployment's pod-template-hash is not on the Deployment and is a Go hash of the template, so it
// cannot be recomputed here.
import { status, type KubeObject, type Loose } from './types.ts'

export interface RevisionSplit { current: KubeObject[]; old: KubeObject[] }

const labelOf = (p: KubeObject, label: string): string | undefined => {
  const v = (p.metadata.labels as Record<string, unknown> | undefined)?.[label]
  return typeof v === 'string' ? v : undefined
}

/** StatefulSet pods by `controller-revision-hash` against `status.updateRevision`; null when no update is under way. */
export function splitStatefulSet(o: KubeObject, pods: KubeObject[]): RevisionSplit | null {
  const s = status(o)
  const update = typeof s.updateRevision === 'string' ? s.updateRevision : null
  if (!update || s.currentRevision === update) return null
  const labelled = pods.filter((p) => labelOf(p, 'controller-revision-hash') !== undefined)
  return { current: labelled.filter((p) => labelOf(p, 'controller-revision-hash') === update), old: labelled.filter((p) => labelOf(p, 'controller-revision-hash') !== update) }
}

/** Deployment or DaemonSet pods split by revision label and pod template (rules in the head comment); null when one revision or unclear. */
export function splitByTemplate(template: Loose | undefined, pods: KubeObject[], label: string): RevisionSplit | null {
  const groups = new Map<string, KubeObject[]>()
  for (const p of pods) {
    const rev = labelOf(p, label)
    if (rev === undefined) continue
    const g = groups.get(rev)
    if (g) g.push(p)
    else groups.set(rev, [p])
  }
  if (groups.size < 2) return null
  const all = [...groups.values()]
  const matching = template && typeof template === 'object' ? all.filter((g) => g.some((p) => carriesTemplate(p, template))) : []
  const current = matching.length === 1 ? matching[0] : newestGroup(matching.length ? matching : all)
  if (!current) return null
  return { current, old: all.filter((g) => g !== current).flat() }
}

function carriesTemplate(pod: KubeObject, template: Loose): boolean {
  const meta = (template.metadata ?? {}) as Loose
  const podMeta = pod.metadata as Loose
  return contains(podMeta.labels ?? {}, meta.labels ?? {}) && contains(podMeta.annotations ?? {}, meta.annotations ?? {}) && contains(pod.spec ?? {}, template.spec ?? {})
}

/**
 * Whether `have` holds everything `want` sets. Objects: key by key. Lists of objects (containers, env,
 * volumes): each wanted item is held by some item, in any order, since admission appends. Lists of plain
 * values (command, args): equal, in order, as order changes their meaning.
 */
export function contains(have: unknown, want: unknown): boolean {
  if (want === undefined || want === null) return true
  if (Array.isArray(want)) {
    if (want.length === 0) return true
    if (!Array.isArray(have)) return false
    if (want.every((w) => w === null || typeof w !== 'object')) return want.length === have.length && want.every((w, i) => w === have[i])
    return want.every((w) => have.some((h) => contains(h, w)))
  }
  if (typeof want === 'object') {
    if (!have || typeof have !== 'object' || Array.isArray(have)) return false
    return Object.entries(want as Loose).every(([k, v]) => contains((have as Loose)[k], v))
  }
  return want === have
}

/** The group with the most recently created pod; null on a tie between groups (second-precision timestamps). */
function newestGroup(groups: KubeObject[][]): KubeObject[] | null {
  let best: KubeObject[] | null = null
  let bestAt = ''
  let tie = false
  for (const g of groups) {
    const at = g.map((p) => String(p.metadata.creationTimestamp ?? '')).sort().at(-1) ?? ''
    if (at > bestAt) { best = g; bestAt = at; tie = false } else if (at === bestAt) tie = true
  }
  return tie || !bestAt ? null : best
}
