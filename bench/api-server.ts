// The server side of bench/api.ts, run as its own process so the load generator does not share its event
// loop: the real app (embedded in-memory database, production log level `info` unless BENCH_LOG_LEVEL says
// otherwise) and a bare Fastify route as the baseline. It talks to the parent over IPC: the URLs once ready,
// then for every measurement window the CPU this process spent and the requests each server answered, so the
// parent can report CPU per request (more stable than req/s on a shared machine).
import Fastify from 'fastify'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config.ts'
import { startEmbeddedMongo } from '../src/embedded-mongo/index.ts'

const send = (message: unknown) => process.send!(message)
const logLevel = process.env.BENCH_LOG_LEVEL ?? 'info'

// NODE_ENV=test only makes the secrets ephemeral (nothing written to disk); the request path is production's.
const app = await buildApp(loadConfig({ NODE_ENV: 'test', EMBEDDED_DB: 'memory', LOG_LEVEL: logLevel, OPEN_SIGNUP: 'true' }))
await app.listen({ port: 0, host: '127.0.0.1' })
const appUrl = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
// The same app reaching the same kind of embedded server through MONGODB_URI: the app then cannot know it
// is the database's only client, so its read and list-page caches are off and every read goes to the
// database. Its routes measure the database path (what a cache miss costs) in the same run.
const uncachedDb = await startEmbeddedMongo({ storage: 'memory' })
const uncached = await buildApp(loadConfig({ NODE_ENV: 'test', MONGODB_URI: uncachedDb.uri, LOG_LEVEL: logLevel, OPEN_SIGNUP: 'true' }))
await uncached.listen({ port: 0, host: '127.0.0.1' })
const uncachedUrl = `http://127.0.0.1:${(uncached.server.address() as { port: number }).port}`

// A realistic canvas: 12 nodes and 11 edges per workflow, 40 workflows; the last one has 10 versions.
const nodes = Array.from({ length: 12 }, (_, i) => ({ id: `n${i}`, type: i % 2 ? 'service' : 'deployment', position: { x: i * 10, y: i * 5 }, data: { name: `node-${i}`, image: 'nginx:1.27', replicas: 2, port: 80 } }))
const edges = Array.from({ length: 11 }, (_, i) => ({ id: `e${i}`, source: `n${i}`, target: `n${i + 1}`, sourceHandle: null, targetHandle: null }))
async function seed(url: string): Promise<{ token: string; workflowId: string }> {
  const post = async (path: string, body: unknown, token?: string) => {
    const res = await fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) }, body: JSON.stringify(body) })
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`)
    return res.json() as Promise<Record<string, any>>
  }
  const { token } = await post('/v1/api/auth/register', { email: 'bench@example.com', password: 'bench-password-1', name: 'Bench' })
  let workflowId = ''
  for (let i = 0; i < 40; i++) {
    const wf = await post('/v1/api/workflows', { name: `workflow ${i}`, description: 'benchmark' }, token)
    await post(`/v1/api/workflows/${wf.id}/save`, { nodes, edges }, token)
    workflowId = wf.id
  }
  for (let v = 0; v < 10; v++) await post(`/v1/api/workflows/${workflowId}/versions`, { name: `v${v}` }, token)
  return { token, workflowId }
}
const { token, workflowId } = await seed(appUrl)
const db = await seed(uncachedUrl)
const sample = await (await fetch(`${appUrl}/v1/api/workflows/${workflowId}`, { headers: { authorization: `Bearer ${token}` } })).json()

const bare = Fastify({ logger: false })
bare.get('/bare', async () => sample)
await bare.listen({ port: 0, host: '127.0.0.1' })
const bareUrl = `http://127.0.0.1:${(bare.server.address() as { port: number }).port}`

// Counting on the HTTP server's own event adds nothing to the route's code path.
let served = 0
app.server.on('request', () => { served++ })
uncached.server.on('request', () => { served++ })
bare.server.on('request', () => { served++ })

let window: { cpu: NodeJS.CpuUsage; served: number } | undefined
process.on('message', async (message: { type: string }) => {
  if (message.type === 'start') {
    window = { cpu: process.cpuUsage(), served }
    send({ type: 'started' })
  } else if (message.type === 'stop' && window) {
    const cpu = process.cpuUsage(window.cpu)
    send({ type: 'stopped', cpuMicros: cpu.user + cpu.system, served: served - window.served })
    window = undefined
  } else if (message.type === 'close') {
    await Promise.all([app.close(), bare.close(), uncached.close()])
    await uncachedDb.close()
    process.exit(0)
  }
})
send({ type: 'ready', appUrl, bareUrl, token, workflowId, logLevel, uncached: { url: uncachedUrl, token: db.token, workflowId: db.workflowId } })
