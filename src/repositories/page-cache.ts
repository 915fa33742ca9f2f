// List pages kept in memory under the same condition as ReadCache: only while this process is the
// database's sole client (the embedded server). Any write through the owning repository drops every page,
// because one write can move a document into or out of any page of its owner and change the totals;
// dropping them all needs no reasoning about which pages a write touched, and writes are rare next to list
// reads. A read that overlapped a write does not store what it read. Pages are kept as snapshots
// (deep-frozen plain data) and handed out as copies.
import { snapshotOf, thaw } from './snapshot.ts'

export interface PageCacheOptions { /** Pages kept; the least recently used goes first. */ maxEntries: number }

export class PageCache<T> {
  // Map keeps insertion order: re-inserting on a hit makes the first key the least recently used.
  private readonly entries = new Map<string, T>()
  // Counts drops, so a read can tell whether one happened while it ran.
  private drops = 0
  constructor(private readonly options: PageCacheOptions) {}

  get size(): number { return this.entries.size }

  /** A copy of the cached page (callers may mutate it), or undefined on a miss. */
  get(key: string): T | undefined {
    const hit = this.getShared(key)
    return hit === undefined ? undefined : thaw(hit)
  }

  /** As `get`, but the cached snapshot itself: deep-frozen, so a caller that tries to change it throws. */
  getShared(key: string): T | undefined {
    const hit = this.entries.get(key)
    if (hit === undefined) return undefined
    this.entries.delete(key)
    this.entries.set(key, hit)
    return hit
  }

  /**
   * Runs `read` and caches its result unless a write dropped the pages while it ran. Answers what `read` did;
   * with `shared`, the snapshot that was cached instead when there is one.
   */
  async read(key: string, read: () => Promise<T>, { shared = false }: { shared?: boolean } = {}): Promise<T> {
    const dropsBefore = this.drops
    const value = await read()
    const snapshot = this.drops === dropsBefore ? snapshotOf(value) : undefined
    if (snapshot === undefined) return value
    this.entries.delete(key)
    this.entries.set(key, snapshot)
    if (this.entries.size > this.options.maxEntries) this.entries.delete(this.entries.keys().next().value!)
    return shared ? snapshot : value
  }

  /** Forgets every page; called after every write (also a failed one: it may have been applied). */
  dropAll(): void {
    this.entries.clear()
    this.drops++
  }
}
