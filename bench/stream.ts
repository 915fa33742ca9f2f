// npm run bench:stream — SSE fan-out: BENCH_SUBSCRIBERS (10,000) clients on one stream key over real
// sockets, BENCH_EVENTS (100) events published one every BENCH_INTERVAL_MS (100 ms); prints p50/p99
// delivery latency (publish call → the frame parsed by the client) and server memory per subscriber,
// against the goals (p99 ≤ 200 ms, ≤ 16 KB per subscriber).
//
// The server is this file run as a child process (`server` argument): a bare Fastify with one route that
// serves the in-process hub through serveStream (src/events/sse.ts), exactly as the stream routes do minus
// authentication and the snapshot read, so the figures are those of the hub, the framing and Node's
// sockets. The clients are raw TCP sockets in this process, which parses every frame: on a shared 2-core
// machine the latency includes the clients' own queueing, so it is an upper bound. Timestamps are
// `performance.timeOrigin + performance.now()`, comparable across the two processes.
//
// BENCH_SUBSCRIBERS, BENCH_EVENTS, BENCH_INTERVAL_MS as above; BENCH_CPU_PROF=<dir> writes a V8 CPU profile
// of the server there.
//
// Then the shared-mode figure (API.md §11), in the same run: publish → subscriber latency in one process,
// memory hub against the database hub (src/events/db-stream-hub.ts) on the embedded database served over
// TCP by a child process (`npm run embedded-db`'s server, in memory): the own replica's delivery (an insert
// and one tail read) and another replica's (the tail's poll period). BENCH_SHARED_EVENTS (200) events one
// every BENCH_SHARED_INTERVAL_MS (25 ms) to BENCH_SHARED_SUBSCRIBERS (100) subscribers, EVENT_POLL_MS
// (100); and the tail's query rate per replica when nothing happens (BENCH_IDLE_S, 3 s).
import { fork } from 'node:child_process'
import net from 'node:net'
import { performance } from 'node:perf_hooks'
import { loadavg } from 'node:os'

const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 10_000)
const EVENTS = Number(process.env.BENCH_EVENTS ?? 100)
const INTERVAL_MS = Number(process.env.BENCH_INTERVAL_MS ?? 100)
const CONNECT_BATCH = 500
const KEY = 'workflow:bench'
const wallClock = () => performance.timeOrigin + performance.now()

interface Memory { heap: number; external: number; rss: number }
type ToServer = { type: 'memory' } | { type: 'publish'; count: number; intervalMs: number } | { type: 'close' }
type FromServer =
  | { type: 'ready'; port: number }
  | { type: 'memory'; memory: Memory; subscribers: number }
  | { type: 'published'; publishMs: number[]; fanoutMs: number[]; cpuMs: number[] }

if (process.argv[2] === 'server') await server()
else if (process.argv[2] === 'database') await database()
else {
  if (process.env.BENCH_SHARED_ONLY !== '1') await main()
  await shared()
}

async function server(): Promise<void> {
  const { default: Fastify } = await import('fastify')
  const { MemoryStreamHub } = await import('../src/events/stream-hub.ts')
  const { serveStream } = await import('../src/events/sse.ts')
  let dropWarnings = 0
  const hub = new MemoryStreamHub({ log: { warn: () => { dropWarnings++ } } })
  const app = Fastify({ logger: false })
  app.get('/stream', (req, reply) => serveStream(req, reply, {
    hub, key: KEY, heartbeatMs: 15_000,
    metadata: async () => ({ id: 'bench', name: 'bench', nodes: [] }),
  }))
  await app.listen({ host: '127.0.0.1', port: 0 })
  const send = (m: FromServer) => process.send!(m)
  const gc = (globalThis as { gc?: () => void }).gc
  const memory = (): Memory => {
    gc?.(); gc?.()
    const m = process.memoryUsage()
    return { heap: m.heapUsed, external: m.external, rss: m.rss }
  }
  process.on('message', async (m: ToServer) => {
    if (m.type === 'memory') send({ type: 'memory', memory: memory(), subscribers: hub.subscriberCount(KEY) })
    else if (m.type === 'publish') {
      const publishMs: number[] = []
      const fanoutMs: number[] = []
      const cpuMs: number[] = []
      for (let seq = 0; seq < m.count; seq++) {
        const started = performance.now()
        const cpu = process.cpuUsage()
        // A node_update as the workflow stream carries it; `t` is when it was published.
        hub.publish(KEY, 'node_update', { seq, t: wallClock(), node_id: 'n-api', kind: 'Deployment', status: { state: 'running', message: '2/2 replicas ready', replicas: 2, readyReplicas: 2 } })
        publishMs.push(performance.now() - started)
        // Each subscriber's writer runs as a microtask of the publish: by the next macrotask every frame
        // has been handed to its socket.
        await new Promise((r) => setImmediate(r))
        fanoutMs.push(performance.now() - started)
        const used = process.cpuUsage(cpu)
        cpuMs.push((used.user + used.system) / 1000)
        await new Promise((r) => setTimeout(r, m.intervalMs))
      }
      if (dropWarnings) process.stderr.write(`server: ${dropWarnings} drop warnings\n`)
      send({ type: 'published', publishMs, fanoutMs, cpuMs })
    } else if (m.type === 'close') {
      hub.close()
      await app.close()
      process.exit(0)
    }
  })
  send({ type: 'ready', port: (app.server.address() as net.AddressInfo).port })
}

async function main(): Promise<void> {
  const child = fork(new URL(import.meta.url).pathname, ['server'], { execArgv: ['--import', 'tsx', '--expose-gc', ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [])], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`bench server exited (${code})`))))
  const next = <T extends FromServer['type']>(type: T): Promise<Extract<FromServer, { type: T }>> => Promise.race([exited, new Promise<Extract<FromServer, { type: T }>>((resolve) => {
    const listener = (m: FromServer) => { if (m.type === type) { child.off('message', listener); resolve(m as Extract<FromServer, { type: T }>) } }
    child.on('message', listener)
  })])
  const ask = <T extends FromServer['type']>(m: ToServer, type: T) => { const reply = next(type); child.send(m); return reply }
  const loadAtStart = loadavg()
  const { port } = await next('ready')

  const latencies = new Float64Array(SUBSCRIBERS * EVENTS)
  let received = 0
  const FRAME = /"seq":(\d+),"t":([\d.]+)/g
  const sockets: net.Socket[] = []

  // Warm the server (JIT, first-request paths) with a few streams before the baseline.
  const warm = await Promise.all(Array.from({ length: 20 }, () => connect()))
  for (const s of warm) s.destroy()
  await waitFor(async () => (await ask({ type: 'memory' }, 'memory')).subscribers === 0)
  const before = (await ask({ type: 'memory' }, 'memory')).memory

  const connectStarted = performance.now()
  for (let i = 0; i < SUBSCRIBERS; i += CONNECT_BATCH) {
    const batch = await Promise.all(Array.from({ length: Math.min(CONNECT_BATCH, SUBSCRIBERS - i) }, () => connect()))
    sockets.push(...batch)
  }
  const connectMs = performance.now() - connectStarted
  const connected = await ask({ type: 'memory' }, 'memory')
  if (connected.subscribers !== SUBSCRIBERS) throw new Error(`only ${connected.subscribers} of ${SUBSCRIBERS} subscribed`)
  const after = connected.memory
  process.stderr.write(`${SUBSCRIBERS} subscribers connected in ${(connectMs / 1000).toFixed(1)} s; publishing ${EVENTS} events, one every ${INTERVAL_MS} ms\n`)

  const { publishMs, fanoutMs, cpuMs } = await ask({ type: 'publish', count: EVENTS, intervalMs: INTERVAL_MS }, 'published')
  await waitFor(() => received === SUBSCRIBERS * EVENTS, 10_000).catch(() => undefined)
  for (const s of sockets) s.destroy()
  child.send({ type: 'close' } satisfies ToServer)
  const loadAtEnd = loadavg()

  const got = latencies.subarray(0, received).sort()
  const pct = (p: number) => got.length ? got[Math.min(got.length - 1, Math.floor((p / 100) * got.length))] : NaN
  const perSub = (bytes: number) => bytes / SUBSCRIBERS / 1024
  const heapKb = perSub(after.heap - before.heap + after.external - before.external)
  const rssKb = perSub(after.rss - before.rss)
  const p99 = pct(99)
  const meanPublish = publishMs.reduce((a, b) => a + b, 0) / publishMs.length
  const out = process.stdout
  out.write(`\nSSE fan-out: ${SUBSCRIBERS} subscribers on one key over real sockets (Fastify + serveStream + in-process hub, one child process)\n`)
  out.write(`events: ${EVENTS} published, one every ${INTERVAL_MS} ms; delivered ${received} of ${SUBSCRIBERS * EVENTS} (${SUBSCRIBERS * EVENTS - received} dropped or late)\n`)
  out.write(`delivery latency: p50 ${pct(50).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${got.length ? got[got.length - 1].toFixed(1) : 'n/a'} ms   goal p99 <= 200 ms: ${p99 <= 200 ? 'met' : 'MISSED'}\n`)
  const sortedFanout = [...fanoutMs].sort((a, b) => a - b)
  out.write(`server side: publish() ${meanPublish.toFixed(1)} ms mean; publish → every frame handed to its socket: p50 ${sortedFanout[sortedFanout.length >> 1].toFixed(1)} ms, max ${sortedFanout.at(-1)!.toFixed(1)} ms\n`)
  const cpuPerEvent = [...cpuMs].sort((a, b) => a - b)[cpuMs.length >> 1]
  out.write(`server CPU per event fanned out: ${cpuPerEvent.toFixed(1)} ms (p50), ${(cpuPerEvent * 1000 / SUBSCRIBERS).toFixed(1)} µs per subscriber: the fan-out time on an unshared core\n`)
  out.write(`server memory per subscriber: ${heapKb.toFixed(1)} KB heap+external, ${rssKb.toFixed(1)} KB RSS   goal <= 16 KB: ${Math.max(heapKb, rssKb) <= 16 ? 'met' : 'MISSED'}\n`)
  out.write(`load average: ${loadAtStart.map((x) => x.toFixed(2)).join(' ')} at start, ${loadAtEnd.map((x) => x.toFixed(2)).join(' ')} at end (shared machine: latency includes the clients' own queueing)\n`)

  /** One subscriber: a raw HTTP/1.1 request; resolves once its `metadata` frame arrived. */
  function connect(): Promise<net.Socket> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: '127.0.0.1', port })
      let pending = ''
      let open = false
      socket.setEncoding('utf8')
      socket.once('error', reject)
      socket.on('connect', () => socket.write('GET /stream HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n\r\n'))
      socket.on('data', (chunk: string) => {
        const now = wallClock()
        pending += chunk
        const end = pending.lastIndexOf('\n\n')
        if (end < 0) return
        const complete = pending.slice(0, end)
        pending = pending.slice(end + 2)
        if (!open && complete.includes('event: metadata')) { open = true; resolve(socket) }
        for (const m of complete.matchAll(FRAME)) latencies[received++] = now - Number(m[2])
      })
    })
  }
}

/** The embedded database alone in this child process, over TCP on loopback, as the replicas' shared MongoDB. */
async function database(): Promise<void> {
  const { startEmbeddedMongo } = await import('../src/embedded-mongo/index.ts')
  const db = await startEmbeddedMongo({ storage: 'memory', tcp: { host: '127.0.0.1', port: 0 } })
  process.send!({ type: 'ready', uri: db.uri })
  process.on('message', async () => { await db.close(); process.exit(0) })
}

async function shared(): Promise<void> {
  const { MongoClient } = await import('mongodb')
  const { MemoryStreamHub } = await import('../src/events/stream-hub.ts')
  const { DatabaseStreamHub } = await import('../src/events/db-stream-hub.ts')
  const { eventLogIndexes } = await import('../src/replicas/event-log.ts')
  const count = Number(process.env.BENCH_SHARED_EVENTS ?? 200)
  const intervalMs = Number(process.env.BENCH_SHARED_INTERVAL_MS ?? 25)
  const subscribers = Number(process.env.BENCH_SHARED_SUBSCRIBERS ?? 100)
  const pollMs = Number(process.env.EVENT_POLL_MS ?? 100)
  const idleS = Number(process.env.BENCH_IDLE_S ?? 3)

  const child = fork(new URL(import.meta.url).pathname, ['database'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const { uri } = await new Promise<{ uri: string }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { uri: string }))
    child.once('exit', (code) => reject(new Error(`database child exited (${code})`)))
  })
  const client = await MongoClient.connect(uri)
  const db = client.db('bench_stream')
  await eventLogIndexes(db)

  type Hub = { publish(k: string, t: string, d: unknown): void; subscribe(k: string): AsyncIterable<{ data: unknown }> & { close(): void } }
  /** Latencies (ms) from publish to each subscriber of `to` having the event. */
  async function measure(from: Hub, to: Hub, key: string): Promise<number[]> {
    const got: number[] = []
    const subs = Array.from({ length: subscribers }, () => to.subscribe(key))
    const readers = subs.map(async (sub) => {
      let n = 0
      for await (const e of sub) {
        got.push(performance.now() - (e.data as { t: number }).t)
        if (++n === count) break
      }
    })
    for (let i = 0; i < count; i++) {
      from.publish(key, 'node_update', { seq: i, t: performance.now(), node_id: 'n-api', status: { state: 'running' } })
      await new Promise((r) => setTimeout(r, intervalMs))
    }
    await Promise.race([Promise.all(readers), new Promise((r) => setTimeout(r, 5_000))])
    for (const s of subs) s.close()
    return got.sort((a, b) => a - b)
  }
  const pct = (xs: number[], p: number) => xs.length ? xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] : NaN
  const line = (name: string, xs: number[]) =>
    `${name.padEnd(38)} p50 ${pct(xs, 50).toFixed(2).padStart(7)} ms   p99 ${pct(xs, 99).toFixed(2).padStart(7)} ms   max ${(xs.at(-1) ?? NaN).toFixed(2).padStart(7)} ms   delivered ${xs.length} of ${count * subscribers}\n`

  // The database's round trip here, for scale: an own event costs two (ids, insert), or three with a tail read.
  const rtt: number[] = []
  for (let i = 0; i < 200; i++) {
    const started = performance.now()
    await db.collection<{ _id: number }>('events').find({ _id: { $gt: 1e12 } }).limit(1).toArray()
    rtt.push(performance.now() - started)
  }
  rtt.sort((x, y) => x - y)

  const memory = new MemoryStreamHub()
  const a = new DatabaseStreamHub({ db, origin: 'bench-a', pollMs })
  const b = new DatabaseStreamHub({ db, origin: 'bench-b', pollMs })
  await a.start()
  await b.start()
  const mem = await measure(memory, memory, 'workflow:mem')
  const own = await measure(a, a, 'workflow:own')
  const cross = await measure(a, b, 'workflow:cross')

  // Idle: nothing published; what each replica's tail costs the database.
  const polls = [a.stats.polls, b.stats.polls]
  const idleStarted = performance.now()
  await new Promise((r) => setTimeout(r, idleS * 1000))
  const idleSeconds = (performance.now() - idleStarted) / 1000
  const rates = [a.stats.polls - polls[0], b.stats.polls - polls[1]].map((n) => n / idleSeconds)

  await a.shutdown(1000)
  await b.shutdown(1000)
  memory.close()
  await client.close()
  child.send('close')

  const out = process.stdout
  out.write(`\nShared mode: publish → subscriber latency in one process, ${subscribers} subscribers, ${count} events one every ${intervalMs} ms, EVENT_POLL_MS ${pollMs}, embedded database over TCP in a child process\n`)
  out.write(`database round trip (a find): p50 ${pct(rtt, 50).toFixed(2)} ms, p99 ${pct(rtt, 99).toFixed(2)} ms\n`)
  out.write(line('memory hub (single mode)', mem))
  out.write(line('database hub, same replica', own))
  out.write(line('database hub, another replica', cross))
  out.write(`tail queries per replica while idle: ${rates.map((r) => r.toFixed(1)).join(', ')} per second (1000 / EVENT_POLL_MS = ${(1000 / pollMs).toFixed(1)})\n`)
  out.write(`tail reads held at a missing id: ${a.stats.held + b.stats.held}; skipped ids: ${a.stats.skippedIds + b.stats.skippedIds}; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}\n`)
}

async function waitFor(cond: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error('timed out')
    await new Promise((r) => setTimeout(r, 20))
  }
}
