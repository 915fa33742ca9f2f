// npm run bench:deploy — a 100-node workflow of mixed types applied to the simulated cluster: wall time and API
// requests of the first run and of a no-change re-run, against the goals (first ≤ 2 s, re-run ≤ 1 s).
// Measured twice: through the real app (`POST /v1/api/workflows/:id/run`, embedded in-memory database, until the
// run record is finished — which includes waiting for the workloads to become ready), and the apply engine alone
// (renderWorkflow + deploy()). The simulator runs in a child process, as a cluster would, on its own CPU.
//
// BENCH_ROUNDS (default 3): fresh namespaces per round, medians reported. BENCH_GROUPS (10): groups of 10 nodes.
// BENCH_VIA: "api", "engine" or "both" (default).
import { fork } from 'node:child_process'
import { loadavg } from 'node:os'
import { performance } from 'node:perf_hooks'

interface SimInfo { kubeconfig: string; url: string; token: string; caPem: string }
type ChildMessage = ({ type: 'ready' } & SimInfo) | { type: 'count'; requests: number }

if (process.env.BENCH_DEPLOY_ROLE === 'cluster') {
  const { startKubeSim } = await import('../test/kube-sim/index.ts')
  const sim = await startKubeSim()
  process.on('message', (m: { type: string }) => {
    if (m.type === 'count') process.send!({ type: 'count', requests: sim.requestCount() } satisfies ChildMessage)
    if (m.type === 'stop') void sim.close().then(() => process.exit(0))
  })
  process.send!({ type: 'ready', kubeconfig: sim.kubeconfigYaml(), url: sim.url, token: sim.identities.admin.token, caPem: sim.caPem } satisfies ChildMessage)
} else {
  await main()
}

/** Ten nodes wired like an application: a deployment with its config, secret, storage, identity, service,
 * ingress, autoscaler, disruption budget and network policy. */
function group(g: number, ns: string) {
  const id = (t: string) => `g${g}-${t}`
  const name = (t: string) => `app${g}-${t}`
  const nodes = [
    { id: id('deploy'), type: 'deployment', data: { name: name('web'), namespace: ns, image: `registry.example/app${g}:1.0`, port: 8080, env: [{ name: 'MODE', value: 'prod' }], resources: { requests: { cpu: '100m', memory: '64Mi' } } } },
    { id: id('svc'), type: 'service', data: { name: name('svc'), namespace: ns, serviceType: 'ClusterIP', port: 80, targetPort: 8080 } },
    { id: id('cm'), type: 'configmap', data: { name: name('config'), namespace: ns, data: { LOG_LEVEL: 'info', 'app.yaml': `group: ${g}\n` } } },
    { id: id('secret'), type: 'secret', data: { name: name('secret'), namespace: ns, secretType: 'Opaque', keys: ['TOKEN'] } },
    { id: id('pvc'), type: 'persistentvolumeclaim', data: { name: name('data'), namespace: ns, storage: '1Gi', accessModes: ['ReadWriteOnce'], mountPath: '/data' } },
    { id: id('sa'), type: 'serviceaccount', data: { name: name('sa'), namespace: ns } },
    { id: id('ing'), type: 'ingress', data: { name: name('ing'), namespace: ns, host: `app${g}.example.com`, paths: [{ path: '/', pathType: 'Prefix', serviceName: name('svc'), servicePort: 80 }] } },
    { id: id('hpa'), type: 'hpa', data: { name: name('hpa'), namespace: ns, minReplicas: 1, maxReplicas: 4, targetCPUUtilization: 80 } },
    { id: id('pdb'), type: 'poddisruptionbudget', data: { name: name('pdb'), namespace: ns, minAvailable: 1 } },
    g % 2 === 0
      ? { id: id('job'), type: 'job', data: { name: name('migrate'), namespace: ns, image: `registry.example/app${g}-migrate:1.0`, restartPolicy: 'Never', backoffLimit: 1 } }
      : { id: id('np'), type: 'networkpolicy', data: { name: name('np'), namespace: ns, policyTypes: ['Ingress'] } },
  ]
  const edges = [['deploy', 'svc'], ['cm', 'deploy'], ['secret', 'deploy'], ['pvc', 'deploy'], ['sa', 'deploy'], ['svc', 'ing'], ['deploy', 'hpa'], ['deploy', 'pdb']]
    .map(([s, t]) => ({ id: `${id(s)}-${id(t)}`, source: id(s), target: id(t) }))
  if (g % 2 === 1) edges.push({ id: `${id('deploy')}-${id('np')}`, source: id('deploy'), target: id('np') })
  return { nodes, edges }
}

function mid(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const m = sorted.length >> 1
  return sorted.length % 2 ? sorted[m] : (sorted[m - 1] + sorted[m]) / 2
}

interface Sample { objects: number; firstMs: number; firstReq: number; againMs: number; againReq: number }
interface Graph { nodes: Array<{ id: string; type: string; data: Record<string, unknown> }>; edges: Array<{ id: string; source: string; target: string }> }
/** One run: its wall time, the objects it reports, and whether every object was left unchanged. */
type Runner = (graph: Graph, secrets: Record<string, Record<string, string>>, ns: string) => Promise<{ objects: number; unchanged: boolean }>

function graphFor(groups: number, ns: string): { graph: Graph; secrets: Record<string, Record<string, string>> } {
  const parts = Array.from({ length: groups }, (_, g) => group(g, ns))
  const graph = { nodes: parts.flatMap((p) => p.nodes), edges: parts.flatMap((p) => p.edges) }
  const secrets = Object.fromEntries(graph.nodes.filter((n) => n.type === 'secret').map((n) => [n.id, { TOKEN: `t-${n.id}` }]))
  return { graph, secrets }
}

async function engineRunner(info: SimInfo): Promise<Runner> {
  const { KubeConfig } = await import('@kubernetes/client-node')
  const { renderWorkflow } = await import('../src/manifests/index.ts')
  const { deploy } = await import('../src/kube/deploy.ts')
  const kc = new KubeConfig()
  kc.loadFromString(info.kubeconfig)
  return async (graph, secrets, ns) => {
    const workflowId = `engine-${ns}`
    // Rendering is part of a run: the run service renders, then applies.
    const rendered = await renderWorkflow(graph, { workflowId, plugins: () => null, revealSecrets: true, secrets })
    if (rendered.diagnostics.some((d) => d.severity === 'error')) throw new Error(`render errors: ${JSON.stringify(rendered.diagnostics)}`)
    const result = await deploy(kc, rendered.objects, { workflowId })
    const failed = result.objects.filter((o) => o.action === 'failed' || o.action === 'skipped')
    if (result.error || failed.length) throw new Error(`run failed: ${result.error ?? failed.map((o) => `${o.kind} ${o.name}: ${o.message}`).join('; ')}`)
    return { objects: result.objects.length, unchanged: result.objects.every((o) => o.action === 'unchanged') }
  }
}

async function apiRunner(info: SimInfo): Promise<{ runner: Runner; close(): Promise<void> }> {
  const { buildApp } = await import('../src/app.ts')
  const { loadConfig } = await import('../src/config.ts')
  // NODE_ENV=test only makes the secrets ephemeral; the run path is production's. The reply waits for the run.
  const app = await buildApp(loadConfig({ NODE_ENV: 'test', EMBEDDED_DB: 'memory', LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn', OPEN_SIGNUP: 'true', RUN_REPLY_WAIT_MS: '600000', CLUSTER_HEALTH_CRON: '0 0 1 1 *', STATS_REFRESH_CRON: '0 0 1 1 *' }))
  await app.ready()
  let token = ''
  const call = async (method: 'GET' | 'POST', url: string, payload?: object) => {
    const res = await app.inject({ method, url, ...(payload && { payload }), headers: token ? { authorization: `Bearer ${token}` } : {} })
    if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body.slice(0, 500)}`)
    return res.json() as Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any
  }
  token = (await call('POST', '/v1/api/auth/register', { email: 'bench@example.com', password: 'bench-password-1', name: 'Bench' })).token
  await call('POST', '/v1/api/clusters', { name: 'sim', server: info.url, auth_type: 'token', credentials: { token: info.token, ca_data: info.caPem } })
  const workflows = new Map<string, string>()
  const runner: Runner = async (graph, secrets, ns) => {
    let id = workflows.get(ns)
    if (!id) {
      id = (await call('POST', '/v1/api/workflows', { name: `bench ${ns}`, cluster_id: 'sim' })).id as string
      await call('POST', `/v1/api/workflows/${id}/save`, graph)
      workflows.set(ns, id)
    }
    const run = await call('POST', `/v1/api/workflows/${id}/run`, { trigger_data: { secrets } })
    if (run.status !== 'completed') throw new Error(`run ${run.status}: ${run.error}`)
    const nodes = run.nodes as Array<{ action: string }>
    return { objects: nodes.length, unchanged: nodes.every((n) => n.action === 'unchanged') }
  }
  return { runner, close: () => app.close() }
}

async function measure(title: string, runner: Runner, rounds: number, groups: number, requests: () => Promise<number>): Promise<Sample[]> {
  // A one-group run first: loading client-node and first-use code paths is start-up cost, not a run's.
  const warm = graphFor(1, `bench-${title}-warmup`)
  await runner(warm.graph, warm.secrets, `bench-${title}-warmup`)
  const samples: Sample[] = []
  for (let round = 0; round < rounds; round++) {
    const ns = `bench-${title}-${round}`
    const { graph, secrets } = graphFor(groups, ns)
    const timed = async () => {
      const before = await requests()
      const t0 = performance.now()
      const r = await runner(graph, secrets, ns)
      return { ...r, ms: performance.now() - t0, req: (await requests()) - before }
    }
    const first = await timed()
    const again = await timed()
    if (!again.unchanged) throw new Error(`${title}: the re-run changed something`)
    samples.push({ objects: first.objects, firstMs: first.ms, firstReq: first.req, againMs: again.ms, againReq: again.req })
    console.log(`${title} round ${round + 1}: ${graph.nodes.length} nodes, ${first.objects} objects; first run ${first.ms.toFixed(0)} ms / ${first.req} requests; re-run ${again.ms.toFixed(0)} ms / ${again.req} requests`)
  }
  return samples
}

function report(title: string, samples: Sample[]): void {
  const firstMs = mid(samples.map((s) => s.firstMs))
  const againMs = mid(samples.map((s) => s.againMs))
  const verdict = (ms: number, goal: number) => (ms <= goal ? `meets the ${goal} ms goal` : `MISSES the ${goal} ms goal`)
  console.log(`${title}, medians of ${samples.length} round(s), ${samples[0].objects} objects:`)
  console.log(`  first run (everything created):  ${firstMs.toFixed(0).padStart(5)} ms, ${mid(samples.map((s) => s.firstReq))} API requests — ${verdict(firstMs, 2000)}`)
  console.log(`  no-change re-run (all unchanged): ${againMs.toFixed(0).padStart(5)} ms, ${mid(samples.map((s) => s.againReq))} API requests — ${verdict(againMs, 1000)}`)
}

async function main(): Promise<void> {
  const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3))
  const groups = Math.max(1, Number(process.env.BENCH_GROUPS ?? 10))
  const via = process.env.BENCH_VIA ?? 'both'
  if (!['api', 'engine', 'both'].includes(via)) throw new Error('BENCH_VIA is one of api, engine, both')
  const loadAtStart = loadavg()
  const child = fork(new URL(import.meta.url).pathname, [], { execArgv: ['--import', 'tsx'], env: { ...process.env, BENCH_DEPLOY_ROLE: 'cluster' }, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`simulator process exited (${code})`))))
  const next = <T extends ChildMessage['type']>(type: T) => Promise.race([exited, new Promise<Extract<ChildMessage, { type: T }>>((resolve) => {
    const listener = (m: ChildMessage) => { if (m.type === type) { child.off('message', listener); resolve(m as Extract<ChildMessage, { type: T }>) } }
    child.on('message', listener)
  })])
  const requests = async () => { child.send({ type: 'count' }); return (await next('count')).requests }
  const info = await next('ready')

  const results: Array<[string, Sample[]]> = []
  if (via !== 'engine') {
    const api = await apiRunner(info)
    results.push(['POST /v1/api/workflows/:id/run (the app, until the run is finished)', await measure('api', api.runner, rounds, groups, requests)])
    await api.close()
  }
  if (via !== 'api') results.push(['renderWorkflow + deploy() (the apply engine alone)', await measure('engine', await engineRunner(info), rounds, groups, requests)])
  child.removeAllListeners('exit')
  child.send({ type: 'stop' })

  console.log('')
  for (const [title, samples] of results) report(title, samples)
  console.log(`load average at start ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}, at end ${loadavg().map((l) => l.toFixed(2)).join(' ')} (the machine may be shared)`)
}
