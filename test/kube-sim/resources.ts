import type { JsonObject } from './util.ts'

/** One served resource: what discovery advertises and what the REST layer needs to route and store it. */
export interface ResourceType {
  group: string
  version: string
  kind: string
  listKind: string
  plural: string
  singular: string
  namespaced: boolean
  shortNames: string[]
  categories: string[]
  verbs: string[]
  /** Subresource name → the kind it returns (status returns the parent kind). */
  subresources: Record<string, { kind: string; group?: string; version?: string; verbs: string[] }>
  /** metadata.generation is tracked (bumped on spec change). */
  generation: boolean
  /** Objects are computed, not stored (metrics, reviews). */
  virtual?: boolean
  /** Set for types that come from a CustomResourceDefinition. */
  crd?: { name: string; printerColumns: JsonObject[]; scale?: JsonObject }
}

export const allVerbs = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']

export function storageKey(rt: { group: string; plural: string }): string {
  return `${rt.group}/${rt.plural}`
}

export function apiVersionOf(rt: { group: string; version: string }): string {
  return rt.group ? `${rt.group}/${rt.version}` : rt.version
}

interface Spec {
  group: string; version: string; kind: string; plural: string; namespaced: boolean
  short?: string[]; categories?: string[]; verbs?: string[]; sub?: string[]; generation?: boolean; virtual?: boolean
}

const statusVerbs = ['get', 'patch', 'update']

function make(s: Spec): ResourceType {
  const subresources: ResourceType['subresources'] = {}
  for (const sub of s.sub ?? []) {
    if (sub === 'status') subresources.status = { kind: s.kind, verbs: statusVerbs }
    else if (sub === 'scale') subresources.scale = { kind: 'Scale', group: 'autoscaling', version: 'v1', verbs: statusVerbs }
    else if (sub === 'log') subresources.log = { kind: 'Pod', verbs: ['get'] }
    else if (sub === 'exec') subresources.exec = { kind: 'PodExecOptions', verbs: ['create', 'get'] }
    else if (sub === 'token') subresources.token = { kind: 'TokenRequest', group: 'authentication.k8s.io', version: 'v1', verbs: ['create'] }
    else if (sub === 'finalize') subresources.finalize = { kind: s.kind, verbs: ['update'] }
  }
  return {
    group: s.group, version: s.version, kind: s.kind, listKind: `${s.kind}List`, plural: s.plural, singular: s.kind.toLowerCase(),
    namespaced: s.namespaced, shortNames: s.short ?? [], categories: s.categories ?? [], verbs: s.verbs ?? allVerbs,
    subresources, generation: s.generation ?? false, virtual: s.virtual,
  }
}

const all = ['all']

/** The built-in API surface, in the order discovery lists it (core first: kubectl resolves ambiguous names by this order). */
export const builtinResources: ResourceType[] = [
  make({ group: '', version: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false, short: ['ns'], sub: ['status', 'finalize'], verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'] }),
  make({ group: '', version: 'v1', kind: 'Node', plural: 'nodes', namespaced: false, short: ['no'], sub: ['status'] }),
  make({ group: '', version: 'v1', kind: 'Pod', plural: 'pods', namespaced: true, short: ['po'], categories: all, sub: ['status', 'log', 'exec'] }),
  make({ group: '', version: 'v1', kind: 'Service', plural: 'services', namespaced: true, short: ['svc'], categories: all, sub: ['status'], verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'] }),
  make({ group: '', version: 'v1', kind: 'Endpoints', plural: 'endpoints', namespaced: true, short: ['ep'] }),
  make({ group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true, short: ['cm'] }),
  make({ group: '', version: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true }),
  make({ group: '', version: 'v1', kind: 'ServiceAccount', plural: 'serviceaccounts', namespaced: true, short: ['sa'], sub: ['token'] }),
  make({ group: '', version: 'v1', kind: 'PersistentVolumeClaim', plural: 'persistentvolumeclaims', namespaced: true, short: ['pvc'], sub: ['status'] }),
  make({ group: '', version: 'v1', kind: 'PersistentVolume', plural: 'persistentvolumes', namespaced: false, short: ['pv'], sub: ['status'] }),
  make({ group: '', version: 'v1', kind: 'Event', plural: 'events', namespaced: true, short: ['ev'] }),
  make({ group: 'apps', version: 'v1', kind: 'Deployment', plural: 'deployments', namespaced: true, short: ['deploy'], categories: all, sub: ['status', 'scale'], generation: true }),
  make({ group: 'apps', version: 'v1', kind: 'ReplicaSet', plural: 'replicasets', namespaced: true, short: ['rs'], categories: all, sub: ['status', 'scale'], generation: true }),
  make({ group: 'apps', version: 'v1', kind: 'StatefulSet', plural: 'statefulsets', namespaced: true, short: ['sts'], categories: all, sub: ['status', 'scale'], generation: true }),
  make({ group: 'apps', version: 'v1', kind: 'DaemonSet', plural: 'daemonsets', namespaced: true, short: ['ds'], categories: all, sub: ['status'], generation: true }),
  make({ group: 'batch', version: 'v1', kind: 'Job', plural: 'jobs', namespaced: true, categories: all, sub: ['status'], generation: true }),
  make({ group: 'batch', version: 'v1', kind: 'CronJob', plural: 'cronjobs', namespaced: true, short: ['cj'], categories: all, sub: ['status'], generation: true }),
  make({ group: 'networking.k8s.io', version: 'v1', kind: 'Ingress', plural: 'ingresses', namespaced: true, short: ['ing'], sub: ['status'], generation: true }),
  make({ group: 'networking.k8s.io', version: 'v1', kind: 'NetworkPolicy', plural: 'networkpolicies', namespaced: true, short: ['netpol'], generation: true }),
  make({ group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler', plural: 'horizontalpodautoscalers', namespaced: true, short: ['hpa'], categories: all, sub: ['status'], generation: true }),
  make({ group: 'policy', version: 'v1', kind: 'PodDisruptionBudget', plural: 'poddisruptionbudgets', namespaced: true, short: ['pdb'], sub: ['status'], generation: true }),
  // RBAC objects are stored and validated (kubectl apply of manifests that grant access), not enforced:
  // every authenticated user may still do everything here.
  make({ group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'Role', plural: 'roles', namespaced: true }),
  make({ group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'RoleBinding', plural: 'rolebindings', namespaced: true }),
  make({ group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'ClusterRole', plural: 'clusterroles', namespaced: false }),
  make({ group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'ClusterRoleBinding', plural: 'clusterrolebindings', namespaced: false }),
  make({ group: 'apiextensions.k8s.io', version: 'v1', kind: 'CustomResourceDefinition', plural: 'customresourcedefinitions', namespaced: false, short: ['crd', 'crds'], categories: ['api-extensions'], sub: ['status'], generation: true }),
  make({ group: 'authentication.k8s.io', version: 'v1', kind: 'SelfSubjectReview', plural: 'selfsubjectreviews', namespaced: false, verbs: ['create'], virtual: true }),
  make({ group: 'authorization.k8s.io', version: 'v1', kind: 'SelfSubjectAccessReview', plural: 'selfsubjectaccessreviews', namespaced: false, verbs: ['create'], virtual: true }),
  make({ group: 'metrics.k8s.io', version: 'v1beta1', kind: 'NodeMetrics', plural: 'nodes', namespaced: false, verbs: ['get', 'list'], virtual: true }),
  make({ group: 'metrics.k8s.io', version: 'v1beta1', kind: 'PodMetrics', plural: 'pods', namespaced: true, verbs: ['get', 'list'], virtual: true }),
]
