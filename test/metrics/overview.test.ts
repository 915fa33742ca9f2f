// GET /v1/api/metrics/overview against the real app and simulated clusters: the totals are what kubectl
// says about the simulator's nodes and pods, and what the resource list says about tracked resources; a
// user sees only their own clusters and resources; a cluster that does not answer is reported unreachable
// while the call still answers 200 in bounded time; an answer is served from memory for METRICS_CACHE_MS.
import t from 'tap'
import { runFixture, node, edge, type RunFixture } from '../runs/fixture.ts'
import { startTestCluster, simClusterBody } from '../helpers/kube.ts'
import { registerUser } from '../helpers/auth.ts'
import { parseQuantity } from '../../src/kube/quantity.ts'

const WEB = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      initContainers:
      - {name: init, image: busybox, resources: {requests: {cpu: 400m, memory: 32Mi}}}
      containers:
      - {name: a, image: nginx, resources: {requests: {cpu: 100m, memory: 64Mi}}}
      - {name: b, image: nginx, resources: {requests: {cpu: 150m, memory: 16Mi}}}
`

/** CPU figures are given to the millicore, as Kubernetes states them. */
const cores = (n: number) => Math.round(n * 1000) / 1000

/** What kubectl reports: node count and readiness, capacity, pod phases, and `describe nodes`' allocated requests. */
async function kubectlTotals(f: Pick<RunFixture, 'kubectl' | 'kubectlJson'>) {
  const nodes = (await f.kubectlJson('get', 'nodes')).items as Array<{ status: { capacity: Record<string, string>; allocatable: Record<string, string>; conditions: Array<{ type: string; status: string }> } }>
  const phases = (await f.kubectl('get', 'pods', '-A', '-o', 'jsonpath={range .items[*]}{.status.phase}{"\\n"}{end}')).split('\n').filter(Boolean)
  const byPhase: Record<string, number> = { pending: 0, running: 0, succeeded: 0, failed: 0, unknown: 0 }
  for (const p of phases) byPhase[p.toLowerCase()]++
  // "  cpu                1350m (17%)  0 (0%)" under "Allocated resources", once per node.
  const describe = await f.kubectl('describe', 'nodes')
  const allocated = (resource: string) => [...describe.matchAll(new RegExp(`^\\s+${resource}\\s+(\\S+) \\(`, 'gm'))].reduce((s, m) => s + parseQuantity(m[1]), 0)
  return {
    nodes: { total: nodes.length, ready: nodes.filter((n) => n.status.conditions.some((c) => c.type === 'Ready' && c.status === 'True')).length },
    pods: { total: phases.length, by_phase: byPhase },
    cpu_capacity: nodes.reduce((s, n) => s + parseQuantity(n.status.capacity.cpu), 0),
    cpu_allocatable: nodes.reduce((s, n) => s + parseQuantity(n.status.allocatable.cpu), 0),
    memory_capacity: nodes.reduce((s, n) => s + parseQuantity(n.status.capacity.memory), 0),
    cpu_requests: allocated('cpu'),
    memory_requests: allocated('memory'),
    describedNodes: [...describe.matchAll(/^Allocated resources:/gm)].length,
  }
}

t.test('the totals are what kubectl says about the nodes and pods, and what the resource list says about tracked resources', async (t) => {
  const f = await runFixture(t, { METRICS_CACHE_MS: 0 })
  await f.kubectlStdin(WEB, 'apply', '-f', '-')
  await f.kubectl('rollout', 'status', 'deployment/web', '-n', 'default', '--timeout=20s')
  const id = await f.workflow({
    nodes: [node('n-cfg', 'configmap', { name: 'cfg', namespace: 'shop', data: { A: '1' } }), node('n-api', 'deployment', { name: 'api', namespace: 'shop', image: 'nginx:1.27', port: 80, replicas: 2 })],
    edges: [edge('n-cfg', 'n-api')],
  })
  const run = await f.call(f.owner, 'POST', `/v1/api/workflows/${id}/run`, {})
  t.equal(run.status, 200, JSON.stringify(run.body))
  t.equal(run.body.status, 'completed')
  await f.kubectl('rollout', 'status', 'deployment/api', '-n', 'shop', '--timeout=20s')

  const want = await kubectlTotals(f)
  const res = await f.call(f.owner, 'GET', '/v1/api/metrics/overview')
  t.equal(res.status, 200, JSON.stringify(res.body))
  const o = res.body
  t.match(o.clusters, { total: 1, reachable: 1, unreachable: 0 })
  t.same(o.nodes, want.nodes)
  t.ok(want.nodes.total >= 2, `the simulator has ${want.nodes.total} nodes`)
  t.same(o.pods, { ...want.pods, partial: false })
  t.equal(o.pods.by_phase.running, 5, '3 web + 2 api pods running')
  t.equal(o.cpu.capacity_cores, cores(want.cpu_capacity))
  t.equal(o.cpu.allocatable_cores, cores(want.cpu_allocatable))
  t.equal(o.memory.capacity_bytes, want.memory_capacity)
  t.equal(want.describedNodes, want.nodes.total, 'kubectl described every node')
  t.equal(o.cpu.requests_cores, cores(want.cpu_requests), 'cpu requests as kubectl describe nodes adds them up')
  t.equal(o.memory.requests_bytes, want.memory_requests, 'memory requests as kubectl describe nodes adds them up')
  // Each web pod requests max(100m + 150m, 400m init) = 400m and max(64Mi + 16Mi, 32Mi) = 80Mi.
  t.ok(o.cpu.requests_cores >= 1.2, `the init container's larger request counts (${o.cpu.requests_cores})`)

  const listed = await f.call(f.owner, 'GET', '/v1/api/resources?limit=100')
  t.equal(listed.status, 200)
  const byStatus: Record<string, number> = {}
  for (const r of listed.body.resources as Array<{ status: string }>) byStatus[r.status] = (byStatus[r.status] ?? 0) + 1
  t.ok(listed.body.total >= 3, `the run tracks its objects (${listed.body.total})`)
  t.equal(o.resources.total, listed.body.resources.filter((r: { status: string }) => r.status !== 'deleted').length)
  for (const [status, n] of Object.entries(o.resources.by_status)) t.equal(n, byStatus[status] ?? 0, `resources ${status}`)
  t.equal(o.items.length, 1)
  t.match(o.items[0], { name: 'sim', reachable: true, nodes: want.nodes, resources: { total: o.resources.total } })
})

t.test('a user sees only their own clusters and resources', async (t) => {
  const f = await runFixture(t, { METRICS_CACHE_MS: 0 })
  const other = await registerUser(f.app)
  const empty = await f.call(other, 'GET', '/v1/api/metrics/overview')
  t.equal(empty.status, 200)
  t.match(empty.body, { clusters: { total: 0, reachable: 0, unreachable: 0 }, nodes: { total: 0 }, pods: { total: 0 }, resources: { total: 0 }, items: [] })

  const second = await startTestCluster(t)
  const added = await f.call(other, 'POST', '/v1/api/clusters', simClusterBody(second, 'mine'))
  t.equal(added.status, 201)
  await f.kubectlStdin(WEB, 'apply', '-f', '-') // on the owner's cluster only
  await f.kubectl('rollout', 'status', 'deployment/web', '-n', 'default', '--timeout=20s')

  const theirs = (await f.call(other, 'GET', '/v1/api/metrics/overview')).body
  t.same(theirs.items.map((c: { name: string }) => c.name), ['mine'])
  t.equal(theirs.pods.total, 0, 'the pods on the owner\'s cluster are not counted')
  t.equal(theirs.cpu.requests_cores, 0)
  t.ok(theirs.nodes.total > 0)
  const owners = (await f.call(f.owner, 'GET', '/v1/api/metrics/overview')).body
  t.same(owners.items.map((c: { name: string }) => c.name), ['sim'])
  t.equal(owners.pods.total, 3)

  // Shared with them, the owner's cluster joins their overview; the owner's tracked resources do not.
  const shared = await f.call(f.owner, 'POST', '/v1/api/clusters/sim/share', { email: other.email, role: 'viewer' })
  t.equal(shared.status, 200)
  const after = (await f.call(other, 'GET', '/v1/api/metrics/overview')).body
  t.same(after.items.map((c: { name: string }) => c.name).sort(), ['mine', 'sim'])
  t.equal(after.pods.total, 3)
  t.equal(after.resources.total, 0)
})

t.test('a cluster that does not answer is reported unreachable with its stored health; the call answers 200 in bounded time', async (t) => {
  const timeout = 600
  const f = await runFixture(t, { METRICS_CACHE_MS: 0, CLUSTER_TIMEOUT_MS: timeout })
  const slow = await startTestCluster(t)
  t.equal((await f.call(f.owner, 'POST', '/v1/api/clusters', simClusterBody(slow, 'slow'))).status, 201)
  t.equal((await f.call(f.owner, 'POST', '/v1/api/clusters/sim/test')).status, 200, 'a connection test stores sim as connected')
  const before = (await f.call(f.owner, 'GET', '/v1/api/metrics/overview')).body
  t.match(before.clusters, { total: 2, reachable: 2, unreachable: 0 })
  const stored = (await f.call(f.owner, 'GET', '/v1/api/clusters/sim/status')).body

  await f.sim.faults.stop()
  slow.faults.setLatency(30_000) // answers, but far too late
  const started = performance.now()
  const res = await f.call(f.owner, 'GET', '/v1/api/metrics/overview')
  const elapsed = performance.now() - started
  t.equal(res.status, 200)
  t.ok(elapsed < 2 * timeout + 1000, `answered in ${Math.round(elapsed)} ms (cluster timeout ${timeout} ms)`)
  t.match(res.body.clusters, { total: 2, reachable: 0, unreachable: 2 })
  t.equal(res.body.nodes.total, 0, 'nothing is added from clusters that did not answer')
  for (const item of res.body.items) {
    t.match(item, { reachable: false, nodes: null, pods: null, cpu: null, memory: null, message: String })
    t.notMatch(item.message, /at |Error:|ECONNREFUSED/, 'no raw error text')
  }
  const sim = res.body.items.find((c: { name: string }) => c.name === 'sim')
  t.equal(stored.status, 'connected')
  t.match(sim, { status: 'connected', status_message: stored.status_message, last_checked_at: stored.last_checked_at }, 'its stored health is shown')
  t.same(res.body.clusters.by_status, { connected: 1, error: 0, unknown: 1 }, 'clusters by status are the stored statuses')

  slow.faults.reset()
  await f.sim.faults.restart()
  const back = (await f.call(f.owner, 'GET', '/v1/api/metrics/overview')).body
  t.match(back.clusters, { reachable: 2, unreachable: 0 })
})

t.test('a second call within METRICS_CACHE_MS is served without a cluster request; after it the clusters are read again', async (t) => {
  const cacheMs = 1500
  const f = await runFixture(t, { METRICS_CACHE_MS: cacheMs })
  const first = await f.call(f.owner, 'GET', '/v1/api/metrics/overview')
  const answeredAt = performance.now()
  t.equal(first.status, 200)
  t.equal(first.body.cache_ms, cacheMs)
  const requests = f.sim.requestCount()
  const [second, third] = await Promise.all([f.call(f.owner, 'GET', '/v1/api/metrics/overview'), f.call(f.owner, 'GET', '/v1/api/metrics/overview')])
  t.same(second.body, first.body, 'the same answer')
  t.same(third.body, first.body)
  t.equal(f.sim.requestCount(), requests, 'no request reached the cluster')

  // Another user's overview is their own, not the cached one.
  const other = await registerUser(f.app)
  t.equal((await f.call(other, 'GET', '/v1/api/metrics/overview')).body.clusters.total, 0)

  await new Promise((resolve) => setTimeout(resolve, Math.max(0, cacheMs - (performance.now() - answeredAt)) + 50))
  const later = await f.call(f.owner, 'GET', '/v1/api/metrics/overview')
  t.equal(later.status, 200)
  t.ok(f.sim.requestCount() >= requests + 2, 'the node and pod lists were read again')
  t.ok(Date.parse(later.body.collected_at) > Date.parse(first.body.collected_at), 'a fresh answer')
})

t.test('adding or removing a cluster drops the kept answers: the next call counts it', async (t) => {
  const f = await runFixture(t, { METRICS_CACHE_MS: 600_000 })
  t.equal((await f.call(f.owner, 'GET', '/v1/api/metrics/overview')).body.clusters.total, 1)
  const second = await startTestCluster(t)
  t.equal((await f.call(f.owner, 'POST', '/v1/api/clusters', simClusterBody(second, 'second'))).status, 201)
  const added = (await f.call(f.owner, 'GET', '/v1/api/metrics/overview')).body
  t.same(added.items.map((c: { name: string }) => c.name), ['second', 'sim'])
  t.equal(added.clusters.reachable, 2)
  t.equal((await f.call(f.owner, 'DELETE', '/v1/api/clusters/second')).status, 204)
  t.same((await f.call(f.owner, 'GET', '/v1/api/metrics/overview')).body.items.map((c: { name: string }) => c.name), ['sim'])
})

t.test('without a token: 401', async (t) => {
  const f = await runFixture(t)
  const res = await f.app.inject({ method: 'GET', url: '/v1/api/metrics/overview' })
  t.equal(res.statusCode, 401)
  t.same(Object.keys(res.json()), ['error'])
})
