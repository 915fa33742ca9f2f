// The KubeOrch UI's stream reader, as its six hooks implement it (CONTRACT.md §4), for the adapter's
// contract tests: fetch with the bearer and `Accept: text/event-stream`; blocks split on "\n\n" (LF only);
// an event counts only with both an `event:` line and a non-empty `data:` line, and only the first `data:`
// line is read; comments, `id:` and `retry:` are ignored. Payloads stay text: the pod-log stream's are not
// JSON, and each test parses the others as the UI does (`json` below).

export interface UiEvent { type: string; data: string }

/** The complete events in `text`, and what is left over (an unfinished block). */
export function uiEventsOf(text: string): { events: UiEvent[]; rest: string } {
  const blocks = text.split('\n\n')
  const rest = blocks.pop() ?? ''
  const events: UiEvent[] = []
  for (const block of blocks) {
    const type = block.match(/^event:\s*(.+)$/m)?.[1]
    const data = block.match(/^data:\s*(.+)$/m)?.[1]
    if (type && data) events.push({ type, data })
  }
  return { events, rest }
}

/** The events of a finished stream's raw text, with JSON payloads parsed (the build and import pages). */
export function uiJsonEventsOf(raw: string): Array<{ type: string; data: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  return uiEventsOf(`${raw}\n\n`).events.map((e) => ({ type: e.type, data: JSON.parse(e.data) }))
}

export interface UiStream {
  status: number
  headers: Headers
  /** The error body of a refused stream. */
  body?: Record<string, unknown>
  events: UiEvent[]
  raw(): string
  readonly ended: boolean
  /** Settles when the stream has ended (the server closed it, or close()). */
  done: Promise<void>
  /** Resolves when `pred` holds over the events so far (checked on every chunk), or rejects after `ms`. */
  until(what: string, pred: (events: UiEvent[]) => boolean, ms?: number): Promise<UiEvent[]>
  close(): Promise<void>
}

export async function openUiStream(url: string, token: string): Promise<UiStream> {
  const ac = new AbortController()
  const res = await fetch(url, { headers: { Authorization: `Bearer ${token}`, Accept: 'text/event-stream' }, signal: ac.signal })
  const events: UiEvent[] = []
  const waiters = new Set<() => void>()
  let raw = ''
  let ended = false
  const reading = (async () => {
    if (!res.ok || !res.body) return
    const reader = res.body.getReader()
    const decoder = new TextDecoder()
    let buffer = ''
    try {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        const text = decoder.decode(value, { stream: true })
        raw += text
        const parsed = uiEventsOf(buffer + text)
        buffer = parsed.rest
        events.push(...parsed.events)
        for (const w of waiters) w()
      }
    } catch { /* aborted by close() */ } finally {
      ended = true
      for (const w of waiters) w()
    }
  })()
  return {
    status: res.status,
    headers: res.headers,
    done: reading,
    body: res.ok ? undefined : await res.json() as Record<string, unknown>,
    events,
    raw: () => raw,
    get ended() { return ended },
    until: (what, pred, ms = 20_000) => new Promise((resolve, reject) => {
      const check = () => {
        if (pred(events)) { done(); resolve(events) } else if (ended) { done(); reject(new Error(`the stream ended before ${what}; got ${JSON.stringify(events.map((e) => e.type))}`)) }
      }
      const timer = setTimeout(() => { done(); reject(new Error(`timed out waiting for ${what}; got ${JSON.stringify(events.map((e) => [e.type, e.data.slice(0, 120)]))}`)) }, ms)
      const done = () => { clearTimeout(timer); waiters.delete(check) }
      waiters.add(check)
      check()
    }),
    close: async () => { ac.abort(); await reading },
  }
}
