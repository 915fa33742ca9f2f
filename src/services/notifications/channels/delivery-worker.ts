// The delivery queue's worker, one per replica. It takes due records from the database (an atomic claim,
// see notification-deliveries.ts), so the same code is right for one process or many: a record is worked
// by one replica at a time, one that died holding it is taken again when its claim expires, and a restart
// finds its pending records where it left them.
//
// It wakes when told (a delivery was queued here), at the next retry it scheduled itself, and every
// pollMs (records another replica queued or left behind). At most `concurrency` attempts at once, so one
// slow receiver does not hold up the others.
import type { Claimed, NotificationDeliveryRepository } from '../../../repositories/notification-deliveries.ts'

export interface DeliveryWorkerDeps {
  deliveries: NotificationDeliveryRepository
  /** Works one claimed record; `signal` aborts it at shutdown. Resolves when the outcome is recorded. */
  attempt(claimed: Claimed, signal: AbortSignal): Promise<void>
  claimMs: number
  pollMs: number
  concurrency: number
  log: { error(obj: object, msg: string): void }
  now: () => number
}

export class DeliveryWorker {
  private readonly inflight = new Set<Promise<void>>()
  private readonly stopping = new AbortController()
  private poll: NodeJS.Timeout | undefined
  private wake: { timer: NodeJS.Timeout; at: number } | undefined
  private draining: Promise<void> | undefined
  private again = false
  private running = false

  constructor(private readonly deps: DeliveryWorkerDeps) {}

  start(): void {
    if (this.running || this.stopping.signal.aborted) return
    this.running = true
    this.poll = setInterval(() => this.poke(), this.deps.pollMs)
    this.poll.unref()
    this.poke()
  }

  /** Looks for due records now (coalesced: a drain under way looks once more when it ends). */
  poke(): void {
    if (!this.running) return
    if (this.draining) { this.again = true; return }
    this.draining = this.drain().finally(() => { this.draining = undefined })
  }

  /** Wakes at `at` (a retry this replica scheduled), unless an earlier wake is set. */
  wakeAt(at: number): void {
    if (!this.running) return
    if (this.wake && this.wake.at <= at) return
    if (this.wake) clearTimeout(this.wake.timer)
    const timer = setTimeout(() => {
      this.wake = undefined
      // A timer may fire a little before the clock the claim compares with says `at` (timers and Date.now
      // are different clocks): the record would not be due yet, nothing would wake us again until the next
      // poll, so the rest of the wait is waited again.
      if (this.deps.now() < at) this.wakeAt(at)
      else this.poke()
    }, Math.max(0, at - this.deps.now()))
    timer.unref()
    this.wake = { timer, at }
  }

  /** Stops claiming; attempts under way are aborted and give their records back (due at once, for any replica). */
  async close(): Promise<void> {
    this.running = false
    clearInterval(this.poll)
    if (this.wake) clearTimeout(this.wake.timer)
    this.stopping.abort()
    await this.draining
    while (this.inflight.size) await Promise.all(this.inflight)
  }

  /** Resolves when no attempt is under way on this replica (tests). */
  async idle(): Promise<void> {
    while (this.draining || this.inflight.size) await Promise.all([this.draining, ...this.inflight])
  }

  private async drain(): Promise<void> {
    try {
      do {
        this.again = false
        while (this.running && this.inflight.size < this.deps.concurrency) {
          const claimed = await this.deps.deliveries.claim(this.deps.claimMs, new Date(this.deps.now()))
          if (!claimed) break
          this.run(claimed)
        }
      } while (this.again && this.running)
    } catch (err) {
      // The next poll tries again; the database's text is not logged (it can name hosts).
      this.deps.log.error({ err: { name: (err as Error)?.name } }, 'webhook deliveries could not be claimed')
    }
  }

  /** Works a claimed record in the background (a test delivery's request runs its first attempt itself). */
  run(claimed: Claimed): Promise<void> {
    const p = this.deps.attempt(claimed, this.stopping.signal)
      .catch((err: unknown) => { this.deps.log.error({ err: { name: (err as Error)?.name }, delivery_id: claimed.doc._id }, 'a webhook delivery attempt failed to run') })
      .finally(() => {
        this.inflight.delete(p)
        // A place freed up: records left waiting for one are taken now.
        this.poke()
      })
    this.inflight.add(p)
    return p
  }
}
