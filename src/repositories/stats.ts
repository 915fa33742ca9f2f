// The `dashboard_stats` collection: one pre-computed document per user, so the dashboard never counts
// collections on a request. Also the counting itself, which only the statistics keeper calls.
import type { Collection, Db, Document, Filter } from 'mongodb'
import { indexSetups } from './indexes.ts'

export interface Metric { value: number; change: number; trend: 'up' | 'down' | 'neutral' }
export const METRIC_NAMES = ['total_workflows', 'published_workflows', 'total_runs', 'success_rate', 'clusters', 'healthy_clusters', 'tracked_resources', 'builds'] as const
export type MetricName = typeof METRIC_NAMES[number]
export type DashboardStats = Record<MetricName, Metric> & { computed_at: string }

/** One day's raw figures (the last computed that UTC day), what a later day's change is measured against. */
export interface DayFigures { day: string; figures: Record<MetricName, number> }

interface StatsDoc { _id: string; metrics: Record<MetricName, Metric>; computed_at: Date; history?: DayFigures[] }

/** Days of figures kept per user: the 7-day comparison with room for a month's. */
export const HISTORY_DAYS = 35
const DAY_MS = 24 * 3600 * 1000
export const dayOf = (at: Date) => at.toISOString().slice(0, 10)

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
    const doc = await this.c.findOne({ _id: ownerId }, { projection: { history: 0 } })
    return doc && { ...doc.metrics, computed_at: doc.computed_at.toISOString() }
  }

  /** The figures kept per day, oldest first. */
  async history(ownerId: string): Promise<DayFigures[]> {
    const doc = await this.c.findOne({ _id: ownerId }, { projection: { history: 1 } })
    return doc?.history ?? []
  }

  /**
   * Stores the metrics, and `figures` as the day's entry of the history (replacing an earlier one of the same
   * day), dropping days older than HISTORY_DAYS. `history` is what the caller read before computing: a
   * process computes one user's statistics one at a time (StatsService); two replicas racing on the same
   * user cost at most that day's entry, which the next computation writes again.
   */
  async put(ownerId: string, metrics: Record<MetricName, Metric>, at: Date, figures: Record<MetricName, number>, history: DayFigures[]): Promise<DashboardStats> {
    const day = dayOf(at)
    const oldest = dayOf(new Date(at.getTime() - HISTORY_DAYS * DAY_MS))
    const kept = [...history.filter((h) => h.day >= oldest && h.day < day), { day, figures }]
    await this.c.updateOne({ _id: ownerId }, { $set: { metrics, computed_at: at, history: kept } }, { upsert: true })
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
