// Audit entries leave the request path at once: `record` puts one in a bounded in-memory queue and a
// writer sends the queue to the database in batches (one insertMany at a time), a moment after the first
// entry of a batch arrives or as soon as a batch is full. Nothing a request waits on touches the database,
// and nothing the database does (slow, down, refusing) reaches a request:
// - a batch that fails because the database is away (stopped, restarting, unreachable: API.md §14) goes
//   back to the head of the queue and is written when the database answers again: tried again after a
//   backoff (RETRY_BASE_MS doubling to RETRY_MAX_MS), or at once when `databaseBack` says it is back.
//   Entries a retried batch had already stored (the connection broke after the insert) are not doubled:
//   their ids are taken, and a duplicate-key answer for them counts as written;
// - any other failed batch is logged by its size and the error's class, never its entries, and is not
//   retried (a database that refuses the write would otherwise hold every later entry behind it);
// - a full queue (a long outage) drops its oldest entry, with one warning per WARN_INTERVAL_MS saying how
//   many went, and a last one with the rest of the count when writing works again;
// - `close` writes what is queued within a bound (the shutdown grace), then gives up on the rest.
import type { AuditDoc } from '../../../repositories/audit.ts'
import { newId } from '../../../repositories/ids.ts'
import { isDuplicateKey } from '../../../repositories/errors.ts'
import { isDatabaseUnavailable } from '../../../errors.ts'

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
  /**
   * Subscribes to "the database answers again" (the driver's successful heartbeat), so entries held during
   * an outage go out as soon as it ends rather than at the next backoff; returns the unsubscribe.
   */
  databaseBack?: (listener: () => void) => () => void
  /** First wait before a batch the database was away for is tried again; it doubles up to `retryMaxMs`. */
  retryBaseMs?: number
  retryMaxMs?: number
}

const RETRY_BASE_MS = 500
const RETRY_MAX_MS = 30_000

/** An entry waiting in the queue; `actor_hint` (an email typed into a sign-in form) is never written. */
interface Queued { doc: AuditDoc; actorHint?: string }

export class AuditRecorder {
  private queue: Queued[] = []
  private timer: NodeJS.Timeout | null = null
  private writing: Promise<void> | null = null
  private dropped = 0
  private lastWarnAt = -Infinity
  private closed = false
  /** After close gave up: nothing is queued or retried any more. */
  private ended = false
  /** Set while the database is away: the batch waits for it (a timer or `databaseBack`). */
  private retry: { timer: NodeJS.Timeout; fire: () => void; attempted: Promise<void> } | null = null
  private retryDelayMs = 0
  private unsubscribe: (() => void) | null = null
  private readonly maxQueued: number
  private readonly batchSize: number
  private readonly flushDelayMs: number
  private readonly warnIntervalMs: number

  constructor(private readonly writer: AuditWriter, private readonly log: AuditLog, private readonly opts: RecorderOptions = {}) {
    this.maxQueued = opts.maxQueued ?? 10_000
    this.batchSize = Math.min(opts.batchSize ?? 500, this.maxQueued)
    this.flushDelayMs = opts.flushDelayMs ?? 250
    this.warnIntervalMs = opts.warnIntervalMs ?? 60_000
    this.unsubscribe = opts.databaseBack?.(() => this.retry?.fire()) ?? null
  }

  /** Queues one entry; returns at once. `actorHint`: see RecorderOptions.resolveActor. */
  record(entry: NewAuditEntry, actorHint?: string): void {
    if (this.closed) return
    const { at, ...rest } = entry
    this.queue.push({ doc: { _id: newId(), at: at ?? new Date(), ...rest }, ...(actorHint !== undefined && { actorHint }) })
    this.keepWithinBound()
    if (this.retry) return // the database is away: the retry takes the queue with it
    if (this.queue.length >= this.batchSize) this.kick()
    else this.timer ??= setTimeout(() => this.kick(), this.flushDelayMs).unref()
  }

  /** How many entries wait to be written (for tests and the buffer bound). */
  get queued(): number { return this.queue.length }

  /** Whether entries are held because the database is away. */
  get waitingForDatabase(): boolean { return this.retry !== null }

  /**
   * Writes everything queued now, and resolves when it is written (or its write failed for a reason other
   * than the database being away: while it is away, this waits for it).
   */
  async flush(): Promise<void> {
    while (!this.ended && (this.queue.length || this.writing || this.retry)) {
      if (this.retry) { await this.retry.attempted; continue }
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
    this.ended = true
    if (this.timer) { clearTimeout(this.timer); this.timer = null }
    this.unsubscribe?.()
    if (this.retry) { clearTimeout(this.retry.timer); this.retry.fire() }
    if (done === 'timeout' && this.queue.length) this.log.warn({ lost: this.queue.length }, 'audit entries not written before shutdown')
    this.queue = []
  }

  private kick(): void {
    if (this.timer) { clearTimeout(this.timer); this.timer = null }
    if (this.ended || this.retry || this.writing || !this.queue.length) return
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
      // Every entry has its own id: a duplicate is an entry already stored (a retried batch's first try).
      if (onlyDuplicates(err)) return this.written()
      if (isDatabaseUnavailable(err) && !this.ended) return this.holdForDatabase(batch, err)
      // The entries stay out of the log: they name users, addresses and targets.
      this.log.error({ entries: batch.length, error: (err as Error)?.name ?? 'Error' }, 'audit entries could not be written')
      return
    }
    this.written()
  }

  /** A batch went out: an outage (if there was one) is over. */
  private written(): void {
    if (this.retryDelayMs === 0) return
    this.retryDelayMs = 0
    this.log.warn({ queued: this.queue.length }, 'audit entries held while the database was away are being written')
    if (this.dropped) this.reportDropped()
  }

  /** Puts the batch back at the head of the queue (the bound still holds) and waits for the database. */
  private holdForDatabase(batch: Queued[], err: unknown): void {
    if (this.retryDelayMs === 0) this.log.warn({ entries: batch.length + this.queue.length, error: (err as Error)?.name ?? 'Error' }, 'the database is away: audit entries are held until it answers')
    this.queue.unshift(...batch)
    this.keepWithinBound()
    this.retryDelayMs = Math.min(this.retryDelayMs ? this.retryDelayMs * 2 : (this.opts.retryBaseMs ?? RETRY_BASE_MS), this.opts.retryMaxMs ?? RETRY_MAX_MS)
    let fire!: () => void
    const attempted = new Promise<void>((resolve) => {
      fire = () => {
        if (!this.retry) return
        clearTimeout(this.retry.timer)
        this.retry = null
        this.kick()
        resolve()
      }
    })
    this.retry = { timer: setTimeout(() => fire(), this.retryDelayMs).unref(), fire, attempted }
  }

  private async resolved({ doc, actorHint }: Queued): Promise<AuditDoc> {
    if (actorHint === undefined || doc.actor_id !== null || !this.opts.resolveActor) return doc
    const actor = await this.opts.resolveActor(actorHint).catch(() => null)
    return actor ? { ...doc, actor_id: actor.id, actor_email: actor.email } : doc
  }

  /** The queue's bound: its oldest entries beyond `maxQueued` go, counted and warned about. */
  private keepWithinBound(): void {
    const over = this.queue.length - this.maxQueued
    if (over <= 0) return
    this.queue.splice(0, over)
    this.dropped += over
    this.warnDropped()
  }

  private warnDropped(): void {
    if (Date.now() - this.lastWarnAt < this.warnIntervalMs) return
    this.reportDropped()
  }

  private reportDropped(): void {
    this.lastWarnAt = Date.now()
    this.log.warn({ dropped: this.dropped, max_queued: this.maxQueued }, 'audit queue full: oldest entries dropped')
    this.dropped = 0
  }
}

/** A bulk insert refused only for ids already stored: a retried batch whose first try got through in part. */
function onlyDuplicates(err: unknown): boolean {
  const writeErrors = (err as { writeErrors?: unknown } | null)?.writeErrors
  const list = Array.isArray(writeErrors) ? writeErrors : writeErrors && typeof writeErrors === 'object' ? Object.values(writeErrors) : []
  return list.length > 0 ? list.every((e) => isDuplicateKey(e)) : isDuplicateKey(err)
}
