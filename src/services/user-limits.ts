// Per-user caps on long-lived connections (SSE streams, terminals, followed log upstreams): without them one
// signed-in user held 2,000 streams and 60 terminals. A slot is taken when the connection starts and given
// back exactly once when it ends, whichever way it ends; counts live in this process (each replica limits
// its own connections, which bounds what one user can hold on any one of them).
import { AppError } from '../errors.ts'

export type LimitKind = 'streams' | 'terminals' | 'log_follows'

export interface UserLimitsConfig { streams: number; terminals: number; log_follows: number }

/** What the 429 says, naming the setting that raises the limit. */
const DESCRIBE: Record<LimitKind, { what: string; setting: string }> = {
  streams: { what: 'open event streams', setting: 'MAX_STREAMS_PER_USER' },
  terminals: { what: 'open terminals', setting: 'MAX_TERMINALS_PER_USER' },
  log_follows: { what: 'followed log streams', setting: 'MAX_LOG_FOLLOWS_PER_USER' },
}

export class TooManyConnections extends AppError {
  constructor(readonly kind: LimitKind, limit: number) {
    const { what, setting } = DESCRIBE[kind]
    super(429, `too many ${what}: at most ${limit} per user (${setting}); close one first`)
  }
}

export class UserLimits {
  private readonly counts: Record<LimitKind, Map<string, number>> = { streams: new Map(), terminals: new Map(), log_follows: new Map() }

  constructor(private readonly limits: UserLimitsConfig) {}

  /** Takes a slot for `userId`, or throws TooManyConnections (429). The returned release is idempotent. */
  acquire(kind: LimitKind, userId: string): () => void {
    const counts = this.counts[kind]
    const held = counts.get(userId) ?? 0
    if (held >= this.limits[kind]) throw new TooManyConnections(kind, this.limits[kind])
    counts.set(userId, held + 1)
    let released = false
    return () => {
      if (released) return
      released = true
      const now = (counts.get(userId) ?? 1) - 1
      if (now > 0) counts.set(userId, now)
      else counts.delete(userId)
    }
  }

  /** Slots `userId` holds now (tests and diagnostics). */
  held(kind: LimitKind, userId: string): number {
    return this.counts[kind].get(userId) ?? 0
  }
}
