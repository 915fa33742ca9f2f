// Follows one of the API's event streams (text/event-stream) for `status -w`, `logs -f`, `build --follow` and
// `import`: parsed with eventsource-parser, resumed with Last-Event-ID when the connection drops (the
// server replays what was missed), ended by the caller (break) or by Ctrl-C.
import { createParser, type EventSourceMessage } from 'eventsource-parser'
import { apiError, unreachable } from './client.ts'
import { CliError, EXIT } from './errors.ts'
import type { Session } from './session.ts'

export interface StreamEvent { type: string; data: unknown; id: string | undefined }

export interface FollowOptions {
  signal: AbortSignal
  /** Query string parameters. */
  query?: Record<string, string | number | boolean | undefined>
  /** Reconnects after a dropped connection at most this many times in a row (default 5). */
  reconnects?: number
}

function parseData(text: string): unknown {
  try { return JSON.parse(text) } catch { return text }
}

/** The stream's events in order; the generator ends when the caller stops or the server ends it for good. */
export async function* followStream(session: Session, path: string, o: FollowOptions): AsyncGenerator<StreamEvent> {
  const url = new URL(session.server + path)
  for (const [k, v] of Object.entries(o.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v))
  let lastId: string | undefined
  let retryMs = 1000
  let failures = 0
  const maxReconnects = o.reconnects ?? 5
  for (;;) {
    if (o.signal.aborted) throw new CliError('interrupted', EXIT.interrupted)
    const local = new AbortController()
    const onAbort = () => local.abort()
    o.signal.addEventListener('abort', onAbort, { once: true })
    let res: Response
    try {
      res = await fetch(url, {
        signal: local.signal,
        headers: {
          accept: 'text/event-stream', 'user-agent': 'cwo',
          ...(session.token && { authorization: `Bearer ${session.token}` }),
          ...(lastId !== undefined && { 'last-event-id': lastId }),
        },
      })
    } catch (err) {
      o.signal.removeEventListener('abort', onAbort)
      if (o.signal.aborted) throw new CliError('interrupted', EXIT.interrupted)
      if (++failures > maxReconnects) throw unreachable(session.server, err)
      await pause(retryMs, o.signal)
      continue
    }
    if (!res.ok || !res.body) {
      o.signal.removeEventListener('abort', onAbort)
      const text = await res.text().catch(() => '')
      throw apiError(res.status, parseData(text))
    }
    const queue: EventSourceMessage[] = []
    const parser = createParser({ onEvent: (e) => queue.push(e), onRetry: (ms) => { retryMs = ms } })
    const decoder = new TextDecoder()
    let ended = false
    try {
      const reader = res.body.getReader()
      for (;;) {
        let chunk: Awaited<ReturnType<typeof reader.read>>
        try { chunk = await reader.read() } catch { break }
        if (chunk.done) { ended = true; break }
        parser.feed(decoder.decode(chunk.value, { stream: true }))
        while (queue.length) {
          const e = queue.shift()!
          if (e.id !== undefined) lastId = e.id
          // A connection that delivers counts as a success; one that ends with nothing counts as a failure.
          failures = 0
          yield { type: e.event ?? 'message', data: parseData(e.data), id: e.id }
        }
      }
    } finally {
      o.signal.removeEventListener('abort', onAbort)
      local.abort()
    }
    if (o.signal.aborted) throw new CliError('interrupted', EXIT.interrupted)
    // The server ended the stream (its own end, or a restart): resume where it stopped; the caller breaks
    // out once it has what it waited for.
    if (ended && ++failures > maxReconnects) return
    await pause(retryMs, o.signal)
  }
}

/** Resolves after `ms`, or at once when `signal` aborts (never rejects: the caller checks the signal). */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms)
    function done() { clearTimeout(timer); signal.removeEventListener('abort', done); resolve() }
    signal.addEventListener('abort', done, { once: true })
  })
}
