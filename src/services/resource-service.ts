// Tracked resources: what runs applied, kept in step with the cluster. Runs record what they applied
// (recordApplied) and what they pruned (markDeleted); a sync lists the cluster for objects carrying our
// managed-by label and one of the caller's workflow ids, and reconciles the records with what it finds.
// Reading a cluster needs viewer access on it; the records themselves are the owner's alone.
import type { KubeConfig } from '@kubernetes/client-node'
import { AppError, NotFound, UpstreamError } from '../errors.ts'
import type { EventBus } from '../events/bus.ts'
import { deriveStatus, groupOf, isBuiltInKind, type DerivedStatus } from '../kube/status/index.ts'
import { matchesSelector, podSelectorOf, selectorText } from '../kube/status/selector.ts'
import { podReadyCount, podRestarts } from '../kube/status/pods.ts'
import { ReadForbidden, resourceReader, type ResourceReader } from '../kube/resource-reader.ts'
import { MANAGED_BY, MANAGED_BY_LABEL, NODE_ID_ANNOTATION, WORKFLOW_ID_ANNOTATION } from '../manifests/metadata.ts'
import type { KubeObject } from '../manifests/types.ts'
import type { Page, PageRequest } from '../repositories/pagination.ts'
import type { ObservedResource, ObserveCounts, ResourceFilter, ResourceRepository, TrackedResource, UserFields } from '../repositories/resources.ts'
import { toResource } from '../repositories/resources.ts'
import { containerNames } from './pod-records.ts'

/** The fields of src/kube/deploy.ts's AppliedObject this service reads (structural, so either side can evolve). */
export interface AppliedLike {
  node_id: string; api_version: string; kind: string; name: string; namespace: string | null
  action: 'created' | 'configured' | 'unchanged' | 'failed' | 'skipped'
  uid: string | null; labels: Record<string, string>; live?: KubeObject
}

export interface ClusterRef { id: string; name: string }

export interface ResourceServiceDeps {
  resources: ResourceRepository
  bus: EventBus
  /** ClusterService.kubeConfigFor: 404 when the caller does not reach it, 403 below `need`, 409 unreadable credentials. */
  kubeConfigFor: (userId: string, ref: string, need: 'viewer') => Promise<{ kc: KubeConfig; cluster: ClusterRef }>
  /** Every cluster the user reaches (owned or shared), for a sync without a cluster. */
  reachableClusters: (userId: string) => Promise<ClusterRef[]>
  /** Ids of the user's workflows: a sync adopts only objects annotated with one of them. */
  workflowIdsOf: (userId: string) => Promise<Set<string>>
  timeoutMs: number
}

export interface PodSummary {
  /** The Pod's own tracked-resource id; null while the watch has not recorded it. */
  id: string | null
  name: string; namespace: string; phase: string; ready: string; restarts: number; node_name: string | null
  containers: Array<{ name: string; image: string; ready: boolean; restarts: number; state: 'waiting' | 'running' | 'terminated' | 'unknown'; reason: string | null }>
  created_at: string | null
}

/** What a sync lists on every cluster (the node types' kinds, plus Namespace). Custom kinds join from the records. */
export const WATCHED_KINDS: ReadonlyArray<{ apiVersion: string; kind: string }> = [
  { apiVersion: 'v1', kind: 'Namespace' },
  { apiVersion: 'v1', kind: 'ServiceAccount' },
  { apiVersion: 'v1', kind: 'ConfigMap' },
  { apiVersion: 'v1', kind: 'Secret' },
  { apiVersion: 'v1', kind: 'PersistentVolumeClaim' },
  { apiVersion: 'apps/v1', kind: 'Deployment' },
  { apiVersion: 'apps/v1', kind: 'StatefulSet' },
  { apiVersion: 'apps/v1', kind: 'DaemonSet' },
  { apiVersion: 'apps/v1', kind: 'ReplicaSet' },
  { apiVersion: 'v1', kind: 'Pod' },
  { apiVersion: 'batch/v1', kind: 'Job' },
  { apiVersion: 'batch/v1', kind: 'CronJob' },
  { apiVersion: 'v1', kind: 'Service' },
  { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress' },
  { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler' },
  { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy' },
  { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget' },
]

/** Kinds whose pods GET /resources/:id/pods lists (through the object's selector; a Pod is its own). */
export const KINDS_WITH_PODS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job', 'Pod', 'Service'])
const WORKLOAD_KINDS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job'])
/** ApplySet parents (bookkeeping of the apply engine) carry this label; they are not the user's resources. */
const APPLYSET_PARENT_LABEL = 'applyset.kubernetes.io/id'

const keyOf = (k: { namespace: string | null; kind: string; name: string }) => JSON.stringify([k.namespace, k.kind, k.name])

function observed(o: KubeObject, derived: DerivedStatus, fields: { workflow_id: string; node_id: string; cluster: string; parent_id?: string | null }): ObservedResource {
  const meta = o.metadata as KubeObject['metadata'] & { uid?: string }
  return {
    namespace: meta.namespace ?? null, kind: o.kind, name: meta.name, api_version: o.apiVersion, uid: meta.uid ?? null, labels: meta.labels ?? {},
    status: derived.status, status_message: derived.message, ready: derived.ready, counters: derived.counters, ...fields,
    ...(o.kind === 'Pod' && { containers: containerNames(o) }),
  }
}

function podSummary(pod: KubeObject, id: string | null): PodSummary {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const p = pod as any
  const specs: Array<{ name: string; image?: string }> = Array.isArray(p.spec?.containers) ? p.spec.containers : []
  const statuses: Array<Record<string, any>> = Array.isArray(p.status?.containerStatuses) ? p.status.containerStatuses : [] // eslint-disable-line @typescript-eslint/no-explicit-any
  return {
    id, name: pod.metadata.name, namespace: pod.metadata.namespace ?? '', phase: p.status?.phase ?? 'Unknown', ready: podReadyCount(pod), restarts: podRestarts(pod),
    node_name: p.spec?.nodeName ?? null,
    containers: specs.map((c) => {
      const s = statuses.find((x) => x?.name === c.name)
      const state = s?.state?.running ? 'running' : s?.state?.waiting ? 'waiting' : s?.state?.terminated ? 'terminated' : 'unknown'
      return {
        name: c.name, image: c.image ?? '', ready: s?.ready === true, restarts: typeof s?.restartCount === 'number' ? s.restartCount : 0, state,
        reason: s?.state?.waiting?.reason ?? s?.state?.terminated?.reason ?? null,
      } as const
    }),
    created_at: typeof pod.metadata.creationTimestamp === 'string' ? new Date(pod.metadata.creationTimestamp).toISOString() : null,
  }
}

export class ResourceService {
  /** Syncs under way, by user and cluster: a second request joins the first instead of listing again. */
  private readonly syncing = new Map<string, Promise<ObserveCounts>>()

  constructor(private readonly deps: ResourceServiceDeps) {}

  private changed(ownerId: string, counts: { created: number; updated: number; deleted: number }): void {
    if (counts.created + counts.updated + counts.deleted > 0) this.deps.bus.emit('resources.changed', { owner_id: ownerId })
  }

  // For runs

  /** Records what a run applied; failed and skipped objects are not in the cluster because of it. */
  async recordApplied(ownerId: string, run: { workflow_id: string; cluster_id: string; cluster: string }, objects: AppliedLike[]): Promise<void> {
    const applied = objects.filter((o) => o.action !== 'failed' && o.action !== 'skipped')
    if (!applied.length) return
    const fields = (o: AppliedLike) => ({ workflow_id: run.workflow_id, node_id: o.node_id, cluster: run.cluster })
    const records = applied.map((o): ObservedResource => {
      if (o.live) return { ...observed(o.live, deriveStatus(o.live), fields(o)), uid: o.uid ?? (o.live.metadata as { uid?: string }).uid ?? null }
      return {
        namespace: o.namespace, kind: o.kind, name: o.name, api_version: o.api_version, uid: o.uid, labels: o.labels,
        status: 'pending', status_message: `${o.action}; its status is not known yet`, ready: null, counters: {}, ...fields(o),
      }
    })
    const unchanged = new Set(applied.filter((o) => o.action === 'unchanged').map(keyOf))
    const keepWatchedStatus = (k: { namespace: string | null; kind: string; name: string }) => unchanged.has(keyOf(k))
    this.changed(ownerId, await this.deps.resources.observe(ownerId, run.cluster_id, records, { keepWatchedStatus }))
  }

  async markDeleted(ownerId: string, clusterId: string, objects: Array<{ kind: string; name: string; namespace: string | null }>): Promise<void> {
    const n = await this.deps.resources.markDeleted(ownerId, clusterId, objects.map(({ kind, name, namespace }) => ({ kind, name, namespace })))
    this.changed(ownerId, { created: 0, updated: n, deleted: 0 })
  }

  namespacesFor(ownerId: string, workflowId: string, clusterId: string): Promise<string[]> {
    return this.deps.resources.namespacesFor(ownerId, workflowId, clusterId)
  }

  findForNode(ownerId: string, workflowId: string, nodeId: string): Promise<TrackedResource[]> {
    return this.deps.resources.findForNode(ownerId, workflowId, nodeId)
  }

  // Endpoints

  list(ownerId: string, req: PageRequest, filter: ResourceFilter = {}): Promise<Page<TrackedResource>> {
    return this.deps.resources.list(ownerId, req, filter)
  }

  async get(ownerId: string, id: string): Promise<TrackedResource> {
    const doc = await this.deps.resources.get(ownerId, id)
    if (!doc) throw new NotFound('resource')
    return toResource(doc)
  }

  async patch(ownerId: string, id: string, fields: UserFields): Promise<TrackedResource> {
    const doc = await this.deps.resources.updateUserFields(ownerId, id, fields)
    if (!doc) throw new NotFound('resource')
    return toResource(doc)
  }

  /**
   * Reconciles the records with one cluster, or with every cluster the caller reaches. Each cluster is read
   * in full before anything is written, so an unreachable one (502) leaves its records as they were.
   */
  async sync(userId: string, clusterRef?: string): Promise<ObserveCounts> {
    if (clusterRef) return this.syncCluster(userId, clusterRef)
    const clusters = await this.deps.reachableClusters(userId)
    const outcomes = await Promise.allSettled(clusters.map((c) => this.syncCluster(userId, c.id)))
    const total: ObserveCounts = { created: 0, updated: 0, deleted: 0 }
    const failures: string[] = []
    let firstError: AppError | null = null
    outcomes.forEach((o, i) => {
      if (o.status === 'fulfilled') { total.created += o.value.created; total.updated += o.value.updated; total.deleted += o.value.deleted; return }
      const err = o.reason instanceof AppError ? o.reason : new UpstreamError('the cluster did not answer as expected')
      firstError ??= err
      failures.push(`cluster "${clusters[i].name}": ${err.message}`)
    })
    if (firstError) {
      const synced = clusters.length - failures.length
      const rest = synced ? `; the other ${synced} cluster${synced === 1 ? ' was' : 's were'} synced` : ''
      // One failure keeps its own status (409 credentials, 502 unreachable); several are the clusters' fault.
      throw new AppError(failures.length === 1 ? (firstError as AppError).statusCode : 502, `${failures.join('; ')}${rest}`)
    }
    return total
  }

  private async syncCluster(userId: string, ref: string): Promise<ObserveCounts> {
    const { kc, cluster } = await this.deps.kubeConfigFor(userId, ref, 'viewer')
    const key = `${userId}\n${cluster.id}`
    const running = this.syncing.get(key)
    if (running) return running
    // Not tied to the request: a client that goes away does not stop a sync half-way.
    const work = this.reconcile(userId, kc, cluster).finally(() => this.syncing.delete(key))
    this.syncing.set(key, work)
    return work
  }

  private async reconcile(userId: string, kc: KubeConfig, cluster: ClusterRef): Promise<ObserveCounts> {
    const [workflowIds, tracked] = await Promise.all([this.deps.workflowIdsOf(userId), this.deps.resources.forCluster(userId, cluster.id)])
    const kinds = [...WATCHED_KINDS]
    for (const doc of tracked) {
      if (!isBuiltInKind(doc.api_version, doc.kind) && !kinds.some((k) => k.apiVersion === doc.api_version && k.kind === doc.kind)) kinds.push({ apiVersion: doc.api_version, kind: doc.kind })
    }
    const reader = await resourceReader(kc, this.deps.timeoutMs)
    const selector = `${MANAGED_BY_LABEL}=${MANAGED_BY}`
    const namespaces = [...new Set(tracked.map((d) => d.namespace).filter((n): n is string => n !== null))]
    const listings = await Promise.all(kinds.map(async (k) => [`${groupOf(k.apiVersion)}/${k.kind}`, await this.listKind(reader, k, selector, namespaces)] as const))
    const coverage = new Map(listings.map(([key, l]) => [key, l.covers]))
    const listed = listings.flatMap(([, l]) => l.objects)
    const trackedKeys = new Set(tracked.map(keyOf))
    const ours = listed.filter((o) => {
      if (o.metadata.labels?.[APPLYSET_PARENT_LABEL] !== undefined) return false
      const workflowId = o.metadata.annotations?.[WORKFLOW_ID_ANNOTATION]
      // Objects already tracked stay tracked even if their workflow has since been deleted.
      return !!workflowId && (workflowIds.has(workflowId) || trackedKeys.has(keyOf({ namespace: o.metadata.namespace ?? null, kind: o.kind, name: o.metadata.name })))
    })
    const pods = await this.podsOfWorkloads(reader, ours)
    const records = ours.map((o) => observed(o, deriveStatus(o, { pods: pods.get(o) }), {
      workflow_id: o.metadata.annotations![WORKFLOW_ID_ANNOTATION], node_id: o.metadata.annotations?.[NODE_ID_ANNOTATION] ?? '', cluster: cluster.name,
    }))
    // A workload's pods are the watchers' records (they carry no workflow annotation, so the listing does not
    // adopt them): here they are only marked deleted when the listing no longer has them.
    const listedKeys = new Set(listed.map((o) => keyOf({ namespace: o.metadata.namespace ?? null, kind: o.kind, name: o.metadata.name })))
    const counts = await this.deps.resources.observe(userId, cluster.id, records, {
      missingAreDeleted: (doc) => (coverage.get(`${groupOf(doc.api_version)}/${doc.kind}`)?.(doc.namespace) ?? false) && !(doc.parent_id && listedKeys.has(keyOf(doc))),
    })
    this.changed(userId, counts)
    return counts
  }

  /**
   * One kind across all namespaces. Credentials confined to some namespaces (a service account's) may not
   * list cluster-wide: the kind is then read in each namespace the records know, and only those count as
   * covered (a record elsewhere is not marked deleted for not being seen). Namespaces themselves are then
   * left as they are; a namespace that refuses too fails the sync.
   */
  private async listKind(reader: ResourceReader, k: { apiVersion: string; kind: string }, selector: string, namespaces: string[]): Promise<{ objects: KubeObject[]; covers: (namespace: string | null) => boolean }> {
    try {
      return { objects: await reader.list(k.apiVersion, k.kind, selector), covers: () => true }
    } catch (err) {
      if (!(err instanceof ReadForbidden)) throw err
      if (k.kind === 'Namespace' && k.apiVersion === 'v1') return { objects: [], covers: () => false }
      const lists = await Promise.all(namespaces.map((ns) => reader.list(k.apiVersion, k.kind, selector, ns)))
      return { objects: lists.flat(), covers: (ns) => ns !== null && namespaces.includes(ns) }
    }
  }

  /** The pods each workload selects, read with one list per namespace (so crash loops show in its status). */
  private async podsOfWorkloads(reader: ResourceReader, objects: KubeObject[]): Promise<Map<KubeObject, KubeObject[]>> {
    const workloads = objects.filter((o) => WORKLOAD_KINDS.has(o.kind) && o.metadata.namespace)
    const namespaces = [...new Set(workloads.map((o) => o.metadata.namespace!))]
    const byNamespace = new Map(await Promise.all(namespaces.map(async (ns) => [ns, await reader.list('v1', 'Pod', undefined, ns)] as const)))
    const out = new Map<KubeObject, KubeObject[]>()
    for (const w of workloads) {
      const sel = podSelectorOf(w.kind, w.spec as Record<string, unknown>)
      out.set(w, sel ? (byNamespace.get(w.metadata.namespace!) ?? []).filter((p) => matchesSelector(p.metadata.labels, sel)) : [])
    }
    return out
  }

  /** The pods of a workload (or a Service) through its selector; a Pod answers itself. */
  async pods(userId: string, id: string): Promise<{ pods: PodSummary[] }> {
    const doc = await this.deps.resources.get(userId, id)
    if (!doc) throw new NotFound('resource')
    if (!KINDS_WITH_PODS.has(doc.kind)) throw new AppError(404, `a ${doc.kind} has no pods; pods are listed for ${[...KINDS_WITH_PODS].join(', ')}`)
    const { kc } = await this.deps.kubeConfigFor(userId, doc.cluster_id, 'viewer')
    const { pods } = await livePods(await resourceReader(kc, this.deps.timeoutMs), doc)
    const ids = doc.kind === 'Pod' ? new Map([[doc.name, doc._id]])
      : doc.namespace ? await this.deps.resources.podIds(userId, doc.cluster_id, doc.namespace, pods.map((p) => p.metadata.name)) : new Map<string, string>()
    return { pods: pods.map((p) => podSummary(p, ids.get(p.metadata.name) ?? null)).sort((a, b) => a.name.localeCompare(b.name)) }
  }
}

/**
 * The object a tracked resource names, as it is now, and its pods: the Pod itself, or those its selector
 * picks. 404 when the object is gone from the cluster.
 */
export async function livePods(reader: ResourceReader, doc: { api_version: string; kind: string; name: string; namespace: string | null }): Promise<{ live: KubeObject; pods: KubeObject[] }> {
  const live = await reader.get(doc.api_version, doc.kind, doc.namespace, doc.name)
  if (!live) throw new AppError(404, `${doc.kind} "${doc.name}" is no longer in the cluster; POST /v1/api/resources/sync records that`)
  if (doc.kind === 'Pod') return { live, pods: [live] }
  const sel = podSelectorOf(doc.kind, live.spec as Record<string, unknown>)
  if (!sel) return { live, pods: [] }
  const pods = (await reader.list('v1', 'Pod', selectorText(sel), doc.namespace ?? undefined)).filter((p) => matchesSelector(p.metadata.labels, sel))
  return { live, pods }
}
