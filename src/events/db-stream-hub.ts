// The stream hub of a replica among several (API.md §11): events go through the shared `events` collection
// (src/replicas/event-log.ts), so a client's stream shows what any replica published, with ids that mean
// the same on every replica and a Last-Event-ID that resumes anywhere.
//
// Publishing stays synchronous and never throws: events wait in a bounded outbox, and once per tick the
// batch gets consecutive ids from the counter and is inserted. Each replica tails the collection by id
// and delivers strictly in id order through the memory hub's fan-out (its bounded buffers and drop
// warnings). Ids are reserved before they are written, so an id can be missing for a moment (another
// replica's insert not yet visible): later events are held and re-read until it shows up, and skipped
// after a bounded wait (its writer crashed or gave up). `pod-logs:*` keys never leave the process: log
// lines and terminal bytes are served by the replica that holds the upstream connection.
import type { Db } from 'mongodb'
import { MemoryStreamHub, type HubLog, type StreamEvent, type StreamHub, type SubscribeOptions, type Subscription } from './stream-hub.ts'
import { RawJson } from './raw-json.ts'
import { EventLog, type EventDoc } from '../replicas/event-log.ts'

export interface DatabaseHubOptions {
  db: Db
  /** This replica's id, written on each event (the relay leaves out its own). */
  origin: string
  /** How often the tail reads new events (EVENT_POLL_MS). */
  pollMs?: number
  bufferSize?: number
  /** At most this many events replayed to a client resuming with Last-Event-ID (SSE_REPLAY_SIZE). */
  replaySize?: number
  /** Events read per tail query; a full batch is followed by the next query at once. */
  tailBatch?: number
  /** Events inserted per write. */
  publishBatch?: number
  /** Events waiting to be written at most; beyond it the oldest are dropped (database unreachable). */
  outboxSize?: number
  /** How long a missing id holds back the events after it. Default max(1 s, 10 × pollMs). */
  gapWaitMs?: number
  /** At most one warning of a kind in this period; the next one reports the count since. */
  warnIntervalMs?: number
  /** Keys kept in this process. Default: `pod-logs:*`. */
  local?: (key: string) => boolean
  log?: HubLog
}

/** A delivered event with where it came from, for listeners below the SSE level (the replica relay). */
export interface LoggedEvent extends StreamEvent { key: string; origin: string }

interface Pending { key: string; type: string; data: string; at: Date }

interface Waiting { upTo: number; deadline: number; release(known: boolean): void }

const MAX_BACKOFF_MS = 5_000

export class DatabaseStreamHub implements StreamHub {
  readonly origin: string
  private readonly events: EventLog
  /** Fan-out of the collection's events to this replica's subscribers; replays come from the collection. */
  private readonly fan: MemoryStreamHub
  private readonly local: MemoryStreamHub
  private readonly isLocal: (key: string) => boolean
  private readonly taps = new Map<string, Set<(event: LoggedEvent) => void>>()
  private readonly pollMs: number
  private readonly replaySize: number
  private readonly tailBatch: number
  private readonly publishBatch: number
  private readonly outboxSize: number
  private readonly gapWaitMs: number
  private readonly warnIntervalMs: number
  private readonly log: HubLog | undefined
  private readonly warnings = new Map<string, { last: number; count: number }>()

  private closed = false
  private started = false
  /** The last id delivered here: every event up to it was delivered or skipped. */
  private watermark = 0
  /** The last id this replica wrote. */
  private lastWritten = 0

  private outbox: Pending[] = []
  private flushScheduled = false
  private draining: Promise<void> | null = null
  /** Set by shutdown: the outbox is written until then, not after. */
  private flushDeadline = Infinity
  private wakeDrain: (() => void) | null = null

  private pollTimer: NodeJS.Timeout | null = null
  private polling = false
  private pollAgain = false
  private pollFailures = 0
  /** The first missing id that holds back what follows, and since when. */
  private gap: { id: number; since: number } | null = null
  /** Subscriptions resuming after an id this replica has not delivered yet. */
  private waiting: Waiting[] = []

  private pollWaiters: Array<() => void> = []

  /** `held`: tail reads that stopped at a missing id. */
  readonly stats = { polls: 0, held: 0, written: 0, delivered: 0, skippedIds: 0, droppedUnwritten: 0 }

  constructor(opts: DatabaseHubOptions) {
    this.origin = opts.origin
    this.events = new EventLog(opts.db)
    this.pollMs = opts.pollMs ?? 100
    this.replaySize = opts.replaySize ?? 256
    this.tailBatch = opts.tailBatch ?? 500
    this.publishBatch = opts.publishBatch ?? 500
    this.outboxSize = opts.outboxSize ?? 10_000
    this.gapWaitMs = opts.gapWaitMs ?? Math.max(1000, 10 * this.pollMs)
    this.warnIntervalMs = opts.warnIntervalMs ?? 10_000
    this.isLocal = opts.local ?? ((key) => key.startsWith('pod-logs:'))
    this.log = opts.log
    this.fan = new MemoryStreamHub({ bufferSize: opts.bufferSize, replaySize: 0, warnIntervalMs: opts.warnIntervalMs, log: opts.log })
    this.local = new MemoryStreamHub({ bufferSize: opts.bufferSize, replaySize: opts.replaySize, warnIntervalMs: opts.warnIntervalMs, log: opts.log })
  }

  /** Starts the tail at the newest event written: a new replica delivers what is published from now on. */
  async start(): Promise<void> {
    if (this.started) return
    this.watermark = await this.events.newestId()
    this.started = true
    this.schedulePoll(this.pollMs)
  }

  publish(key: string, type: string, data: unknown): void {
    if (this.closed) return
    if (this.isLocal(key)) { this.local.publish(key, type, data); return }
    let text: string
    try {
      text = data instanceof RawJson ? data.text : JSON.stringify(data ?? null) ?? 'null'
    } catch {
      this.warn('unserializable', { stream: key, type }, 'stream event not published: its data is not JSON')
      return
    }
    if (this.outbox.length >= this.outboxSize) this.dropOldest(this.outbox.length - this.outboxSize + 1)
    this.outbox.push({ key, type, data: text, at: new Date() })
    if (!this.flushScheduled && !this.draining) {
      this.flushScheduled = true
      // Everything published in this tick goes in one counter increment and one insert.
      setImmediate(() => { this.flushScheduled = false; this.drain() })
    }
  }

  subscribe(key: string, opts: SubscribeOptions = {}): Subscription {
    if (this.isLocal(key)) return this.local.subscribe(key, opts)
    const at = this.watermark
    const last = opts.lastEventId
    const given = last !== undefined && Number.isSafeInteger(last) && last >= 0
    if (!given || last === at) {
      const { sub, resume } = this.fan.subscribeHeld(key, at, opts)
      resume([])
      return sub
    }
    if (last < at) {
      // Replay (last, at] from the collection while what arrives after `at` is held, then go on live.
      const { sub, resume } = this.fan.subscribeHeld(key, last, opts)
      if (sub.closed) return sub
      this.events.replay(key, last, at, this.replaySize).then(
        (docs) => resume(docs.map((d) => toEvent(d))),
        (err: unknown) => {
          // Without its replay the stream would have a hole: end it, the client reconnects with its id.
          this.warn('replay', { stream: key, error: errorName(err) }, 'stream replay from the events collection failed')
          resume(null)
        },
      )
      return sub
    }
    // An id this replica has not delivered yet: another replica's, a moment ahead of this one. Hold until the
    // tail reaches it; an id that never shows up within the gap wait is not from this database (starts now).
    const { sub, resume } = this.fan.subscribeHeld(key, last, opts)
    if (sub.closed) return sub
    this.waiting.push({ upTo: last, deadline: Date.now() + this.gapWaitMs + this.pollMs, release: (known) => resume([], known ? last : -Infinity) })
    return sub
  }

  subscriberCount(key: string): number {
    return this.isLocal(key) ? this.local.subscriberCount(key) : this.fan.subscriberCount(key)
  }

  /** Calls `listener` for every event of `key` delivered here, from any replica (synchronously, in id order). */
  tap(key: string, listener: (event: LoggedEvent) => void): () => void {
    let set = this.taps.get(key)
    if (!set) { set = new Set(); this.taps.set(key, set) }
    set.add(listener)
    return () => { set.delete(listener) }
  }

  /** Ends every subscription and stops the tail; what is still unwritten is written by `shutdown`. */
  close(): void {
    if (this.closed) return
    this.closed = true
    if (this.pollTimer) clearTimeout(this.pollTimer)
    this.pollTimer = null
    this.taps.clear()
    for (const w of this.waiting) w.release(false)
    this.waiting = []
    for (const resolve of this.pollWaiters) resolve()
    this.pollWaiters = []
    this.fan.close()
    this.local.close()
  }

  /**
   * Up to `timeoutMs` to write the events still waiting (before the database client closes), up to the gap
   * wait more to deliver them to this replica's subscribers, then close(): what shutdown published last (a
   * run's final `complete`) reaches the event log and the streams here before they end (API.md §14).
   */
  async shutdown(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs
    this.flushDeadline = deadline
    this.wakeDrain?.()
    if (this.outbox.length && !this.draining) this.drain()
    // A write the database does not answer must not hold the shutdown past its bound.
    let timer: NodeJS.Timeout | undefined
    const bound = new Promise((resolve) => { timer = setTimeout(resolve, timeoutMs) })
    while (this.draining && Date.now() < deadline) await Promise.race([this.draining, bound])
    clearTimeout(timer)
    // An own event may wait in the tail behind an earlier id of another replica not visible yet: the tail
    // delivers or skips that id within the gap wait, which is this wait's own bound.
    const deliverBy = Date.now() + this.gapWaitMs + 2 * this.pollMs
    const delivering = new Promise((resolve) => { timer = setTimeout(resolve, this.gapWaitMs + 2 * this.pollMs) })
    while (this.started && !this.closed && this.watermark < this.lastWritten && Date.now() < deliverBy) await Promise.race([this.nextPoll(), delivering])
    clearTimeout(timer)
    this.close()
    if (this.outbox.length) {
      this.warn('unwritten', { dropped: this.outbox.length }, 'stream events not written before shutdown')
      this.outbox = []
    }
  }

  /** Settles after the next tail read has been handled (what it found delivered or held), or at close. */
  nextPoll(): Promise<void> {
    if (this.closed) return Promise.resolve()
    return new Promise((resolve) => { this.pollWaiters.push(resolve) })
  }

  /** Events waiting to be written. */
  pending(): number {
    return this.outbox.length
  }

  // Publishing: one writer at a time, a batch per round (ids reserved, then inserted).
  private drain(): void {
    if (this.draining) return
    this.draining = (async () => {
      let failures = 0
      while (this.outbox.length && Date.now() < this.flushDeadline) {
        const batch = this.outbox.splice(0, this.publishBatch)
        let first: number
        try {
          first = await this.events.reserve(batch.length)
        } catch (err) {
          // Nothing was reserved: the batch goes back in front (the outbox bound still holds) and is retried.
          this.outbox = batch.concat(this.outbox)
          if (this.outbox.length > this.outboxSize) this.dropOldest(this.outbox.length - this.outboxSize)
          this.warn('write', { error: errorName(err), waiting: this.outbox.length }, 'stream events not written yet: the database did not answer')
          await this.pause(backoff(++failures))
          continue
        }
        const docs: EventDoc[] = batch.map((p, i) => ({ _id: first + i, key: p.key, type: p.type, data: p.data, at: p.at, origin: this.origin }))
        const reservedAt = Date.now()
        for (;;) {
          try {
            await this.events.insert(docs)
            failures = 0
            this.stats.written += docs.length
            this.lastWritten = Math.max(this.lastWritten, docs[docs.length - 1]._id)
            this.delivered(docs)
            break
          } catch (err) {
            // The ids are taken: retry them (the insert is idempotent) while other replicas still wait for them.
            if (Date.now() - reservedAt + backoff(failures + 1) > this.gapWaitMs || Date.now() >= this.flushDeadline) {
              this.stats.droppedUnwritten += docs.length
              this.warn('insert', { error: errorName(err), dropped: docs.length }, 'stream events dropped: their insert kept failing')
              break
            }
            await this.pause(backoff(++failures))
          }
        }
      }
    })().finally(() => {
      this.draining = null
      if (this.outbox.length && Date.now() < this.flushDeadline) this.drain()
    })
  }

  private pause(ms: number): Promise<void> {
    const wait = Math.max(0, Math.min(ms, this.flushDeadline - Date.now()))
    return new Promise((resolve) => {
      const timer = setTimeout(() => { this.wakeDrain = null; resolve() }, wait)
      timer.unref()
      this.wakeDrain = () => { clearTimeout(timer); this.wakeDrain = null; resolve() }
    })
  }

  private dropOldest(n: number): void {
    this.outbox.splice(0, n)
    this.stats.droppedUnwritten += n
    this.warn('outbox', { dropped: n, waiting: this.outbox.length }, 'stream events dropped: too many waiting to be written (oldest first)')
  }

  /**
   * Own events just written: when everything before them was delivered already, they are next in id order
   * and go out without reading them back (the tail skips them); otherwise the tail reads at once.
   */
  private delivered(docs: EventDoc[]): void {
    if (this.closed || !this.started) return
    if (this.watermark !== docs[0]._id - 1) { this.poke(); return }
    this.gap = null
    for (const doc of docs) {
      this.watermark = doc._id
      this.dispatch(doc)
    }
    this.releaseWaiting(Date.now())
  }

  // The tail: one query at a time; own inserts ask for the next one at once.
  private poke(): void {
    if (this.closed || !this.started) return
    if (this.polling) { this.pollAgain = true; return }
    this.schedulePoll(0)
  }

  private schedulePoll(ms: number): void {
    if (this.closed) return
    if (this.pollTimer) clearTimeout(this.pollTimer)
    this.pollTimer = setTimeout(() => { this.pollTimer = null; void this.poll() }, ms)
    this.pollTimer.unref()
  }

  private async poll(): Promise<void> {
    if (this.polling || this.closed) return
    this.polling = true
    let next = this.pollMs
    try {
      this.stats.polls++
      const docs = await this.events.after(this.watermark, this.tailBatch)
      if (this.closed) return
      const held = this.take(docs, Date.now())
      // A missing id is usually an insert a moment from visible: look again sooner than the poll period.
      if (held !== null) { this.stats.held++; next = Math.min(held, Math.max(5, this.pollMs / 4)) }
      else if (docs.length === this.tailBatch) next = 0
      this.pollFailures = 0
    } catch (err) {
      if (this.closed) return
      this.warn('tail', { error: errorName(err) }, 'stream events could not be read from the database')
      next = Math.min(MAX_BACKOFF_MS, this.pollMs * 2 ** ++this.pollFailures)
    } finally {
      this.polling = false
    }
    this.releaseWaiting(Date.now())
    const waiters = this.pollWaiters
    this.pollWaiters = []
    for (const resolve of waiters) resolve()
    if (this.pollAgain) { this.pollAgain = false; next = 0 }
    this.schedulePoll(next)
  }

  /** Delivers the batch in id order; returns how long to wait for a missing id holding the rest back, else null. */
  private take(docs: EventDoc[], now: number): number | null {
    for (const doc of docs) {
      if (doc._id <= this.watermark) continue
      const expected = this.watermark + 1
      if (doc._id !== expected) {
        if (this.gap?.id !== expected) this.gap = { id: expected, since: now }
        const waited = now - this.gap.since
        if (waited < this.gapWaitMs) return this.gapWaitMs - waited
        this.stats.skippedIds += doc._id - expected
        this.warn('gap', { from: expected, to: doc._id - 1 }, 'stream event ids skipped: reserved but never written in time')
      }
      this.gap = null
      this.watermark = doc._id
      this.dispatch(doc)
    }
    return null
  }

  private dispatch(doc: EventDoc): void {
    this.stats.delivered++
    const taps = this.taps.get(doc.key)
    const subscribed = this.fan.subscriberCount(doc.key) > 0
    // Every replica reads every event; only those someone here listens to are parsed.
    if (!taps && !subscribed) return
    const event = toEvent(doc)
    if (taps) {
      const logged: LoggedEvent = { ...event, key: doc.key, origin: doc.origin }
      for (const listener of taps) {
        try { listener(logged) } catch (err) {
          this.warn('tap', { stream: doc.key, error: errorName(err) }, 'stream event listener failed')
        }
      }
    }
    if (subscribed) this.fan.deliver(doc.key, event)
  }

  private releaseWaiting(now: number): void {
    if (!this.waiting.length) return
    this.waiting = this.waiting.filter((w) => {
      if (this.watermark >= w.upTo) { w.release(true); return false }
      if (now >= w.deadline) { w.release(false); return false }
      return true
    })
  }

  private warn(kind: string, obj: Record<string, unknown>, msg: string): void {
    const now = Date.now()
    const w = this.warnings.get(kind) ?? { last: -Infinity, count: 0 }
    w.count++
    this.warnings.set(kind, w)
    if (now - w.last < this.warnIntervalMs) return
    this.log?.warn({ ...obj, occurrences: w.count }, msg)
    w.last = now
    w.count = 0
  }
}

function toEvent(doc: EventDoc): StreamEvent {
  let data: unknown = null
  try { data = JSON.parse(doc.data) } catch { /* written by this code as JSON; a damaged document carries null */ }
  return { id: doc._id, type: doc.type, data }
}

const backoff = (failures: number) => Math.min(MAX_BACKOFF_MS, 100 * 2 ** (failures - 1))

/** The error's class only: driver messages can carry the URI. */
export function errorName(err: unknown): string {
  return err instanceof Error ? err.name : 'Error'
}
