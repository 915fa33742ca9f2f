// What the server needs from persistence: take journal operations as they happen and say when they
// are durable. Memory storage makes everything durable immediately.
import type { OpSink } from '../catalog.ts'

export interface Storage extends OpSink {
  /** Sequence number of the most recently logged operation group. */
  readonly loggedSeq: number
  /**
   * Resolves once every group up to `seq` is on stable storage. Rejects with a CommandError (OutOfDiskSpace,
   * FileStreamFailed) when the journal could not take the group: it has then been undone in memory.
   */
  waitDurable(seq: number): Promise<void>
  close(): Promise<void>
}

export class MemoryStorage implements Storage {
  loggedSeq = 0

  log(): void {
    this.loggedSeq++
  }

  waitDurable(): Promise<void> {
    return Promise.resolve()
  }

  close(): Promise<void> {
    return Promise.resolve()
  }
}
