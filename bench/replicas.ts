// npm run bench:replicas — several replicas of the service as real processes (test/helpers/replicas.ts: the
// embedded database over its socket, the simulator in this process, three `src/server.ts`), measured in one
// run, each figure printed with what it compares against:
//   1. idle database load per replica: the commands each replica sends while nothing happens, counted on the
//      wire by a proxy in front of the database (one per replica; OP_MSG headers read, bodies passed through
//      untouched), against the tail's nominal rate (1000 / EVENT_POLL_MS); plus CPU of every process;
//   2. event latency: a run's events, from the publishing replica's `at` stamp in the events collection to
//      the frame parsed by a subscriber on another replica, against a subscriber on the publishing replica;
//   3. GET /v1/api/workflows/:id throughput: the load on 3 replicas against the same load on replica 1 alone, in
//      alternating rounds (equally warm processes), and once more on the last replica left after the takeovers;
//   4. takeover: kill -9 of the lease holder → another replica holds the lease, and → it watches again,
//      against the bound LEASE_TTL_MS + one renewal period (TTL/3). Done twice (3 → 2 → 1 replicas).
// The machine has few cores (printed): load, subscribers and replicas share them, so latency and req/s are
// upper/lower bounds; compare the pairs printed side by side, which come from the same run.
//
// BENCH_IDLE_SECONDS (5), BENCH_RUNS (5), BENCH_SECONDS (5, per throughput measurement), BENCH_CONNECTIONS (20),
// BENCH_EVENT_POLL_MS (100, the default of EVENT_POLL_MS), BENCH_LEASE_TTL_MS (3000).
import net from 'node:net'
import os from 'node:os'
import { readFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
import autocannon from 'autocannon'
import { startReplicas, type Replica, type ReplicaHarness } from '../test/helpers/replicas.ts'
import { openStream, type SseStream } from '../test/streams/sse-client.ts'
import { waitFor } from '../test/kube-sim/test-helpers.ts'
import { shopGraph, TRIGGER } from '../test/runs/fixture.ts'

const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 5)
const RUNS = Number(process.env.BENCH_RUNS ?? 5)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20)
const EVENT_POLL_MS = Number(process.env.BENCH_EVENT_POLL_MS ?? 100)
const LEASE_TTL_MS = Number(process.env.BENCH_LEASE_TTL_MS ?? 3000)
const wallClock = () => performance.timeOrigin + performance.now()
const fmt = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : 'n/a')
const pct = (sorted: number[], p: number) => sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]! : NaN

// ---- wire counting proxy: one per replica, so each replica's commands are told apart ----
type Counts = Map<string, number>
/** The command name and its collection, from an OP_MSG's body section (kind 0); other opcodes by number. */
function commandOf(msg: Buffer): string {
  const opcode = msg.readInt32LE(12)
  if (opcode !== 2013) return `opcode ${opcode}`
  let pos = 20
  while (pos < msg.length) {
    const kind = msg[pos]
    if (kind === 1) { pos += 1 + msg.readInt32LE(pos + 1); continue }
    const doc = pos + 1
    const type = msg[doc + 4]
    const nameEnd = msg.indexOf(0, doc + 5)
    const name = msg.toString('utf8', doc + 5, nameEnd)
    if (type === 2) {
      const len = msg.readInt32LE(nameEnd + 1)
      return `${name} ${msg.toString('utf8', nameEnd + 5, nameEnd + 4 + len)}`
    }
    return name
  }
  return 'unknown'
}
async function countingProxy(socketPath: string, counts: Counts): Promise<{ uri: string; close(): void }> {
  const sockets = new Set<net.Socket>()
  const server = net.createServer((client) => {
    const upstream = net.connect(socketPath)
    sockets.add(client); sockets.add(upstream)
    let pending: Buffer = Buffer.alloc(0)
    client.on('data', (d: Buffer) => {
      pending = pending.length ? Buffer.concat([pending, d]) : d
      while (pending.length >= 16) {
        const len = pending.readInt32LE(0)
        if (pending.length < len) break
        const c = commandOf(pending.subarray(0, len))
        counts.set(c, (counts.get(c) ?? 0) + 1)
        pending = pending.subarray(len)
      }
    })
    client.pipe(upstream).pipe(client)
    const end = () => { client.destroy(); upstream.destroy() }
    client.on('error', end); upstream.on('error', end); client.on('close', end); upstream.on('close', end)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  const { port } = server.address() as net.AddressInfo
  return { uri: `mongodb://127.0.0.1:${port}/?directConnection=true`, close: () => { server.close(); for (const s of sockets) s.destroy() } }
}

/** utime + stime of a process, in ms (Linux /proc; CLK_TCK is 100 on the machines this runs on). */
function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch { return NaN }
}

const teardowns: Array<() => unknown> = []
const counts: Counts[] = []
const proxies: Array<{ close(): void }> = []
const loadAtStart = os.loadavg()
console.log(`bench:replicas — ${os.cpus().length} CPU(s), load average at start ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}; EVENT_POLL_MS ${EVENT_POLL_MS}, LEASE_TTL_MS ${LEASE_TTL_MS}`)
let h: ReplicaHarness
try {
  const started = performance.now()
  h = await startReplicas({ teardown: (fn) => { teardowns.push(fn) } }, {
    leaseTtlMs: LEASE_TTL_MS, eventPollMs: EVENT_POLL_MS,
    env: { RATE_LIMIT_MAX: '100000000', LOG_LEVEL: 'warn', RUN_READY_TIMEOUT_MS: '15000' },
    replicaDbUri: async (uri, index) => {
      const socketPath = decodeURIComponent(new URL(uri).hostname || uri.slice('mongodb://'.length).split('/')[0]!)
      counts[index] = new Map()
      const p = await countingProxy(socketPath, counts[index]!)
      proxies.push(p)
      return p.uri
    },
  })
  console.log(`harness up in ${fmt((performance.now() - started) / 1000)} s: embedded-db (pid ${h.dbPid}), simulator, ${h.replicas.length} replicas (pids ${h.replicas.map((r) => r.pid).join(', ')})`)
  await main(h)
} finally {
  for (const fn of teardowns.reverse()) await fn()
  for (const p of proxies) p.close()
}
process.exit(0)

async function idleLoad(h: ReplicaHarness, label: string): Promise<{ dbCpuPct: number }> {
  const live = h.replicas.filter((r) => r.alive)
  const before = live.map((r) => new Map(counts[r.index]))
  const cpuBefore = live.map((r) => cpuMs(r.pid))
  const dbBefore = cpuMs(h.dbPid)
  const t0 = performance.now()
  await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000))
  const elapsed = (performance.now() - t0) / 1000
  const dbCpuPct = (cpuMs(h.dbPid) - dbBefore) / 10 / elapsed
  console.log(`\n[idle load, ${label}] ${fmt(elapsed)} s with no request, run or subscriber; the tail's nominal rate is ${fmt(1000 / EVENT_POLL_MS)} reads/s per replica (single mode: 0)`)
  live.forEach((r, i) => {
    const now = counts[r.index]!
    const delta = [...now].map(([k, v]) => [k, v - (before[i]!.get(k) ?? 0)] as const).filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1])
    const total = delta.reduce((s, [, v]) => s + v, 0)
    console.log(`  replica ${r.index + 1}: ${fmt(total / elapsed)} commands/s (${delta.map(([k, v]) => `${k} ${fmt(v / elapsed)}/s`).join(', ') || 'none'}); CPU ${fmt((cpuMs(r.pid) - cpuBefore[i]!) / 10 / elapsed)} %`)
  })
  console.log(`  embedded database CPU: ${fmt(dbCpuPct)} % for ${live.length} replica(s)`)
  return { dbCpuPct }
}

async function throughput(h: ReplicaHarness, id: string, label: string, serving = h.replicas.filter((r) => r.alive)): Promise<number> {
  const live = serving
  const load = (duration: number) => autocannon({
    // autocannon spreads the connections over several URLs; its types only name one.
    url: live.map((r) => `${r.base}/v1/api/workflows/${id}`) as unknown as string, connections: CONNECTIONS - (CONNECTIONS % live.length), duration,
    headers: h.auth,
  })
  // Not counted: every replica's route compiled and optimised first, so a cold process does not weigh on one side.
  await load(2)
  const cpuBefore = live.map((r) => cpuMs(r.pid))
  const dbBefore = cpuMs(h.dbPid)
  const result = await load(SECONDS)
  const served = result.requests.total
  const replicaCpu = live.reduce((s, r, i) => s + cpuMs(r.pid) - cpuBefore[i]!, 0)
  const non2xx = result.non2xx + result.errors
  console.log(`  ${label}: ${fmt(result.requests.average, 0)} req/s (p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms; ${non2xx} non-2xx/errors); replicas' CPU ${fmt(replicaCpu * 1000 / Math.max(1, served), 0)} µs/request, database CPU ${fmt((cpuMs(h.dbPid) - dbBefore) * 1000 / Math.max(1, served), 0)} µs/request`)
  return result.requests.average
}

async function takeover(h: ReplicaHarness, ns: string, label: string): Promise<void> {
  const holder = await waitFor('a live replica to hold the lease', async () => (await h.leaseHolder(h.clusterId)).replica, 15_000, 20)
  const killedAt = performance.now()
  await holder.kill()
  const next = await waitFor('another replica to take the lease', async () => {
    const { replica } = await h.leaseHolder(h.clusterId)
    return replica && replica !== holder && replica
  }, 30_000, 10)
  const leased = performance.now() - killedAt
  // The dead holder's sockets close with it, so what watches the namespace now is the new holder.
  await waitFor('the new holder to watch the namespace', async () => (await h.watches()).some((w) => w.path.includes(`/namespaces/${ns}/`)), 30_000, 10)
  const watching = performance.now() - killedAt
  console.log(`  ${label}: replica ${holder.index + 1} killed → replica ${next.index + 1} holds the lease after ${fmt(leased, 0)} ms and watches after ${fmt(watching, 0)} ms (bound: TTL ${LEASE_TTL_MS} + renewal ${fmt(LEASE_TTL_MS / 3, 0)} = ${fmt(LEASE_TTL_MS * 4 / 3, 0)} ms)`)
}

async function main(h: ReplicaHarness): Promise<void> {
  const [r1, r2, r3] = h.replicas as [Replica, Replica, Replica]
  const ns = 'bench'
  const id = await h.workflow(r1, shopGraph({ namespace: ns }), 'bench')
  const idle3 = await idleLoad(h, '3 replicas')

  // ---- throughput: the load on replica 1 alone, then spread over all 3, alternately (processes equally warm) ----
  console.log(`\n[GET /v1/api/workflows/:id] autocannon from this process, ${CONNECTIONS} connections spread over the serving replicas, ${SECONDS} s per round, 1 and 3 alternately, twice (${os.cpus().length} cores shared by load generator, replicas, database)`)
  const one: number[] = []
  const three: number[] = []
  for (let round = 1; round <= 2; round++) {
    one.push(await throughput(h, id, `round ${round}, 1 replica serving (2 idle)`, [r1]))
    three.push(await throughput(h, id, `round ${round}, 3 replicas serving`, [r1, r2, r3]))
  }
  const rps3 = (three[0]! + three[1]!) / 2
  const rps1Early = (one[0]! + one[1]!) / 2
  console.log(`  3 replicas / 1 replica: ×${fmt(rps3 / rps1Early, 2)} (means of the rounds; on ${os.cpus().length} cores three processes compete with each other and the load generator)`)

  // ---- event latency ----
  const subs: Array<{ name: string; stream: SseStream; received: Map<number, number> }> = []
  for (const [name, r] of [['same replica (1)', r1], ['other replica (2)', r2], ['other replica (3)', r3]] as const) {
    const stream = await openStream(r.base, `/v1/api/workflows/${id}/status/stream`, h.auth)
    const received = new Map<number, number>()
    const seen = stream.events
    // Stamp each frame as it is parsed: wrap the array's push, which the client calls per event.
    const push = seen.push.bind(seen)
    seen.push = (...items) => { const now = wallClock(); for (const e of items) if (e.id !== null && e.type !== 'metadata') received.set(e.id, now); return push(...items) }
    subs.push({ name, stream, received })
    await stream.until('metadata', (e) => e.some((x) => x.type === 'metadata'), 15_000)
  }
  for (let i = 0; i < RUNS; i++) {
    const res = await h.api(r1, 'POST', `/v1/api/workflows/${id}/run`, { trigger_data: TRIGGER })
    if (res.status !== 202 && res.status !== 200) throw new Error(`run: ${res.status} ${JSON.stringify(res.body)}`)
    const runId = res.body.id as string
    for (const s of subs) await s.stream.until('complete', (e) => e.some((x) => x.type === 'complete' && x.data?.run_id === runId), 60_000)
  }
  const ids = [...new Set(subs.flatMap((s) => [...s.received.keys()]))]
  const docs = await h.db.collection<{ _id: number; at?: Date }>('events').find({ _id: { $in: ids } }, { projection: { at: 1 } }).toArray()
  const at = new Map(docs.map((d) => [d._id, d.at instanceof Date ? d.at.getTime() : NaN]))
  console.log(`\n[event latency] ${RUNS} runs on replica 1, ${ids.length} events; publish (the event's \`at\`, ms precision) → frame parsed by the subscriber`)
  if (docs.length === 0) console.log('  the events collection holds none of the ids streamed (shared event hub not in place): not measured')
  for (const s of subs) {
    const lat = [...s.received].map(([eid, t]) => t - (at.get(eid) ?? NaN)).filter(Number.isFinite).sort((a, b) => a - b)
    console.log(`  ${s.name}: p50 ${fmt(pct(lat, 0.5))} ms, p99 ${fmt(pct(lat, 0.99))} ms, max ${fmt(lat.at(-1) ?? NaN)} ms over ${lat.length} events`)
    s.stream.close()
  }

  // ---- takeovers 3 → 2 → 1, then throughput with 1 ----
  console.log(`\n[takeover after kill -9 of the lease holder] lease polled every 10 ms, watches every 10 ms`)
  await takeover(h, ns, '3 → 2 replicas')
  await takeover(h, ns, '2 → 1 replica')
  console.log('')
  const rps1 = await throughput(h, id, '1 replica left alive after the takeovers')
  console.log(`  against the 3-replica mean before: ×${fmt(rps3 / rps1, 2)}`)
  const idle1 = await idleLoad(h, '1 replica')
  console.log(`  database CPU added by each further idle replica: ${fmt((idle3.dbCpuPct - idle1.dbCpuPct) / 2, 2)} % (3 replicas ${fmt(idle3.dbCpuPct)} %, 1 replica ${fmt(idle1.dbCpuPct)} %)`)
  console.log(`\nload average at end ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`)
}
