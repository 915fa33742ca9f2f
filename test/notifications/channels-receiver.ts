// A webhook receiver for the channel tests: a node:http server on 127.0.0.1 that records every request
// (method, path, headers, raw body) and answers from a script (one answer per request, in order; 200 once
// the script runs out). Tests await requests as events (`next`), never sleep.
import http from 'node:http'
import { once } from 'node:events'

export interface Received { method: string; path: string; headers: http.IncomingHttpHeaders; body: string }

/** What to answer: a status (with optional headers), or 'hang' (never answer; the sender times out). */
export type Answer = number | { status: number; headers?: Record<string, string> } | 'hang'

export interface Receiver {
  /** http://127.0.0.1:<port> */
  base: string
  received: Received[]
  /** Answers for the next requests, in order (appended to what is left). */
  script(...answers: Answer[]): void
  /** Resolves with the next request received from now on (or an already received one at `index`). */
  request(index: number): Promise<Received>
  close(): Promise<void>
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = []
  const answers: Answer[] = []
  const waiters = new Map<number, Array<(r: Received) => void>>()
  const hanging = new Set<http.ServerResponse>()
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const entry: Received = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') }
      const index = received.push(entry) - 1
      for (const w of waiters.get(index) ?? []) w(entry)
      waiters.delete(index)
      const answer = answers.shift() ?? 200
      if (answer === 'hang') { hanging.add(res); res.on('close', () => hanging.delete(res)); return }
      const { status, headers } = typeof answer === 'number' ? { status: answer, headers: {} } : answer
      res.writeHead(status, { 'content-type': 'text/plain', ...headers })
      res.end(`answer ${status}: body text the sender must never record`)
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  return {
    base: `http://127.0.0.1:${port}`,
    received,
    script: (...a) => { answers.push(...a) },
    request: (index) => received[index] ? Promise.resolve(received[index]) : new Promise((resolve) => {
      waiters.set(index, [...(waiters.get(index) ?? []), resolve])
    }),
    close: async () => {
      for (const res of hanging) res.destroy()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
