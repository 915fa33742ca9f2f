// Streams of one kind bounded per user, newest wins (API.md §14: notification streams). A page that forgot
// its stream (the KubeOrch UI's notification hook reconnects after its own unmount; pages in the back/forward
// cache keep theirs) cannot be told apart from one in use, so a new stream is never refused for the count:
// the user's oldest is ended with one final event instead, and the forgotten ones are what goes first.
//
// In this process: each replica bounds the streams it serves, as the per-user slots do (user-limits.ts).
import type { StreamAdmission, EndStream } from './sse.ts'

export interface FinalEvent { type: string; data: unknown }

interface Entry { end: EndStream | null; evicted: boolean }

export class NewestWins {
  /** Per user, oldest first (a Set keeps insertion order). */
  private readonly byUser = new Map<string, Set<Entry>>()

  constructor(private readonly max: number, private readonly final: FinalEvent) {}

  /** Counts a new stream of `userId`, ending the user's oldest ones beyond `max` (their slots are given back at once). */
  admit(userId: string): StreamAdmission {
    let entries = this.byUser.get(userId)
    if (!entries) { entries = new Set(); this.byUser.set(userId, entries) }
    const entry: Entry = { end: null, evicted: false }
    entries.add(entry)
    for (const oldest of entries) {
      if (entries.size <= this.max) break
      entries.delete(oldest)
      this.evict(oldest)
    }
    const all = entries
    return {
      started: (end) => {
        // Evicted between its admission and its start (as many newer ones opened meanwhile): it ends at once.
        if (entry.evicted) end(this.final.type, this.final.data)
        else entry.end = end
      },
      leave: () => {
        if (!all.delete(entry)) return
        if (all.size === 0 && this.byUser.get(userId) === all) this.byUser.delete(userId)
      },
    }
  }

  /** Streams of `userId` counted now (tests and diagnostics). */
  held(userId: string): number {
    return this.byUser.get(userId)?.size ?? 0
  }

  private evict(entry: Entry): void {
    entry.evicted = true
    entry.end?.(this.final.type, this.final.data)
  }
}
