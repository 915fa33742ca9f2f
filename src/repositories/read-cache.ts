// A bounded, owner-checked cache of documents read by id, safe only while this process is the database's
// sole client (the embedded server): every write through the owning repository drops the entry, and a read
// that was in flight when a write landed does not store what it read. Entries are snapshots (deep-frozen
// plain data, see snapshot.ts): `get` hands out a mutable copy, `getShared` the entry itself to readers that
// only read it.
import { snapshotOf, thaw } from './snapshot.ts'

export interface ReadCacheOptions { /** Entries kept; the least recently used goes first. */ maxEntries: number }

interface Owned { owner_id: string }

export class ReadCache<T extends Owned> {
  // Map keeps insertion order: re-inserting on a hit makes the first key the least recently used.
  private readonly entries = new Map<string, T>()
  // Per id, while at least one read is in flight: how many writes dropped it since. Only ids being read
  // are tracked, so this is bounded by concurrent reads, not by the collection.
  private readonly inflight = new Map<string, { writes: number; readers: number }>()
  constructor(private readonly options: ReadCacheOptions) {}

  get size(): number { return this.entries.size }

  /**
   * The cached value for `id` when the owner matches (a copy: callers may mutate it), `null` when it is cached
   * for another owner (ids are unique, so the database could not find it either), `undefined` on a miss.
   */
  get(id: string, ownerId: string): T | null | undefined {
    const hit = this.getShared(id, ownerId)
    return hit ? thaw(hit) : hit
  }

  /** As `get`, but the cached snapshot itself: deep-frozen, so a caller that tries to change it throws. */
  getShared(id: string, ownerId: string): T | null | undefined {
    const hit = this.entries.get(id)
    if (!hit) return undefined
    this.entries.delete(id)
    this.entries.set(id, hit)
    return hit.owner_id === ownerId ? hit : null
  }

  /**
   * Runs `read` and caches its result unless a write to `id` happened while it ran. Answers what `read` did;
   * with `shared`, the snapshot that was cached instead when there is one.
   */
  async read(id: string, read: () => Promise<T | null>, { shared = false }: { shared?: boolean } = {}): Promise<T | null> {
    let state = this.inflight.get(id)
    if (!state) this.inflight.set(id, state = { writes: 0, readers: 0 })
    const writesBefore = state.writes
    state.readers++
    try {
      const value = await read()
      if (!value || state.writes !== writesBefore) return value
      // Anything but plain data is not cached: freezing could not keep its content from changing.
      const snapshot = snapshotOf(value)
      if (!snapshot) return value
      this.store(id, snapshot)
      return shared ? snapshot : value
    } finally {
      if (--state.readers === 0) this.inflight.delete(id)
    }
  }

  /** Forgets `id`; called after every write to it (also a failed one: it may have been applied). */
  drop(id: string): void {
    this.entries.delete(id)
    const state = this.inflight.get(id)
    if (state) state.writes++
  }

  private store(id: string, value: T): void {
    this.entries.delete(id)
    this.entries.set(id, value)
    if (this.entries.size > this.options.maxEntries) this.entries.delete(this.entries.keys().next().value!)
  }
}
