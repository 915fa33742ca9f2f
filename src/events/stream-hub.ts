// The SSE hub: stream keys (`workflow:<id>`, `resource:<id>`, `pod-logs:<id>`, `build:<id>`, `import:<id>`),
// fan-out to subscribers, and a replay window for reconnecting clients (Last-Event-ID).
//
// Spec delivery rules 1 and 2: publishing fans out to every subscriber of the key and never blocks. Each
// subscriber has a bounded buffer; when it is full (the client's socket cannot keep up), the event is
// dropped for that subscriber alone and a warning is logged, rate-limited per key and without the payload
// (payloads can hold log lines). Events are plain JSON and the interface is all publishers and routes see,
// so a cross-replica transport (Redis streams, NATS) can replace the in-process implementation.

export interface StreamEvent { id: number; type: string; data: unknown }

export interface Subscription extends AsyncIterable<StreamEvent> {
  close(): void
  readonly closed: boolean
  /** The id this subscription starts after: the Last-Event-ID it was given, else the key's latest id when it subscribed. */
  readonly since: number
  /** Settles when the subscription closes (client gone, hub closed), so a writer blocked on a slow socket can stop. */
  readonly done: Promise<void>
}

export interface SubscribeOptions {
  /** Replay the events after this id that are still in the key's window. */
  lastEventId?: number
  bufferSize?: number
  /** Called for each event dropped because this subscriber's buffer was full. */
  onDrop?: () => void
}

export interface StreamHub {
  /** Never blocks: fans out to the subscribers of `key`. */
  publish(key: string, type: string, data: unknown): void
  subscribe(key: string, opts?: SubscribeOptions): Subscription
  subscriberCount(key: string): number
  /**
   * Ends every subscription (shutdown): each still yields what was offered to it before (a run's final
   * `complete`), then ends; one whose reader does not take it within CLOSE_DRAIN_MS is cut off. Nothing is
   * published after, and later subscriptions start closed.
   */
  close(): void
}

/** How long a subscription may take to be read to its end once the hub closes (a client that does not read). */
export const CLOSE_DRAIN_MS = 1000

export interface HubLog { warn(obj: object, msg: string): void }

export interface MemoryHubOptions {
  /** Per-subscriber buffer (events); spec: bounded, size not given; API.md §7: 256. */
  bufferSize?: number
  /** Events kept per key for Last-Event-ID. */
  replaySize?: number
  /** A key with no subscribers and no event for this long is forgotten (its replay window with it). */
  idleKeyMs?: number
  /** At most one drop warning per key in this period; the next one reports the count since. */
  warnIntervalMs?: number
  log?: HubLog
  now?: () => number
}

interface KeyState {
  lastId: number
  /** Ring of the last replaySize events, oldest first from `start`. */
  replay: StreamEvent[]
  start: number
  subscribers: Set<MemorySubscription>
  lastActivity: number
  dropped: number
  lastWarn: number
}

class MemorySubscription implements Subscription {
  private queue: StreamEvent[] = []
  private head = 0
  /** Live events held back while what comes before them is still being read (the database hub's replay). */
  private held: StreamEvent[] | null = null
  private waiter: ((r: IteratorResult<StreamEvent>) => void) | null = null
  private ended: { promise: Promise<void>; resolve: () => void } | null = null
  closed = false
  /** Takes no more events and closes once its queue is read (the hub closed). */
  private finishing = false

  constructor(
    readonly since: number,
    private readonly capacity: number,
    private readonly onDrop: (() => void) | undefined,
    private readonly detach: (s: MemorySubscription) => void,
  ) {}

  /** False when the buffer was full and the event was dropped. */
  offer(event: StreamEvent): boolean {
    if (this.closed || this.finishing) return true
    if (this.held) {
      if (this.held.length >= this.capacity) {
        this.onDrop?.()
        return false
      }
      this.held.push(event)
      return true
    }
    const waiter = this.waiter
    if (waiter) {
      this.waiter = null
      waiter({ value: event, done: false })
      return true
    }
    if (this.queue.length - this.head >= this.capacity) {
      this.onDrop?.()
      return false
    }
    this.queue.push(event)
    return true
  }

  hold(): void {
    this.held ??= []
  }

  /** Ends a hold: `first` (events before everything held), then the held events after `after`, in that order. */
  release(first: StreamEvent[], after: number): number {
    const held = this.held ?? []
    this.held = null
    let dropped = 0
    for (const event of first) if (!this.offer(event)) dropped++
    for (const event of held) if (event.id > after && !this.offer(event)) dropped++
    return dropped
  }

  // Created on first use: most subscribers never need it, and 10,000 of them should stay small.
  get done(): Promise<void> {
    if (this.closed) return Promise.resolve()
    if (!this.ended) {
      let resolve!: () => void
      const promise = new Promise<void>((r) => { resolve = r })
      this.ended = { promise, resolve }
    }
    return this.ended.promise
  }

  /** Ends after what is queued has been read; false when it is still being read. */
  finish(): boolean {
    if (this.closed) return true
    // Held events wait for what comes before them, which will not come now.
    this.held = null
    if (this.head >= this.queue.length) { this.close(); return true }
    this.finishing = true
    return false
  }

  close(): void {
    if (this.closed) return
    this.closed = true
    this.finishing = false
    this.queue = []
    this.head = 0
    this.held = null
    this.detach(this)
    this.ended?.resolve()
    const waiter = this.waiter
    this.waiter = null
    waiter?.({ value: undefined, done: true })
  }

  private take(): StreamEvent | undefined {
    if (this.head >= this.queue.length) return undefined
    const event = this.queue[this.head++]
    // Compact now and then rather than shift() per event.
    if (this.head >= 64 && this.head * 2 >= this.queue.length) {
      this.queue = this.queue.slice(this.head)
      this.head = 0
    }
    return event
  }

  [Symbol.asyncIterator](): AsyncIterator<StreamEvent> {
    return {
      next: () => {
        const event = this.take()
        if (event) return Promise.resolve({ value: event, done: false })
        if (this.finishing) this.close()
        if (this.closed) return Promise.resolve({ value: undefined, done: true })
        return new Promise((resolve) => { this.waiter = resolve })
      },
      return: () => {
        this.close()
        return Promise.resolve({ value: undefined, done: true })
      },
    }
  }
}

export class MemoryStreamHub implements StreamHub {
  private readonly keys = new Map<string, KeyState>()
  private readonly bufferSize: number
  private readonly replaySize: number
  private readonly idleKeyMs: number
  private readonly warnIntervalMs: number
  private readonly now: () => number
  private closed = false
  private lastSweep = 0

  constructor(private readonly opts: MemoryHubOptions = {}) {
    this.bufferSize = opts.bufferSize ?? 256
    this.replaySize = opts.replaySize ?? 256
    this.idleKeyMs = opts.idleKeyMs ?? 5 * 60_000
    this.warnIntervalMs = opts.warnIntervalMs ?? 10_000
    this.now = opts.now ?? Date.now
  }

  publish(key: string, type: string, data: unknown): void {
    if (this.closed) return
    const now = this.now()
    this.sweep(now)
    const state = this.state(key, now)
    this.fanOut(key, state, { id: ++state.lastId, type, data }, now)
  }

  /**
   * Fans out an event whose id was given elsewhere (the database hub's sequence); ids must increase per key.
   * The event goes to the key's current subscribers and its replay window, exactly as a published one.
   */
  deliver(key: string, event: StreamEvent): void {
    if (this.closed) return
    const now = this.now()
    this.sweep(now)
    const state = this.state(key, now)
    state.lastId = event.id
    this.fanOut(key, state, event, now)
  }

  private fanOut(key: string, state: KeyState, event: StreamEvent, now: number): void {
    state.lastActivity = now
    if (this.replaySize > 0) {
      if (state.replay.length < this.replaySize) state.replay.push(event)
      else {
        state.replay[state.start] = event
        state.start = (state.start + 1) % this.replaySize
      }
    }
    let dropped = 0
    for (const sub of state.subscribers) if (!sub.offer(event)) dropped++
    if (dropped) this.warnDropped(key, state, dropped, now)
  }

  subscribe(key: string, opts: SubscribeOptions = {}): Subscription {
    const now = this.now()
    this.sweep(now)
    const state = this.closed ? undefined : this.state(key, now)
    const requested = opts.lastEventId
    // An id from before this key's window was recreated (idle key forgotten, restart) cannot be resumed from.
    const resumable = state !== undefined && requested !== undefined && requested >= 0 && requested <= state.lastId
    const since = resumable ? requested : state?.lastId ?? 0
    const sub = this.attach(key, state, since, opts, now)
    if (sub.closed || !state) return sub
    if (resumable) {
      let dropped = 0
      for (const event of this.window(state)) if (event.id > since && !sub.offer(event)) dropped++
      if (dropped) this.warnDropped(key, state, dropped, now)
    }
    return sub
  }

  /**
   * A subscription that starts after `since` (an id given elsewhere) and holds every live event until
   * `resume` is called with what comes before them (the database hub's replay, read while live events
   * arrive); held events up to `after` are left out. `resume(null)` closes it instead. Nothing from the
   * replay window is replayed here.
   */
  subscribeHeld(key: string, since: number, opts: SubscribeOptions = {}): { sub: Subscription; resume(first: StreamEvent[] | null, after?: number): void } {
    const now = this.now()
    this.sweep(now)
    const state = this.closed ? undefined : this.state(key, now)
    const sub = this.attach(key, state, since, opts, now)
    sub.hold()
    return {
      sub,
      resume: (first, after = -Infinity) => {
        if (first === null) { sub.close(); return }
        const dropped = sub.release(first, after)
        if (dropped && state) this.warnDropped(key, state, dropped, this.now())
      },
    }
  }

  private attach(key: string, state: KeyState | undefined, since: number, opts: SubscribeOptions, now: number): MemorySubscription {
    const sub = new MemorySubscription(since, opts.bufferSize ?? this.bufferSize, opts.onDrop, (s) => {
      if (!state) return
      state.subscribers.delete(s)
      state.lastActivity = this.now()
      // A key that never had an event (e.g. a stream refused with 404 after subscribing) is not kept.
      if (state.subscribers.size === 0 && state.lastId === 0 && this.keys.get(key) === state) this.keys.delete(key)
    })
    if (!state) { sub.close(); return sub }
    state.lastActivity = now
    state.subscribers.add(sub)
    return sub
  }

  subscriberCount(key: string): number {
    return this.keys.get(key)?.subscribers.size ?? 0
  }

  close(): void {
    this.closed = true
    const reading: MemorySubscription[] = []
    for (const state of this.keys.values()) for (const sub of [...state.subscribers]) if (!sub.finish()) reading.push(sub)
    this.keys.clear()
    if (reading.length) setTimeout(() => { for (const sub of reading) sub.close() }, CLOSE_DRAIN_MS)
  }

  /** Keys currently held (with subscribers or a recent event): what the memory bound is about. */
  keyCount(): number {
    return this.keys.size
  }

  private state(key: string, now: number): KeyState {
    let state = this.keys.get(key)
    if (!state) {
      state = { lastId: 0, replay: [], start: 0, subscribers: new Set(), lastActivity: now, dropped: 0, lastWarn: -Infinity }
      this.keys.set(key, state)
    }
    return state
  }

  private window(state: KeyState): StreamEvent[] {
    return state.start === 0 ? state.replay : [...state.replay.slice(state.start), ...state.replay.slice(0, state.start)]
  }

  private warnDropped(key: string, state: KeyState, count: number, now: number): void {
    state.dropped += count
    if (now - state.lastWarn < this.warnIntervalMs) return
    this.opts.log?.warn({ stream: key, dropped: state.dropped, subscribers: state.subscribers.size },
      'stream subscriber buffer full: events dropped for a slow subscriber')
    state.dropped = 0
    state.lastWarn = now
  }

  /** Forgets keys nobody listens to and nothing was published on for idleKeyMs, at most once per idleKeyMs/4. */
  private sweep(now: number): void {
    if (now - this.lastSweep < this.idleKeyMs / 4) return
    this.lastSweep = now
    for (const [key, state] of this.keys) {
      if (state.subscribers.size === 0 && now - state.lastActivity >= this.idleKeyMs) this.keys.delete(key)
    }
  }
}
