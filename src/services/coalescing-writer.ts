// Progress of long work (runs, builds, imports) is written as it happens, but never more than one write at a
// time per record: a change while a write is in flight folds into one more write after it, which reads the
// newest state then. So the database ends with the latest state, in order, however fast events come.

export interface CoalescingWriter {
  /** Something changed: write now, or once the write in flight is done. */
  touch(): void
  /** Resolves when no write is in flight or pending. */
  flush(): Promise<void>
}

/** `write` reads the current state itself each time it is called; its failures are swallowed (the next touch retries). */
export function coalescingWriter(write: () => Promise<unknown>): CoalescingWriter {
  let writing: Promise<void> | null = null
  let dirty = false
  const start = (): Promise<void> => {
    dirty = false
    writing = write().then(() => undefined, () => undefined).then(() => {
      writing = null
      if (dirty) return start()
    })
    return writing
  }
  return {
    touch: () => { if (writing) dirty = true; else void start() },
    flush: async () => { while (writing) await writing },
  }
}
