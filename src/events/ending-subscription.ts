// A stream that has an end (a followed pod log, a build) is served through the hub like any other; its SSE
// reply ends after the final event. This wraps one subscription so that it does.
import type { StreamEvent, Subscription } from './stream-hub.ts'

/**
 * The subscription's events, first `replay()` (computed at the first read, once what to replay is known),
 * ending right after the first event whose type is in `final`.
 */
export function endingAfter(sub: Subscription, final: ReadonlySet<string>, replay: () => StreamEvent[] = () => []): Subscription {
  let queue: StreamEvent[] | null = null
  let finished = false
  return {
    get closed() { return sub.closed },
    get since() { return sub.since },
    get done() { return sub.done },
    close: () => sub.close(),
    [Symbol.asyncIterator](): AsyncIterator<StreamEvent> {
      const it = sub[Symbol.asyncIterator]()
      return {
        next: async () => {
          if (finished) { sub.close(); return { value: undefined, done: true } }
          queue ??= replay()
          const r = queue.length ? { value: queue.shift()!, done: false as const } : await it.next()
          if (!r.done && final.has(r.value.type)) finished = true
          return r
        },
        return: async () => { sub.close(); return { value: undefined, done: true } },
      }
    },
  }
}
