// `GET /resources?sync=true` (the UI's first load of the resources page and its Refresh button) runs the
// same sync as POST /v1/api/resources/sync before listing. A sync lists every watched kind on every cluster
// the user reaches, so it is bounded here, per user and cluster reference:
// - a sync started less than FRESH_MS ago is reused, not repeated (page loads and Refresh clicks in a
//   row cost one sync; the watchers keep statuses current in between, a sync only finds objects that
//   appeared or vanished outside runs);
// - the list waits for it at most `waitMs`; a slower sync goes on (it is not tied to the request) and the
//   next load shows what it found;
// - a failing sync (a cluster unreachable, unreadable credentials) does not fail the list: the page then
//   shows what is recorded, and the reply says why it is not fresh. A failed sync is not reused.
import { AppError } from '../../errors.ts'

/** How long a started sync stands for the next ones of the same user and cluster reference. */
export const FRESH_MS = 10_000

export type SyncState = { state: 'done' | 'reused' | 'running' } | { state: 'failed'; error: string }

interface Entry { at: number; outcome: Promise<SyncState>; failed: boolean }

export interface ListSyncOptions {
  sync: (userId: string, cluster?: string) => Promise<unknown>
  waitMs: number
  freshMs?: number
  now?: () => number
  log: { warn(obj: object, msg: string): void }
}

export class ListSyncs {
  private readonly recent = new Map<string, Entry>()
  private readonly freshMs: number
  private readonly now: () => number

  constructor(private readonly opts: ListSyncOptions) {
    this.freshMs = opts.freshMs ?? FRESH_MS
    this.now = opts.now ?? Date.now
  }

  /** Syncs (or reuses a recent sync) before a list; never throws, answers what happened. */
  async before(userId: string, cluster?: string): Promise<SyncState> {
    const at = this.now()
    this.prune(at)
    const key = `${userId}\n${cluster ?? ''}`
    const known = this.recent.get(key)
    const reused = known !== undefined && !known.failed && at - known.at < this.freshMs
    const entry = reused ? known : this.start(key, at, userId, cluster)
    const state = await this.within(entry.outcome)
    return reused && state.state === 'done' ? { state: 'reused' } : state
  }

  private start(key: string, at: number, userId: string, cluster?: string): Entry {
    const entry: Entry = { at, failed: false, outcome: Promise.resolve({ state: 'running' }) }
    entry.outcome = this.opts.sync(userId, cluster).then(
      (): SyncState => ({ state: 'done' }),
      (err: unknown): SyncState => {
        entry.failed = true
        // Services speak in AppErrors with messages meant for the user; anything else stays in the log.
        const error = err instanceof AppError ? err.message : 'the sync failed'
        if (!(err instanceof AppError)) this.opts.log.warn({ err: { message: String((err as Error)?.message ?? err) } }, 'resource sync before a list failed')
        return { state: 'failed', error }
      },
    )
    this.recent.set(key, entry)
    return entry
  }

  private async within(outcome: Promise<SyncState>): Promise<SyncState> {
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<SyncState>((resolve) => { timer = setTimeout(() => resolve({ state: 'running' }), this.opts.waitMs) })
    try {
      return await Promise.race([outcome, late])
    } finally {
      clearTimeout(timer)
    }
  }

  /** Entries past their window are dropped, so the map holds only the users of the last FRESH_MS. */
  private prune(at: number): void {
    for (const [key, entry] of this.recent) if (at - entry.at >= this.freshMs) this.recent.delete(key)
  }
}
