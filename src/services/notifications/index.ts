// Notifications (API.md §10): bus events become per-user records and `notification` events on the user's
// stream `notifications:<user id>`.
//
//   run.finished     → run_completed / run_failed        (dry runs change nothing: no notification)
//   build.changed    → build_completed / build_failed    (terminal statuses only; a cancel is the user's own act)
//   import.finished  → import_completed / import_failed
//   cluster.status   → cluster_status                    (not a new cluster's first successful check)
//   resource.status  → resource_failed                   (at most once per resource per throttle window)
//   drift.detected   → drift_detected                    (published once per node becoming drifted, or its fields changing)
//
// The throttle is per process: a crash-looping workload flips between statuses every back-off, and one
// notification per window is what a user can act on. Two replicas watching the same resource cannot
// happen (watch ownership is per cluster), so it needs no shared state.
import type { BusEvents, EventBus } from '../../events/bus.ts'
import type { StreamHub } from '../../events/stream-hub.ts'
import { NotFound } from '../../errors.ts'
import type { PageRequest, Page } from '../../repositories/pagination.ts'
import type { NewNotification, Notification, NotificationFilter, NotificationRepository } from '../../repositories/notifications.ts'

export const notificationsKey = (userId: string): string => `notifications:${userId}`

export const RESOURCE_FAILED_THROTTLE_MS = 10 * 60_000

/** The title of a cluster_status notification saying a cluster answers again (news of a recovery, not of a fault). */
export const clusterBackTitle = (name: string): string => `Cluster ${name} is reachable again`
export const CLUSTER_BACK_TITLE = /^Cluster .+ is reachable again$/

/** Drifted field paths named in a notification's message; the drift report has them all. */
const DRIFT_FIELDS_SHOWN = 5
/** Throttle entries kept before expired ones are swept. */
const THROTTLE_SWEEP_AT = 10_000

export interface RunSummary { dry_run: boolean; error: string | null; workflow_name: string | null }

export interface NotificationServiceDeps {
  notifications: NotificationRepository
  bus: EventBus
  /** The stream hub (late-bound: it is created after the services). */
  hub: () => StreamHub | undefined
  /** The finished run, to tell dry runs apart and name the workflow; null when it is gone. */
  run(ownerId: string, workflowId: string, runId: string): Promise<RunSummary | null>
  /** The workflow's name, to name it in a drift notification; null when it is gone (absent: the id is shown). */
  workflowName?(ownerId: string, workflowId: string): Promise<string | null>
  log: { error(obj: object, msg: string): void }
  now?: () => number
  throttleMs?: number
}

export class NotificationService {
  private readonly offs: Array<() => void> = []
  private readonly pending = new Set<Promise<void>>()
  /** resource id → when its last resource_failed was produced. */
  private readonly lastFailed = new Map<string, number>()
  private readonly now: () => number
  private readonly throttleMs: number

  constructor(private readonly deps: NotificationServiceDeps) {
    this.now = deps.now ?? Date.now
    this.throttleMs = deps.throttleMs ?? RESOURCE_FAILED_THROTTLE_MS
    const { bus } = deps
    this.offs.push(
      bus.on('run.finished', (e) => this.track(this.runFinished(e))),
      bus.on('build.changed', (e) => this.track(this.buildChanged(e))),
      bus.on('import.finished', (e) => this.track(this.importFinished(e))),
      bus.on('cluster.status', (e) => this.track(this.clusterStatus(e))),
      bus.on('resource.status', (e) => this.track(this.resourceStatus(e))),
      bus.on('drift.detected', (e) => this.track(this.driftDetected(e))),
    )
  }

  // Reads and marks (routes)

  async list(ownerId: string, page: PageRequest, opts: { unread?: boolean } & NotificationFilter = {}): Promise<Page<Notification> & { unread_count: number }> {
    const [list, unread_count] = await Promise.all([this.deps.notifications.list(ownerId, page, opts), this.deps.notifications.unreadCount(ownerId)])
    return { ...list, unread_count }
  }

  unreadCount(ownerId: string): Promise<number> {
    return this.deps.notifications.unreadCount(ownerId)
  }

  count(ownerId: string, filter: NotificationFilter): Promise<number> {
    return this.deps.notifications.count(ownerId, filter)
  }

  /** Only among those `filter` selects, when given (another one is a 404 as a missing one). */
  async markRead(ownerId: string, id: string, filter?: NotificationFilter): Promise<Notification> {
    const n = await this.deps.notifications.markRead(ownerId, id, filter)
    if (!n) throw new NotFound('notification')
    await this.publishCount(ownerId)
    return n
  }

  async markAllRead(ownerId: string): Promise<{ updated: number; unread_count: number }> {
    const updated = await this.deps.notifications.markAllRead(ownerId)
    const unread_count = await this.publishCount(ownerId)
    return { updated, unread_count }
  }

  /** Stops listening and waits for the notifications being written. */
  async close(): Promise<void> {
    for (const off of this.offs.splice(0)) off()
    await this.idle()
  }

  /** Resolves when every event received so far has been handled (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.pending.size) await Promise.all(this.pending)
  }

  // Bus → notifications

  private track(work: Promise<void>): void {
    const p = work.catch((err: unknown) => {
      this.deps.log.error({ err: { message: String((err as Error)?.message ?? err) } }, 'a notification could not be recorded')
    }).finally(() => { this.pending.delete(p) })
    this.pending.add(p)
  }

  private async runFinished(e: BusEvents['run.finished']): Promise<void> {
    if (e.status !== 'completed' && e.status !== 'failed') return
    const run = await this.deps.run(e.owner_id, e.workflow_id, e.run_id)
    if (!run || run.dry_run) return
    const what = run.workflow_name ? `Run of ${run.workflow_name}` : `Run ${e.run_id}`
    const link = `/v1/api/workflows/${e.workflow_id}/runs/${e.run_id}`
    await this.notify(e.owner_id, e.status === 'completed'
      ? { type: 'run_completed', title: `${what} completed`, message: 'every object was applied and is ready', link }
      : { type: 'run_failed', title: `${what} failed`, message: run.error ?? 'the run failed', link })
  }

  private async buildChanged(e: BusEvents['build.changed']): Promise<void> {
    if (e.status !== 'completed' && e.status !== 'failed') return
    const link = `/v1/api/builds/${e.build_id}`
    await this.notify(e.owner_id, e.status === 'completed'
      ? { type: 'build_completed', title: 'Build completed', message: `build ${e.build_id} pushed its image`, link }
      : { type: 'build_failed', title: 'Build failed', message: `build ${e.build_id} failed; its logs say why`, link })
  }

  private async importFinished(e: BusEvents['import.finished']): Promise<void> {
    const link = `/v1/api/import/${e.import_id}`
    await this.notify(e.owner_id, e.status === 'completed'
      ? { type: 'import_completed', title: 'Import analysed', message: `import ${e.import_id} is ready to apply`, link }
      : { type: 'import_failed', title: 'Import failed', message: e.error ?? 'the import failed', link })
  }

  private async clusterStatus(e: BusEvents['cluster.status']): Promise<void> {
    // A cluster's first check succeeding is what adding it meant, not news.
    if (e.from === 'unknown' && e.to === 'connected') return
    const title = e.to === 'connected' ? clusterBackTitle(e.name)
      : e.to === 'error' ? `Cluster ${e.name} is unreachable` : `Cluster ${e.name} is ${e.to}`
    await this.notify(e.owner_id, { type: 'cluster_status', title, message: e.message, link: `/v1/api/clusters/${encodeURIComponent(e.name)}` })
  }

  private async resourceStatus(e: BusEvents['resource.status']): Promise<void> {
    if (e.new_status !== 'failed' || e.old_status === 'failed') return
    const now = this.now()
    const last = this.lastFailed.get(e.resource_id)
    if (last !== undefined && now - last < this.throttleMs) return
    // Taken before the write, so events arriving meanwhile see it.
    this.lastFailed.set(e.resource_id, now)
    if (this.lastFailed.size > THROTTLE_SWEEP_AT) {
      for (const [id, at] of this.lastFailed) if (now - at >= this.throttleMs) this.lastFailed.delete(id)
    }
    const where = e.namespace ? ` in ${e.namespace}` : ''
    await this.notify(e.owner_id, { type: 'resource_failed', title: `${e.kind} ${e.name}${where} failed`, message: e.message, link: `/v1/api/resources/${e.resource_id}` })
  }

  private async driftDetected(e: BusEvents['drift.detected']): Promise<void> {
    const name = await this.deps.workflowName?.(e.owner_id, e.workflow_id)
    const what = name ? `workflow ${name}` : `workflow ${e.workflow_id}`
    const shown = e.fields.slice(0, DRIFT_FIELDS_SHOWN).join(', ')
    const more = e.fields.length > DRIFT_FIELDS_SHOWN ? ` and ${e.fields.length - DRIFT_FIELDS_SHOWN} more` : ''
    await this.notify(e.owner_id, {
      type: 'drift_detected', title: `Node ${e.node_id} of ${what} drifted`,
      message: e.fields.length ? `changed in the cluster: ${shown}${more}` : 'its live objects no longer match what was applied',
      link: `/v1/api/workflows/${e.workflow_id}/drift`,
    })
  }

  private async notify(ownerId: string, input: NewNotification): Promise<void> {
    const n = await this.deps.notifications.create(ownerId, input, new Date(this.now()))
    this.deps.hub()?.publish(notificationsKey(ownerId), 'notification', n)
    this.deps.bus.emit('notification.created', { owner_id: ownerId, notification_id: n.id, type: n.type })
  }

  private async publishCount(ownerId: string): Promise<number> {
    const unread_count = await this.deps.notifications.unreadCount(ownerId)
    this.deps.hub()?.publish(notificationsKey(ownerId), 'metadata', { unread_count })
    return unread_count
  }
}
