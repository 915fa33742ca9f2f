// Long work (runs, builds, imports) is recorded with the process doing it and when that process last said it
// still is. Every period a process marks its own work alive and then sweeps: work whose marks stopped three
// periods ago belongs to a process that died, and the sweeping process resolves it (fails or takes it over).

/** Work whose last mark is older than this was left by a dead process. */
export function staleBefore(periodMs: number, now = Date.now()): Date {
  return new Date(now - 3 * periodMs)
}

export interface HeartbeatOptions {
  periodMs: number
  /** Marks this process's work alive at `at`. */
  beat(at: Date): Promise<void>
  /** Resolves work dead processes left behind; runs after each beat. */
  sweep(): Promise<unknown>
  /** A beat or sweep failed (the next period tries again). */
  onError(err: unknown): void
}

export class Heartbeat {
  private timer: NodeJS.Timeout | null = null

  constructor(private readonly opts: HeartbeatOptions) {}

  /** Starts beating (once; later calls do nothing). It never keeps the process alive. */
  start(): void {
    if (this.timer) return
    this.timer = setInterval(() => {
      void this.opts.beat(new Date()).then(() => this.opts.sweep()).catch((err: unknown) => this.opts.onError(err))
    }, this.opts.periodMs)
    this.timer.unref()
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
  }
}
