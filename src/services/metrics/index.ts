// The overview across a user's clusters (API.md §10): stored health from the health checks, one node and
// one pod list per cluster, and the user's tracked resources counted in the database. An answer is kept
// per user for METRICS_CACHE_MS, and callers arriving while one is being read share it, so a dashboard
// polling (or many tabs open) costs each cluster two requests per period at most.
import type { KubeConfig } from '@kubernetes/client-node'
import type { Static } from 'typebox'
import type { MetricsOverview } from '../../../schemas/metrics.ts'
import type { ClusterDoc } from '../../repositories/clusters.ts'
import { RESOURCE_STATUSES, type ResourceStatus } from '../../kube/status/index.ts'
import { emptyPodTotals, POD_PHASES } from '../../kube/cluster-usage.ts'
import { readCluster, type ClusterReading } from './cluster-reading.ts'

export type Overview = Static<typeof MetricsOverview>
type ClusterPart = Overview['items'][number]

export interface MetricsDeps {
  /** The clusters the user owns or that are shared with them. */
  clustersOf: (userId: string) => Promise<ClusterDoc[]>
  /** A connection to one of them with the user's (viewer) access. */
  connect: (userId: string, clusterId: string) => Promise<KubeConfig>
  /** The user's own tracked resources, counted per cluster and status. */
  resourceCounts: (userId: string) => Promise<Array<{ cluster_id: string; status: ResourceStatus; count: number }>>
  /** Per cluster, connecting included: past it the cluster is reported unreachable. */
  timeoutMs: number
  cacheMs: number
  /** Clusters read at once for one user. */
  concurrency: number
  /** Called with a listener for clusters added or removed: answers kept from before are dropped. */
  onClustersChanged?: (listener: () => void) => void
  now?: () => number
}

/** Users whose answers are kept at most; past it, expired answers are dropped first, then the oldest. */
const MAX_CACHED_USERS = 10_000

interface Entry { answer: Promise<Overview>; expires: number }

const round = (n: number, places: number) => Math.round(n * 10 ** places) / 10 ** places

export class MetricsService {
  private readonly cache = new Map<string, Entry>()
  private readonly now: () => number

  constructor(private readonly deps: MetricsDeps) {
    this.now = deps.now ?? Date.now
    // Rare, and a user who just added a cluster looks for it at once. Everyone's answers go, since a
    // removed cluster may have been shared with anyone; an answer being read meanwhile is not kept.
    deps.onClustersChanged?.(() => this.cache.clear())
  }

  /** The user's overview, from memory while it is fresh. */
  overview(userId: string): Promise<Overview> {
    const entry = this.cache.get(userId)
    if (entry && entry.expires > this.now()) return entry.answer
    const fresh: Entry = { answer: this.compute(userId), expires: Number.POSITIVE_INFINITY }
    this.remember(userId, fresh)
    fresh.answer.then(
      () => { fresh.expires = this.now() + this.deps.cacheMs },
      // A failure (the database) is not kept: the next call tries again.
      () => { if (this.cache.get(userId) === fresh) this.cache.delete(userId) },
    )
    return fresh.answer
  }

  private remember(userId: string, entry: Entry): void {
    this.cache.delete(userId)
    if (this.cache.size >= MAX_CACHED_USERS) {
      const now = this.now()
      for (const [key, e] of this.cache) if (e.expires <= now) this.cache.delete(key)
      // Map order is insertion order: the first key is the oldest answer.
      if (this.cache.size >= MAX_CACHED_USERS) this.cache.delete(this.cache.keys().next().value!)
    }
    this.cache.set(userId, entry)
  }

  private async compute(userId: string): Promise<Overview> {
    const [clusters, counts] = await Promise.all([this.deps.clustersOf(userId), this.deps.resourceCounts(userId)])
    const readings = await this.readAll(userId, clusters)
    const overview: Overview = {
      clusters: { total: clusters.length, by_status: { connected: 0, error: 0, unknown: 0 }, reachable: 0, unreachable: 0 },
      nodes: { total: 0, ready: 0 },
      pods: { total: 0, by_phase: { ...emptyPodTotals().by_phase }, partial: false },
      cpu: { capacity_cores: 0, allocatable_cores: 0, requests_cores: 0 },
      memory: { capacity_bytes: 0, allocatable_bytes: 0, requests_bytes: 0 },
      resources: { total: 0, by_status: Object.fromEntries(RESOURCE_STATUSES.map((s) => [s, 0])) as Overview['resources']['by_status'] },
      items: [],
      collected_at: new Date(this.now()).toISOString(),
      cache_ms: this.deps.cacheMs,
    }
    const liveByCluster = new Map<string, number>()
    for (const { cluster_id, status, count } of counts) {
      if (!(status in overview.resources.by_status)) continue
      overview.resources.by_status[status] += count
      if (status === 'deleted') continue
      overview.resources.total += count
      liveByCluster.set(cluster_id, (liveByCluster.get(cluster_id) ?? 0) + count)
    }
    clusters.forEach((doc, i) => {
      overview.clusters.by_status[doc.status]++
      const part = this.part(doc, readings[i], liveByCluster.get(doc._id) ?? 0)
      overview.items.push(part)
      if (!part.reachable) { overview.clusters.unreachable++; return }
      overview.clusters.reachable++
      overview.nodes.total += part.nodes!.total
      overview.nodes.ready += part.nodes!.ready
      overview.pods.total += part.pods!.total
      overview.pods.partial ||= part.pods!.partial
      for (const phase of POD_PHASES) overview.pods.by_phase[phase] += part.pods!.by_phase[phase]
      for (const k of ['capacity_cores', 'allocatable_cores', 'requests_cores'] as const) overview.cpu[k] = round(overview.cpu[k] + part.cpu![k], 3)
      for (const k of ['capacity_bytes', 'allocatable_bytes', 'requests_bytes'] as const) overview.memory[k] += part.memory![k]
    })
    return overview
  }

  private part(doc: ClusterDoc, reading: ClusterReading, resources: number): ClusterPart {
    const base = {
      id: doc._id, name: doc.name, status: doc.status, status_message: doc.status_message,
      last_checked_at: doc.last_checked_at?.toISOString() ?? null, resources: { total: resources },
    }
    if (!reading.reachable) return { ...base, reachable: false, message: reading.message, nodes: null, pods: null, cpu: null, memory: null }
    const { nodes, pods } = reading
    return {
      ...base, reachable: true,
      message: pods.partial ? 'read from the node list and the first page of the pod list (more pods than one list returns)' : 'read from the node and pod lists',
      nodes: { total: nodes.total, ready: nodes.ready },
      pods: { total: pods.total, by_phase: pods.by_phase, partial: pods.partial },
      cpu: { capacity_cores: round(nodes.capacity.cpu_cores, 3), allocatable_cores: round(nodes.allocatable.cpu_cores, 3), requests_cores: round(pods.requests.cpu_cores, 3) },
      memory: { capacity_bytes: nodes.capacity.memory_bytes, allocatable_bytes: nodes.allocatable.memory_bytes, requests_bytes: pods.requests.memory_bytes },
    }
  }

  /**
   * Every cluster read, a few at a time, each bounded by the cluster timeout; results in the clusters' order.
   * The whole call is bounded too (twice the cluster timeout): a cluster still queued then, behind slow
   * ones, is reported unread rather than making the caller wait for every cluster in turn.
   */
  private async readAll(userId: string, clusters: ClusterDoc[]): Promise<ClusterReading[]> {
    const results: ClusterReading[] = new Array(clusters.length)
    const deadline = this.now() + 2 * this.deps.timeoutMs
    let next = 0
    const worker = async () => {
      while (next < clusters.length) {
        const i = next++
        const left = Math.min(this.deps.timeoutMs, deadline - this.now())
        results[i] = left > 0
          ? await readCluster(() => this.deps.connect(userId, clusters[i]._id), left)
          : { reachable: false, message: 'not read: the overview had no time left for it (too many slow clusters before it)' }
      }
    }
    await Promise.all(Array.from({ length: Math.min(this.deps.concurrency, clusters.length) }, worker))
    return results
  }
}
