// Scheduled jobs (the dashboard statistics repair) fire on every replica at the same cron slot; in shared mode
// exactly one of them may run each slot (API.md §11). One document per job in `schedule_claims` records the
// last slot claimed, by whom, and until when the holder may still be running it. A claim is one conditional
// upsert: it matches only when the slot is newer than the recorded one AND the previous holder is done or its
// time is up, so of the replicas racing for a slot one update matches and the others either miss or hit the
// duplicate key of the upsert. A holder that crashes never settles; its `until` passes and a later slot runs.
//
// node-cron asks its RunCoordinator (`distributed` tasks) before each slot and tells it when the slot is done,
// with the key `<task name>:<slot ISO time>`: coordinatorFor adapts a job to that hook. No index beyond _id:
// the documents are read and written by _id only.
import type { Collection, Db } from 'mongodb'
import type { RunCoordinator } from 'node-cron'

interface ScheduleClaimDoc {
  /** The job's name. */
  _id: string
  /** The cron slot last claimed. */
  tick: Date
  /** The replica that claimed it. */
  holder: string
  /** Until when the holder may still be running it (settled: when it finished). */
  until: Date
}

const DUPLICATE_KEY = 11000

export class ScheduleClaims {
  private readonly c: Collection<ScheduleClaimDoc>

  constructor(db: Db, private readonly holder: string, private readonly now: () => Date = () => new Date()) {
    this.c = db.collection<ScheduleClaimDoc>('schedule_claims')
  }

  /** Whether this replica runs `job` for the slot `tick`, holding it at most `leaseMs`; false when another replica has it. */
  async claim(job: string, tick: Date, leaseMs: number): Promise<boolean> {
    const now = this.now()
    try {
      const res = await this.c.updateOne(
        { _id: job, tick: { $lt: tick }, until: { $lte: now } },
        { $set: { tick, holder: this.holder, until: new Date(now.getTime() + leaseMs) } },
        { upsert: true },
      )
      return res.modifiedCount === 1 || res.upsertedCount === 1
    } catch (err) {
      // The document exists and did not match: another replica holds this slot (or a later one).
      if ((err as { code?: unknown }).code === DUPLICATE_KEY) return false
      throw err
    }
  }

  /** The slot's run is over: the next slot may be claimed at once (only by the holder of this slot). */
  async settle(job: string, tick: Date): Promise<void> {
    await this.c.updateOne({ _id: job, tick, holder: this.holder }, { $set: { until: this.now() } })
  }

  /**
   * node-cron's hook for the task named `job`. `leaseMs` is read at each slot, so it can be set once the task
   * exists (the gap between its slots is known then).
   */
  coordinatorFor(job: string, leaseMs: () => number): RunCoordinator {
    const tickOf = (key: string): Date => {
      const tick = new Date(key.startsWith(`${job}:`) ? key.slice(job.length + 1) : Number.NaN)
      // node-cron then skips the slot and logs it (fail-closed), rather than running it unclaimed.
      if (Number.isNaN(tick.getTime())) throw new Error(`schedule claim: unexpected slot key for ${job}`)
      return tick
    }
    return {
      shouldRun: (key) => this.claim(job, tickOf(key), leaseMs()),
      onComplete: (key) => this.settle(job, tickOf(key)),
    }
  }
}
