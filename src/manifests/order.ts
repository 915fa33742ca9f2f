// Apply order: what others refer to goes first. Namespaces, identities, configuration and storage before
// the workloads that use them; services before the ingresses routing to them; autoscalers and policies
// after their targets; custom resources (plugins) last, once everything they might reference exists.
export const APPLY_ORDER = [
  ['Namespace'],
  ['ServiceAccount'],
  ['ConfigMap', 'Secret'],
  ['PersistentVolumeClaim'],
  ['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Pod', 'Job', 'CronJob'],
  ['Service'],
  ['Ingress'],
  ['HorizontalPodAutoscaler'],
  ['NetworkPolicy', 'PodDisruptionBudget'],
] as const

const RANK = new Map<string, number>(APPLY_ORDER.flatMap((kinds, rank) => kinds.map((k) => [k, rank] as const)))
/** Rank of plugin objects (custom resources), whatever their kind. */
export const CUSTOM_RESOURCE_RANK = APPLY_ORDER.length

export function builtInRank(kind: string): number {
  return RANK.get(kind) ?? CUSTOM_RESOURCE_RANK
}
