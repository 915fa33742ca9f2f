// Background removal of documents whose TTL index date has passed, plus reaping of idle cursors.
// The timer is unref'd so it never keeps a process alive.
import type { Catalog } from './catalog.ts'
import type { CursorRegistry } from './cursors.ts'
import type { Logger } from './state.ts'
import type { Storage } from './storage/storage.ts'
import { collectPathValues, encodeKey, type Doc } from './values.ts'

export class TtlSweeper {
  private timer: NodeJS.Timeout | undefined
  private readonly catalog: Catalog
  private readonly cursors: CursorRegistry
  private readonly storage: Storage
  private readonly logger: Logger | undefined

  constructor(catalog: Catalog, cursors: CursorRegistry, storage: Storage, logger: Logger | undefined) {
    this.catalog = catalog
    this.cursors = cursors
    this.storage = storage
    this.logger = logger
  }

  start(intervalMs: number): void {
    this.stop()
    this.timer = setInterval(() => this.sweep(), intervalMs)
    this.timer.unref()
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
  }

  /** Deletes expired documents; returns how many. A document expires at (earliest date in the field) + expireAfterSeconds. */
  sweep(now = Date.now()): number {
    let removed = 0
    const seqBefore = this.storage.loggedSeq
    try {
      for (const coll of this.catalog.allCollections()) {
        for (const index of coll.indexes.values()) {
          const seconds = index.ttlSeconds
          if (seconds === undefined) continue
          const parts = index.fields[0].split('.')
          const expired: Doc[] = []
          for (const doc of coll.docs.values()) {
            let earliest = Infinity
            for (const v of collectPathValues(doc, parts).values) {
              if (v instanceof Date && v.getTime() < earliest) earliest = v.getTime()
            }
            if (earliest === Infinity || earliest + seconds * 1000 > now) continue
            if (index.isPartial && index.entriesFor(doc) === null) continue
            expired.push(doc)
          }
          if (expired.length > 0) {
            this.catalog.write(coll, expired.map((d) => ({ idKey: encodeKey(d._id), before: d })))
            removed += expired.length
          }
        }
      }
      this.cursors.reapIdle(now)
    } catch (err) {
      this.logger?.error(`embedded-mongo: TTL sweep failed: ${(err as Error).message}`)
    }
    if (this.storage.loggedSeq !== seqBefore) {
      this.storage.waitDurable(this.storage.loggedSeq).catch((err: unknown) => {
        this.logger?.error(`embedded-mongo: TTL deletions not journaled: ${(err as Error).message}`)
      })
    }
    return removed
  }
}
