// PodLogStreams against a scripted log endpoint (plain HTTP), where the test sees each upstream request
// arrive and close: a tail larger than the hub's default buffer arrives whole, a shared follow is one
// request closed when its last subscriber releases it, and a connection that breaks is an error, then complete.
import t from 'tap'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { KubeConfig } from '@kubernetes/client-node'
import { MemoryStreamHub, type StreamEvent, type Subscription } from '../../src/events/stream-hub.ts'
import { PodLogStreams, type LogOptions, type LogTarget } from '../../src/kube/pod-logs.ts'
import { waitFor } from '../kube-sim/test-helpers.ts'

interface Seen { url: URL; res: ServerResponse; closed: boolean }
const requests: Seen[] = []
let script: (seen: Seen, req: IncomingMessage) => void = () => {}
const server = createServer((req, res) => {
  const seen: Seen = { url: new URL(req.url ?? '/', 'http://x'), res, closed: false }
  requests.push(seen)
  res.on('close', () => { seen.closed = true })
  script(seen, req)
})
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
const port = (server.address() as { port: number }).port

const kc = new KubeConfig()
kc.loadFromOptions({
  clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
  users: [{ name: 'u', token: 'upstream-token' }],
  contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
  currentContext: 'ctx',
})
const warnings: string[] = []
const hub = new MemoryStreamHub({ bufferSize: 16, replaySize: 32 })
const logs = new PodLogStreams({ hub, bufferSize: 16, maxTail: 5000, maxLineBytes: 64, connectTimeoutMs: 2000, log: { warn: (_o, m) => { warnings.push(m) } } })
t.teardown(() => logs.close())
const target: LogTarget = { cluster: { id: 'c1', name: 'c' }, namespace: 'ns', pod: 'p', container: 'app' }

const stamped = (i: number) => `2026-11-23T10:00:${String(i % 60).padStart(2, '0')}.000000000Z line ${i}\n`

/** Reads a subscription until `complete` (or `n` events), the way serveStream does. */
async function collect(sub: Subscription, n = Infinity): Promise<StreamEvent[]> {
  const out: StreamEvent[] = []
  for await (const e of sub) { out.push(e); if (out.length >= n) break }
  return out
}

t.test('follow=false: a tail far beyond the hub buffer arrives whole, then complete', async (t) => {
  script = (seen) => {
    seen.res.writeHead(200, { 'content-type': 'text/plain' })
    seen.res.end(Array.from({ length: 3000 }, (_, i) => stamped(i)).join(''))
  }
  const opts: LogOptions = { tail: 3000, follow: false, timestamps: false }
  const key = logs.keyFor(target, opts)
  const sub = logs.hub.subscribe(key)
  const release = logs.acquire(kc, key, target, opts)
  const events = await collect(sub)
  release()
  t.equal(events.filter((e) => e.type === 'log').length, 3000, 'no line dropped')
  t.same(events.at(-1), { id: 3001, type: 'complete', data: {} })
  t.same(events[0].data, { line: 'line 0', timestamp: '2026-11-23T10:00:00.000Z' })
  const req = requests.at(-1)!
  t.equal(req.url.pathname, '/api/v1/namespaces/ns/pods/p/log')
  t.same(Object.fromEntries(req.url.searchParams), { container: 'app', follow: 'false', timestamps: 'true', tailLines: '3000' })
  t.equal(logs.active(), 0)
})

t.test('a shared follow: one request for two subscribers, closed when the last releases it', async (t) => {
  const before = requests.length
  let live: Seen | undefined
  script = (seen) => { live = seen; seen.res.writeHead(200); seen.res.write(stamped(1) + stamped(2)) }
  const opts: LogOptions = { tail: 2, follow: true, timestamps: true }
  const key = logs.keyFor(target, opts)
  t.equal(key, logs.keyFor(target, opts), 'the same key for the same pod, container and options')
  const a = logs.hub.subscribe(key)
  const releaseA = logs.acquire(kc, key, target, opts)
  const firstTwo = await collect(a, 2)
  t.same(firstTwo.map((e) => (e.data as { line: string }).line), ['2026-11-23T10:00:01.000000000Z line 1', '2026-11-23T10:00:02.000000000Z line 2'], 'timestamps kept in the line')
  const b = logs.hub.subscribe(key)
  const releaseB = logs.acquire(kc, key, target, opts)
  t.equal(requests.length - before, 1, 'one upstream request')
  const replayed = await collect(b, 2)
  t.same(replayed.map((e) => e.id), firstTwo.map((e) => e.id), 'the joiner gets the recent lines (its tail) first')
  live!.res.write(stamped(3))
  const [na, nb] = await Promise.all([collect(a, 1), collect(b, 1)])
  t.same(na, nb, 'both get the new line')
  releaseA()
  a.close()
  t.equal(logs.active(), 1)
  t.notOk(live!.closed)
  releaseB()
  b.close()
  t.equal(logs.active(), 0)
  await waitFor('the upstream request closed at the server', () => live!.closed)
})

t.test('an upstream that breaks off mid-stream: error, then complete, nothing thrown', async (t) => {
  script = (seen) => { seen.res.writeHead(200); seen.res.write(stamped(1)); setImmediate(() => seen.res.socket?.destroy()) }
  const opts: LogOptions = { tail: 10, follow: true, timestamps: false }
  const key = logs.keyFor(target, opts)
  const sub = logs.hub.subscribe(key)
  const release = logs.acquire(kc, key, target, opts)
  const events = await collect(sub)
  release()
  t.same(events.map((e) => e.type), ['log', 'error', 'complete'])
  t.same(events[1].data, { error: 'the log stream from the cluster broke off' })
})

t.test('a refused request: the Status message of a 400, generic words otherwise', async (t) => {
  for (const [status, body, expected] of [
    [400, JSON.stringify({ kind: 'Status', message: 'container "app" in pod "p" is waiting to start: ContainerCreating' }), 'the cluster cannot serve these logs: container "app" in pod "p" is waiting to start: ContainerCreating'],
    [403, '{}', 'the credentials may not read pod logs (403 Forbidden)'],
    [503, 'x'.repeat(200_000), 'the cluster answered 503 to the log request'],
  ] as const) {
    script = (seen) => { seen.res.writeHead(status, { 'content-type': 'application/json' }); seen.res.end(body) }
    const opts: LogOptions = { tail: 5, follow: false, timestamps: false }
    const key = logs.keyFor(target, opts)
    const sub = logs.hub.subscribe(key)
    logs.acquire(kc, key, target, opts)
    const events = await collect(sub)
    t.same(events.map((e) => [e.type, e.data]), [['error', { error: expected }], ['complete', {}]], String(status))
  }
})

t.test('a request nobody answers: error after the connect timeout', async (t) => {
  script = () => {}
  const quick = new PodLogStreams({ hub, bufferSize: 16, maxTail: 5000, maxLineBytes: 64, connectTimeoutMs: 100, log: { warn: () => {} } })
  const opts: LogOptions = { tail: 5, follow: true, timestamps: false }
  const key = quick.keyFor(target, { ...opts, tail: 6 })
  const sub = quick.hub.subscribe(key)
  quick.acquire(kc, key, target, opts)
  const events = await collect(sub)
  t.same(events.map((e) => e.data), [{ error: 'the cluster did not answer the log request in time' }, {}])
  t.equal(quick.active(), 0)
  await waitFor('the unanswered request closed', () => requests.at(-1)!.closed)
})
