// npm run bench:deploy — a 100-node workflow of mixed types applied to the simulated cluster: wall time and API
// requests of the first run and of a no-change re-run, against the goals (first ≤ 2 s, re-run ≤ 1 s).
// The simulator runs in a child process (as a cluster would, on its own CPU); this process renders and applies.
//
// BENCH_ROUNDS (default 3): fresh namespaces per round, medians reported. BENCH_GROUPS (10): groups of 10 nodes.
import { fork } from 'node:child_process'
import { loadavg } from 'node:os'
import { performance } from 'node:perf_hooks'

type ChildMessage = { type: 'ready'; kubeconfig: string } | { type: 'count'; requests: number }

if (process.env.BENCH_DEPLOY_ROLE === 'cluster') {
  const { startKubeSim } = await import('../test/kube-sim/index.ts')
  const sim = await startKubeSim()
  process.on('message', (m: { type: string }) => {
    if (m.type === 'count') process.send!({ type: 'count', requests: sim.requestCount() } satisfies ChildMessage)
    if (m.type === 'stop') void sim.close().then(() => process.exit(0))
  })
  process.send!({ type: 'ready', kubeconfig: sim.kubeconfigYaml() } satisfies ChildMessage)
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

async function main(): Promise<void> {
  const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3))
  const groups = Math.max(1, Number(process.env.BENCH_GROUPS ?? 10))
  const loadAtStart = loadavg()
  const child = fork(new URL(import.meta.url).pathname, [], { execArgv: ['--import', 'tsx'], env: { ...process.env, BENCH_DEPLOY_ROLE: 'cluster' }, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`simulator process exited (${code})`))))
  const next = <T extends ChildMessage['type']>(type: T) => Promise.race([exited, new Promise<Extract<ChildMessage, { type: T }>>((resolve) => {
    const listener = (m: ChildMessage) => { if (m.type === type) { child.off('message', listener); resolve(m as Extract<ChildMessage, { type: T }>) } }
    child.on('message', listener)
  })])
  const requests = async () => { child.send({ type: 'count' }); return (await next('count')).requests }

  const { kubeconfig } = await next('ready')
  const { KubeConfig } = await import('@kubernetes/client-node')
  const { renderWorkflow } = await import('../src/manifests/index.ts')
  const { deploy } = await import('../src/kube/deploy.ts')
  const kc = new KubeConfig()
  kc.loadFromString(kubeconfig)

  const samples: Array<{ objects: number; firstMs: number; firstReq: number; againMs: number; againReq: number }> = []
  for (let round = 0; round < rounds; round++) {
    const workflowId = `bench-${round}`
    const ns = `bench-${round}`
    const parts = Array.from({ length: groups }, (_, g) => group(g, ns))
    const graph = { nodes: parts.flatMap((p) => p.nodes), edges: parts.flatMap((p) => p.edges) }
    const secrets = Object.fromEntries(graph.nodes.filter((n) => n.type === 'secret').map((n) => [n.id, { TOKEN: `t-${n.id}` }]))

    const run = async () => {
      const before = await requests()
      const t0 = performance.now()
      // Rendering is part of a run: the request handler renders, then applies.
      const rendered = await renderWorkflow(graph, { workflowId, plugins: () => null, revealSecrets: true, secrets })
      if (rendered.diagnostics.some((d) => d.severity === 'error')) throw new Error(`render errors: ${JSON.stringify(rendered.diagnostics)}`)
      const result = await deploy(kc, rendered.objects, { workflowId })
      const ms = performance.now() - t0
      const failed = result.objects.filter((o) => o.action === 'failed' || o.action === 'skipped')
      if (result.error || failed.length) throw new Error(`run failed: ${result.error ?? failed.map((o) => `${o.kind} ${o.name}: ${o.message}`).join('; ')}`)
      return { ms, req: (await requests()) - before, objects: result.objects, nodes: graph.nodes.length }
    }
    const first = await run()
    const again = await run()
    const changed = again.objects.filter((o) => o.action !== 'unchanged')
    if (changed.length) throw new Error(`re-run changed ${changed.map((o) => `${o.kind} ${o.name} (${o.action})`).join(', ')}`)
    samples.push({ objects: first.objects.length, firstMs: first.ms, firstReq: first.req, againMs: again.ms, againReq: again.req })
    console.log(`round ${round + 1}: ${first.nodes} nodes, ${first.objects.length} objects; first run ${first.ms.toFixed(0)} ms / ${first.req} requests; re-run ${again.ms.toFixed(0)} ms / ${again.req} requests`)
  }
  child.send({ type: 'stop' })

  const firstMs = mid(samples.map((s) => s.firstMs))
  const againMs = mid(samples.map((s) => s.againMs))
  const verdict = (ms: number, goal: number) => (ms <= goal ? `meets the ${goal} ms goal` : `MISSES the ${goal} ms goal`)
  console.log('')
  console.log(`renderWorkflow + deploy() against kube-sim in a child process, medians of ${rounds} round(s):`)
  console.log(`  first run (everything created):  ${firstMs.toFixed(0)} ms, ${mid(samples.map((s) => s.firstReq))} API requests — ${verdict(firstMs, 2000)}`)
  console.log(`  no-change re-run (all unchanged): ${againMs.toFixed(0)} ms, ${mid(samples.map((s) => s.againReq))} API requests — ${verdict(againMs, 1000)}`)
  console.log(`  load average at start ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}, at end ${loadavg().map((l) => l.toFixed(2)).join(' ')} (the machine may be shared)`)
}
