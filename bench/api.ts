// npm run bench:api — throughput, latency and server CPU per request of the read API on the embedded
// database, each against a bare Fastify route returning the same workflow JSON, measured in the same run.
// Load comes from this process (autocannon); both servers run in one child process (bench/api-server.ts),
// which reports the CPU it spent in each measurement window. The machine may be shared, so CPU per request
// is the figure to compare across runs; req/s is only comparable against the baseline of the same run.
//
// BENCH_SECONDS (default 5) per measurement, BENCH_CONNECTIONS (20), BENCH_ROUNDS (3; medians reported),
// BENCH_ROUTES (comma-separated names below; default all; `-db` routes: the same app with its caches off), BENCH_LOG_LEVEL (server log level, default info),
// BENCH_CPU_PROF=<dir> (writes a V8 CPU profile of the server there, for Chrome DevTools or speedscope).
import { fork } from 'node:child_process'
import { loadavg } from 'node:os'
import autocannon from 'autocannon'
import { median, type Sample } from './stats.ts'

const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 20)
const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3))

interface Ready { appUrl: string; bareUrl: string; token: string; workflowId: string; logLevel: string; uncached: { url: string; token: string; workflowId: string } }
type Message = ({ type: 'ready' } & Ready) | { type: 'started' } | { type: 'stopped'; cpuMicros: number; served: number }

const loadAtStart = loadavg()
// stdout of the server (its log lines at `info`) goes to /dev/null: formatting and writing them is still
// paid for, nothing is kept.
const child = fork(new URL('./api-server.ts', import.meta.url).pathname, [], { execArgv: ['--import', 'tsx', ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [])], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`bench server exited (${code})`))))
function next<T extends Message['type']>(type: T): Promise<Extract<Message, { type: T }>> {
  return Promise.race([exited, new Promise<Extract<Message, { type: T }>>((resolve) => {
    const listener = (m: Message) => { if (m.type === type) { child.off('message', listener); resolve(m as Extract<Message, { type: T }>) } }
    child.on('message', listener)
  })])
}
const ready = await next('ready')
const auth = { authorization: `Bearer ${ready.token}` }
const api = `${ready.appUrl}/v1/api`

const allRoutes = [
  { name: 'bare', title: 'bare Fastify route (baseline)', url: `${ready.bareUrl}/bare`, headers: {} },
  { name: 'get', title: 'GET /workflows/:id', url: `${api}/workflows/${ready.workflowId}`, headers: auth },
  { name: 'list', title: 'GET /workflows?limit=20', url: `${api}/workflows?limit=20`, headers: auth },
  { name: 'versions', title: 'GET /workflows/:id/versions', url: `${api}/workflows/${ready.workflowId}/versions`, headers: auth },
  { name: 'stats', title: 'GET /dashboard/stats', url: `${api}/dashboard/stats`, headers: auth },
  { name: 'search', title: 'GET /search?q=workflow', url: `${api}/search?q=workflow`, headers: auth },
  // The same reads with the caches off (the app reaches its embedded server through MONGODB_URI).
  { name: 'get-db', title: 'GET /workflows/:id, no cache', url: `${ready.uncached.url}/v1/api/workflows/${ready.uncached.workflowId}`, headers: { authorization: `Bearer ${ready.uncached.token}` } },
  { name: 'list-db', title: 'GET /workflows?limit=20, no cache', url: `${ready.uncached.url}/v1/api/workflows?limit=20`, headers: { authorization: `Bearer ${ready.uncached.token}` } },
]
const chosen = (process.env.BENCH_ROUTES ?? '').split(',').map((s) => s.trim()).filter(Boolean)
const unknown = chosen.filter((n) => !allRoutes.some((r) => r.name === n))
if (unknown.length) throw new Error(`unknown BENCH_ROUTES ${unknown.join(', ')}; known: ${allRoutes.map((r) => r.name).join(', ')}`)
// The baseline is always measured: every figure is relative to it.
const routes = allRoutes.filter((r) => r.name === 'bare' || chosen.length === 0 || chosen.includes(r.name))

async function measure(route: typeof routes[number], duration: number): Promise<Sample> {
  child.send({ type: 'start' })
  await next('started')
  const result = await autocannon({ url: route.url, connections, duration, headers: route.headers })
  child.send({ type: 'stop' })
  const { cpuMicros, served } = await next('stopped')
  if (result.non2xx || result.errors) throw new Error(`${route.title}: ${result.non2xx} non-2xx replies, ${result.errors} errors`)
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, cpuMicros: cpuMicros / Math.max(1, served) }
}

// One short unrecorded pass warms the JIT and the caches so round 1 is not an outlier.
for (const route of routes) await measure(route, 1)
const samples = new Map<string, Sample[]>(routes.map((r) => [r.name, []]))
for (let round = 1; round <= rounds; round++) {
  for (const route of routes) {
    const s = await measure(route, seconds)
    samples.get(route.name)!.push(s)
    process.stderr.write(`round ${round}/${rounds} ${route.title}: ${s.rps.toFixed(0)} req/s, ${s.cpuMicros.toFixed(0)} µs CPU/req\n`)
  }
}
child.send({ type: 'close' })
const loadAtEnd = loadavg()

const result = routes.map((r) => ({ title: r.title, ...median(samples.get(r.name)!) }))
const base = result[0]
const fmtLoad = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ')
const out = process.stdout
out.write(`\nNode ${process.version}, ${connections} connections, ${seconds} s per measurement, median of ${rounds} rounds, server log level ${ready.logLevel}\n`)
out.write(`load average (1/5/15 min): start ${fmtLoad(loadAtStart)}, end ${fmtLoad(loadAtEnd)}\n`)
out.write(`${'route'.padEnd(34)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'CPU/req'.padStart(9)}  ${'req/s vs bare'.padStart(13)}  ${'CPU vs bare'.padStart(11)}\n`)
for (const r of result) {
  out.write(`${r.title.padEnd(34)} ${r.rps.toFixed(0).padStart(8)} ${String(r.p50).padStart(7)} ${String(r.p99).padStart(7)} ${`${r.cpuMicros.toFixed(0)} µs`.padStart(9)}  ${`${(r.rps / base.rps).toFixed(2)}x`.padStart(13)}  ${`${(r.cpuMicros / base.cpuMicros).toFixed(1)}x`.padStart(11)}\n`)
}
