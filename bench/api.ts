// npm run bench:api — requests per second of authenticated GET /workflows/:id and GET /workflows?limit=20
// against a bare Fastify route returning the same workflow JSON, measured in the same run on this machine.
// Load comes from this process (autocannon); the servers run in a child process.
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import autocannon from 'autocannon'

const seconds = Number(process.env.BENCH_SECONDS ?? 10)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 20)

const child = spawn(process.execPath, ['--import', 'tsx', new URL('./api-server.ts', import.meta.url).pathname], { stdio: ['ignore', 'pipe', 'inherit'] })
const first = await new Promise<string>((resolve, reject) => {
  createInterface({ input: child.stdout }).once('line', resolve)
  child.once('exit', (code) => reject(new Error(`bench server exited (${code})`)))
})
const { appUrl, bareUrl, token, workflowId } = JSON.parse(first) as Record<string, string>

async function measure(title: string, url: string, headers: Record<string, string> = {}) {
  const result = await autocannon({ url, connections, duration: seconds, headers })
  if (result.non2xx || result.errors) throw new Error(`${title}: ${result.non2xx} non-2xx replies, ${result.errors} errors`)
  return { title, rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 }
}

const auth = { authorization: `Bearer ${token}` }
const rows = [
  await measure('bare Fastify route (baseline)', `${bareUrl}/bare`),
  await measure('GET /v1/api/workflows/:id', `${appUrl}/v1/api/workflows/${workflowId}`, auth),
  await measure('GET /v1/api/workflows?limit=20', `${appUrl}/v1/api/workflows?limit=20`, auth),
]
child.kill('SIGTERM')

const baseline = rows[0].rps
process.stdout.write(`\n${connections} connections, ${seconds} s each, Node ${process.version}\n`)
process.stdout.write(`${'route'.padEnd(34)} ${'req/s'.padStart(9)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)}  vs baseline\n`)
for (const r of rows) {
  process.stdout.write(`${r.title.padEnd(34)} ${r.rps.toFixed(0).padStart(9)} ${String(r.p50).padStart(7)} ${String(r.p99).padStart(7)}  ${(r.rps / baseline).toFixed(2)}x\n`)
}
