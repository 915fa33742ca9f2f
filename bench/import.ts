// `npm run bench:import`: analysis time and peak memory for a generated compose file with 200 services
// (depends_on chains, ports, environment with secrets, named volumes, healthchecks). Goal: ≤ 1 s.
// The layout is timed on its own too (same nodes and edges, same rounds), so the share of the analysis it
// takes is visible.
import { resourceUsage } from 'node:process'
import { analyzeCompose, layoutGraph } from '../src/services/import/index.ts'

const SERVICES = 200
const ROUNDS = 7
const GOAL_MS = 1000

function composeFile(n: number): string {
  const lines = ['name: bench', 'services:']
  for (let i = 0; i < n; i++) {
    lines.push(
      `  svc-${i}:`,
      `    image: registry.example.com/team/svc-${i}:\${TAG:-1.0.${i}}`,
      `    ports: ["${10000 + i}:8080"]`,
      '    expose: ["9090"]',
      '    environment:',
      `      SERVICE_INDEX: "${i}"`,
      '      LOG_LEVEL: ${LOG_LEVEL:-info}',
      `      UPSTREAM: http://svc-${Math.max(0, i - 1)}:8080`,
      '      DB_PASSWORD: ${DB_PASSWORD}',
      `    command: ["serve", "--port", "8080", "--shard", "${i % 8}"]`,
      '    healthcheck:',
      '      test: ["CMD", "wget", "-qO-", "http://localhost:8080/health"]',
      '      interval: 10s',
      '    deploy:',
      '      replicas: 2',
      '      resources: {limits: {cpus: "0.25", memory: 256M}}',
    )
    // Chains of ten: each service depends on the one before it in its chain.
    if (i % 10 !== 0) lines.push('    depends_on:', `      svc-${i - 1}:`, '        condition: service_healthy')
    if (i % 4 === 0) lines.push('    volumes:', `      - data-${i}:/var/lib/data`)
  }
  lines.push('volumes:')
  for (let i = 0; i < n; i += 4) lines.push(`  data-${i}: {}`)
  return `${lines.join('\n')}\n`
}

const content = composeFile(SERVICES)
const options = { env: { DB_PASSWORD: 'bench-secret', TAG: '2.0.0' }, ingress: true }
const times: number[] = []
const layoutTimes: number[] = []
let nodes = 0
let edges = 0
for (let r = 0; r < ROUNDS; r++) {
  const start = performance.now()
  const a = analyzeCompose(content, options)
  times.push(performance.now() - start)
  nodes = a.nodes.length
  edges = a.edges.length
  const layoutStart = performance.now()
  layoutGraph(a.nodes, a.edges)
  layoutTimes.push(performance.now() - layoutStart)
}
times.sort((a, b) => a - b)
layoutTimes.sort((a, b) => a - b)
const median = times[Math.floor(times.length / 2)]
const layoutMedian = layoutTimes[Math.floor(layoutTimes.length / 2)]
const maxRssMiB = resourceUsage().maxRSS / 1024
const heapMiB = process.memoryUsage().heapUsed / 1024 / 1024
console.log(`compose file: ${SERVICES} services, ${(Buffer.byteLength(content) / 1024).toFixed(0)} KiB → ${nodes} nodes, ${edges} edges`)
console.log(`analyzeCompose: median ${median.toFixed(1)} ms over ${ROUNDS} rounds (first ${times.length ? Math.max(...times).toFixed(1) : '-'} ms worst, ${times[0].toFixed(1)} ms best)`)
console.log(`  of which layoutGraph: median ${layoutMedian.toFixed(1)} ms (${((layoutMedian / median) * 100).toFixed(1)} % of the analysis)`)
console.log(`peak memory: maxRSS ${maxRssMiB.toFixed(0)} MiB, heap in use ${heapMiB.toFixed(0)} MiB`)
console.log(`goal ≤ ${GOAL_MS} ms: ${median <= GOAL_MS ? 'met' : 'NOT met'}`)
if (median > GOAL_MS) process.exitCode = 1
