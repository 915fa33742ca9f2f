// Keeps each user's dashboard statistics up to date: recomputed when their workflows or runs change
// (announced on the bus) and, to repair any drift, for everyone on a schedule. Reading them never counts.
import cron, { type ScheduledTask } from 'node-cron'
import type { EventBus } from '../events/bus.ts'
import type { ScheduleClaims } from '../replicas/schedule-claims.ts'
import { METRIC_NAMES, dayOf, type DashboardStats, type Metric, type MetricName, type StatsRepository } from '../repositories/stats.ts'

const WEEK_MS = 7 * 24 * 3600 * 1000
/** The repair's name: node-cron's task name and its claim's id. */
const JOB = 'dashboard-stats'

/**
 * A metric and its change in percent against its value 7 days earlier. Growth from nothing has no
 * percentage: it is `change: 0, trend: neutral`, which dashboards read as "no previous data" (the KubeOrch
 * UI prints exactly that for neutral), never a made-up +100 % on every card of a new account.
 */
export function metric(value: number, before: number): Metric {
  const change = before === 0 ? 0 : Math.round(((value - before) / before) * 1000) / 10
  return { value, change, trend: change > 0 ? 'up' : change < 0 ? 'down' : 'neutral' }
}

export class StatsService {
  private readonly running = new Map<string, Promise<DashboardStats>>()
  private readonly dirty = new Set<string>()
  private task: ScheduledTask | undefined
  private readonly unsubscribe: Array<() => void> = []

  constructor(private readonly repo: StatsRepository, private readonly bus: EventBus, private readonly now: () => Date = () => new Date()) {}

  /**
   * Listens for changes and schedules the periodic repair. With `claims` (replicas sharing the database) the
   * repair of each slot runs on the one replica that claims it; without, it runs here at every slot.
   */
  start(schedule: string, claims?: ScheduleClaims): void {
    const touch = ({ owner_id }: { owner_id: string }) => { void this.refresh(owner_id).catch(() => undefined) }
    for (const event of ['workflow.created', 'workflow.deleted', 'workflow.status_changed', 'run.finished', 'resources.changed', 'cluster.changed', 'cluster.status', 'build.changed'] as const) {
      this.unsubscribe.push(this.bus.on(event, touch))
    }
    if (!claims) {
      this.task = cron.schedule(schedule, () => { void this.refreshAll().catch(() => undefined) }, { noOverlap: true, unref: true, name: JOB })
      return
    }
    // The claim is held until the repair ends (the callback returns its promise), or for most of the gap to
    // the next slot if the holder dies first: a crashed holder never costs more than the one slot it took.
    let leaseMs = 1000
    const task = cron.schedule(schedule, () => this.refreshAll().catch(() => undefined), {
      noOverlap: true, unref: true, name: JOB, distributed: true, runCoordinator: claims.coordinatorFor(JOB, () => leaseMs),
    })
    const [next, after] = task.getNextRuns(2)
    if (next && after) leaseMs = Math.max(500, Math.floor((after.getTime() - next.getTime()) * 0.9))
    this.task = task
  }

  async stop(): Promise<void> {
    for (const off of this.unsubscribe.splice(0)) off()
    await this.task?.destroy()
    await Promise.allSettled([...this.running.values()])
  }

  /** The stored statistics; computed once for a user who has none yet. */
  async get(ownerId: string): Promise<DashboardStats> {
    return (await this.repo.get(ownerId)) ?? this.refresh(ownerId)
  }

  /**
   * Recomputes one user's statistics. Calls that arrive while one is running are folded into a single
   * follow-up run, so a burst of changes costs at most two computations and the last one sees them all.
   */
  refresh(ownerId: string): Promise<DashboardStats> {
    const current = this.running.get(ownerId)
    if (current) {
      this.dirty.add(ownerId)
      return current.then(() => this.running.get(ownerId) ?? this.refresh(ownerId))
    }
    const run = this.compute(ownerId).finally(() => {
      this.running.delete(ownerId)
      if (this.dirty.delete(ownerId)) void this.refresh(ownerId).catch(() => undefined)
    })
    this.running.set(ownerId, run)
    return run
  }

  async refreshAll(): Promise<number> {
    const owners = await this.repo.owners()
    for (const owner of owners) await this.refresh(owner)
    return owners.length
  }

  /**
   * The figures now against those of 7 days earlier: the day's figures recorded then when there are any
   * (deletions, publications and cluster health included), else as the records tell it (what exists now
   * and was created before then, in its current state), for the first week of a user's history.
   */
  private async compute(ownerId: string): Promise<DashboardStats> {
    const at = this.now()
    const cutoff = new Date(at.getTime() - WEEK_MS)
    const [{ now, before: rebuilt }, history] = await Promise.all([this.repo.snapshot(ownerId, cutoff), this.repo.history(ownerId)])
    const recorded = history.filter((h) => h.day <= dayOf(cutoff)).at(-1)?.figures
    const before = recorded ? { ...rebuilt, ...recorded } : rebuilt
    const metrics = Object.fromEntries(METRIC_NAMES.map((name) => [name, metric(now[name], before[name])])) as Record<MetricName, Metric>
    const stats = await this.repo.put(ownerId, metrics, at, now, history)
    this.bus.emit('stats.updated', { owner_id: ownerId })
    return stats
  }
}
