// Audit entries leave the request path at once: `record` puts one in a bounded in-memory queue and a
// writer sends the queue to the database in batches (one insertMany at a time), a moment after the first
// entry of a batch arrives or as soon as a batch is full. Nothing a request waits on touches the database,
// and nothing the database does (slow, down, refusing) reaches a request:
// - a failed batch is logged by its size and the error's class, never its entries, and is not retried
//   (a database that refuses writes would otherwise hold every later entry behind it);
// - a full queue drops its oldest entry, with one warning per WARN_INTERVAL_MS saying how many went;
// - `close` writes what is queued within a bound (the shutdown grace), then gives up on the rest.
import type { AuditDoc } from '../../../repositories/audit.ts'
import { newId } from '../../../repositories/ids.ts'

export type NewAuditEntry = Omit<AuditDoc, '_id' | 'at'> & { at?: Date }

export interface AuditWriter { insertMany(docs: AuditDoc[]): Promise<void> }

export interface AuditLog {
  warn(obj: object, msg: string): void
  error(obj: object, msg: string): void
}

export interface RecorderOptions {
  /** Entries held at most; beyond it the oldest go. */
  maxQueued?: number
  /** Entries per insertMany. */
  batchSize?: number
  /** How long the first entry of a batch waits for others. */
  flushDelayMs?: number
  /** Fewest milliseconds between two "queue full" warnings. */
  warnIntervalMs?: number
  /**
   * Fills in an entry's actor before it is written (a sign-in by email: the account, if there is one).
   * Runs on the writer's time, never the request's; a failure leaves the actor unknown.
   */
  resolveActor?: (email: string) => Promise<{ id: string; email: string } | null>
}

/** An entry waiting in the queue; `actor_hint` (an email typed into a sign-in form) is never written. */
interface Queued { doc: AuditDoc; actorHint?: string }

export class AuditRecorder {
  private queue: Queued[] = []
  private timer: NodeJS.Timeout | null = null
  private writing: Promise<void> | null = null
  private dropped = 0
  private lastWarnAt = -Infinity
  private closed = false
  private readonly maxQueued: number
  private readonly batchSize: number
  private readonly flushDelayMs: number
  private readonly warnIntervalMs: number

  constructor(private readonly writer: AuditWriter, private readonly log: AuditLog, private readonly opts: RecorderOptions = {}) {
    this.maxQueued = opts.maxQueued ?? 10_000
    this.batchSize = Math.min(opts.batchSize ?? 500, this.maxQueued)
    this.flushDelayMs = opts.flushDelayMs ?? 250
    this.warnIntervalMs = opts.warnIntervalMs ?? 60_000
  }

  /** Queues one entry; returns at once. `actorHint`: see RecorderOptions.resolveActor. */
  record(entry: NewAuditEntry, actorHint?: string): void {
    if (this.closed) return
    const { at, ...rest } = entry
    if (this.queue.length >= this.maxQueued) {
      this.queue.shift()
      this.dropped++
      this.warnDropped()
    }
    this.queue.push({ doc: { _id: newId(), at: at ?? new Date(), ...rest }, ...(actorHint !== undefined && { actorHint }) })
    if (this.queue.length >= this.batchSize) this.kick()
    else this.timer ??= setTimeout(() => this.kick(), this.flushDelayMs).unref()
  }

  /** How many entries wait to be written (for tests and the buffer bound). */
  get queued(): number { return this.queue.length }

  /** Writes everything queued now, and resolves when it is written (or its write failed). */
  async flush(): Promise<void> {
    while (this.queue.length || this.writing) {
      this.kick()
      await this.writing
    }
  }

  /** Stops taking entries and writes the queued ones within `withinMs`; what is left after that is lost. */
  async close(withinMs: number): Promise<void> {
    this.closed = true
    let bound: NodeJS.Timeout | undefined
    const timedOut = new Promise<'timeout'>((resolve) => { bound = setTimeout(() => resolve('timeout'), withinMs) })
    const done = await Promise.race([this.flush().then(() => 'done' as const), timedOut])
    clearTimeout(bound)
    if (this.timer) { clearTimeout(this.timer); this.timer = null }
    if (done === 'timeout' && this.queue.length) this.log.warn({ lost: this.queue.length }, 'audit entries not written before shutdown')
    this.queue = []
  }

  private kick(): void {
    if (this.timer) { clearTimeout(this.timer); this.timer = null }
    if (this.writing || !this.queue.length) return
    const batch = this.queue.splice(0, this.batchSize)
    this.writing = this.write(batch).finally(() => {
      this.writing = null
      // What arrived meanwhile goes in the next batch, without waiting for another record().
      if (this.queue.length) this.kick()
    })
  }

  private async write(batch: Queued[]): Promise<void> {
    try {
      const docs = await Promise.all(batch.map((q) => this.resolved(q)))
      await this.writer.insertMany(docs)
    } catch (err) {
      // The entries stay out of the log: they name users, addresses and targets.
      this.log.error({ entries: batch.length, error: (err as Error)?.name ?? 'Error' }, 'audit entries could not be written')
    }
  }

  private async resolved({ doc, actorHint }: Queued): Promise<AuditDoc> {
    if (actorHint === undefined || doc.actor_id !== null || !this.opts.resolveActor) return doc
    const actor = await this.opts.resolveActor(actorHint).catch(() => null)
    return actor ? { ...doc, actor_id: actor.id, actor_email: actor.email } : doc
  }

  private warnDropped(): void {
    const now = Date.now()
    if (now - this.lastWarnAt < this.warnIntervalMs) return
    this.lastWarnAt = now
    this.log.warn({ dropped: this.dropped, max_queued: this.maxQueued }, 'audit queue full: oldest entries dropped')
    this.dropped = 0
  }
}
