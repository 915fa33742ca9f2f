// The `dashboard_stats` collection: one pre-computed document per user, so the dashboard never counts
// collections on a request. Also the counting itself, which only the statistics keeper calls.
import type { Collection, Db, Document, Filter } from 'mongodb'
import { indexSetups } from './indexes.ts'

export interface Metric { value: number; change: number; trend: 'up' | 'down' | 'neutral' }
export const METRIC_NAMES = ['total_workflows', 'published_workflows', 'total_runs', 'success_rate', 'clusters', 'healthy_clusters', 'tracked_resources', 'builds'] as const
export type MetricName = typeof METRIC_NAMES[number]
export type DashboardStats = Record<MetricName, Metric> & { computed_at: string }

interface StatsDoc { _id: string; metrics: Record<MetricName, Metric>; computed_at: Date }

indexSetups.push(async (db) => {
  await db.collection('dashboard_stats').createIndex({ computed_at: 1 })
})

/** Raw figures now and as of the cut-off (7 days ago), before they become metrics. */
export interface Snapshot { now: Record<MetricName, number>; before: Record<MetricName, number> }

export class StatsRepository {
  private readonly c: Collection<StatsDoc>
  constructor(private readonly db: Db) {
    this.c = db.collection<StatsDoc>('dashboard_stats')
  }

  async get(ownerId: string): Promise<DashboardStats | null> {
    const doc = await this.c.findOne({ _id: ownerId })
    return doc && { ...doc.metrics, computed_at: doc.computed_at.toISOString() }
  }

  async put(ownerId: string, metrics: Record<MetricName, Metric>, at: Date): Promise<DashboardStats> {
    await this.c.updateOne({ _id: ownerId }, { $set: { metrics, computed_at: at } }, { upsert: true })
    return { ...metrics, computed_at: at.toISOString() }
  }

  /** Owners that have anything to count, for the periodic repair. */
  async owners(): Promise<string[]> {
    const [withWorkflows, withStats] = await Promise.all([
      this.db.collection('workflows').distinct('owner_id'),
      this.c.distinct('_id'),
    ])
    return [...new Set([...withWorkflows, ...withStats].map(String))]
  }

  async snapshot(ownerId: string, cutoff: Date): Promise<Snapshot> {
    const count = (collection: string, filter: Filter<Document>, dateField = 'created_at') => Promise.all([
      this.db.collection(collection).countDocuments({ owner_id: ownerId, ...filter }),
      this.db.collection(collection).countDocuments({ owner_id: ownerId, ...filter, [dateField]: { $lt: cutoff } }),
    ])
    const [workflows, published, runs, completed, failed, clusters, healthy, resources, builds] = await Promise.all([
      count('workflows', {}),
      count('workflows', { status: 'published' }),
      // A dry run changes nothing, so it is not a run the dashboard counts.
      count('workflow_runs', { dry_run: { $ne: true } }, 'started_at'),
      count('workflow_runs', { dry_run: { $ne: true }, status: 'completed' }, 'started_at'),
      count('workflow_runs', { dry_run: { $ne: true }, status: 'failed' }, 'started_at'),
      count('clusters', {}),
      count('clusters', { status: 'connected' }),
      // Resources gone from their cluster stay listed (status deleted) but are no longer tracked ones; a
      // workload's pods are counted with it, not on their own (lists leave them out too).
      count('resources', { status: { $ne: 'deleted' }, parent_id: null }),
      count('builds', {}),
    ])
    const rate = (ok: number, bad: number) => (ok + bad === 0 ? 0 : Math.round((ok / (ok + bad)) * 1000) / 10)
    const pick = (i: 0 | 1): Record<MetricName, number> => ({
      total_workflows: workflows[i], published_workflows: published[i], total_runs: runs[i], success_rate: rate(completed[i], failed[i]),
      clusters: clusters[i], healthy_clusters: healthy[i], tracked_resources: resources[i], builds: builds[i],
    })
    return { now: pick(0), before: pick(1) }
  }
}
