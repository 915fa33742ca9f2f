// The server side of bench/api.ts, run as its own process so the load generator does not share its event
// loop: the real app (embedded in-memory database, logs off) and a bare Fastify route as the baseline.
import Fastify from 'fastify'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config.ts'

const app = await buildApp(loadConfig({ NODE_ENV: 'test', EMBEDDED_DB: 'memory', LOG_LEVEL: 'silent', OPEN_SIGNUP: 'true' }))
await app.listen({ port: 0, host: '127.0.0.1' })
const appUrl = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`

const post = async (path: string, body: unknown, token?: string) => {
  const res = await fetch(appUrl + path, { method: 'POST', headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) }, body: JSON.stringify(body) })
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`)
  return res.json() as Promise<Record<string, any>>
}
const { token } = await post('/v1/api/auth/register', { email: 'bench@example.com', password: 'bench-password-1', name: 'Bench' })
// A realistic canvas: 12 nodes and 11 edges per workflow, 40 workflows.
const nodes = Array.from({ length: 12 }, (_, i) => ({ id: `n${i}`, type: i % 2 ? 'service' : 'deployment', position: { x: i * 10, y: i * 5 }, data: { name: `node-${i}`, image: 'nginx:1.27', replicas: 2, port: 80 } }))
const edges = Array.from({ length: 11 }, (_, i) => ({ id: `e${i}`, source: `n${i}`, target: `n${i + 1}`, sourceHandle: null, targetHandle: null }))
let workflowId = ''
for (let i = 0; i < 40; i++) {
  const wf = await post('/v1/api/workflows', { name: `workflow ${i}`, description: 'benchmark' }, token)
  await post(`/v1/api/workflows/${wf.id}/save`, { nodes, edges }, token)
  workflowId = wf.id
}
const sample = await (await fetch(`${appUrl}/v1/api/workflows/${workflowId}`, { headers: { authorization: `Bearer ${token}` } })).json()

const bare = Fastify({ logger: false })
bare.get('/bare', async () => sample)
await bare.listen({ port: 0, host: '127.0.0.1' })
const bareUrl = `http://127.0.0.1:${(bare.server.address() as { port: number }).port}`

process.stdout.write(JSON.stringify({ appUrl, bareUrl, token, workflowId }) + '\n')
process.on('SIGTERM', async () => { await Promise.all([app.close(), bare.close()]); process.exit(0) })
