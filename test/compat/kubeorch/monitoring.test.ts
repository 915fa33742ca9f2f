// The UI's monitoring pages on the adapter (CONTRACT.md §2.13, OBSERVED row 25), against the app and the
// simulator: /metrics/overview from the overview service, /metrics/resources from the caller's tracked
// resources after a real run. The alert pages and notification channels have their own files
// (alerts.test.ts, channels.test.ts).
import t from 'tap'
import { runFixture, node } from '../../runs/fixture.ts'
import { registerUser, type TestUser } from '../../helpers/auth.ts'
import type { BusEvents } from '../../../src/events/bus.ts'
import { nextBusEvent } from '../../helpers/bus.ts'

const f = await runFixture(t, { RUN_READY_TIMEOUT_MS: 20_000 }, { timing: { podStartMs: 100, podReadyMs: 100 } })
const { app, owner } = f
const stranger = await registerUser(app)
const PREFIX = '/kubeorch/v1/api'

async function ui(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: object, user: TestUser = owner) {
  const res = await app.inject({ method, url: `${PREFIX}${url}`, headers: user.headers, ...(payload && { payload }) })
  return { status: res.statusCode, body: res.body ? res.json() : undefined }
}

const next = <E extends keyof BusEvents>(event: E, what: string, pred: (e: BusEvents[E]) => boolean, ms?: number) => nextBusEvent(app, event, what, pred, ms)

// A real run, so there are tracked resources and pods requesting CPU and memory.
const wf = await f.workflow({ nodes: [node('n-web', 'deployment', { name: 'web', namespace: 'shop', image: 'nginx:1.27', port: 8080, replicas: 2, resources: { requests: { cpu: '250m', memory: '64Mi' } } })], edges: [] }, 'shop')
const finished = next('run.finished', 'the run', (e) => e.workflow_id === wf)
const started = await app.inject({ method: 'POST', url: `/v1/api/workflows/${wf}/run`, headers: owner.headers, payload: {} })
if (started.statusCode !== 200 && started.statusCode !== 202) throw new Error(`run: ${started.statusCode} ${started.body}`)
if ((await finished).status !== 'completed') throw new Error('the run did not complete')

const millicores = (cores: number) => Math.round(cores * 1000)
const percent = (used: number, capacity: number) => capacity > 0 ? Math.round((used / capacity) * 1000) / 10 : 0

t.test('GET /metrics/overview: clusters[] and totals with every number the page formats, from the overview service', async (t) => {
  const res = await ui('GET', '/metrics/overview')
  t.equal(res.status, 200)
  const o = (await app.inject({ url: '/v1/api/metrics/overview', headers: owner.headers })).json()
  const { clusters, totals } = res.body
  t.equal(clusters.length, 1)
  const c = clusters[0]
  for (const k of ['cpuUsed', 'cpuCapacity', 'cpuPercent', 'memUsed', 'memCapacity', 'memPercent', 'storUsed', 'storCapacity', 'storPercent', 'nodeCount', 'podCount']) {
    t.type(c[k], 'number', `clusters[].${k}`)
  }
  for (const k of ['cpuUsed', 'cpuCapacity', 'cpuPercent', 'memoryUsed', 'memoryCapacity', 'memoryPercent', 'storageUsed', 'storageCapacity', 'storagePercent', 'nodeCount', 'podCount']) {
    t.type(totals[k], 'number', `totals.${k}`)
  }
  const item = o.items[0]
  t.match(c, { clusterName: 'sim', status: item.status, nodeCount: 2, podCount: item.pods.total })
  t.ok(['connected', 'error', 'unknown', 'disconnected'].includes(c.status))
  t.equal(c.cpuCapacity, millicores(item.cpu.allocatable_cores), 'CPU in millicores, against what the nodes can allocate')
  t.equal(c.cpuUsed, millicores(item.cpu.requests_cores), 'used = what scheduled pods request')
  t.ok(c.cpuUsed >= 500, 'the run\'s two replicas at 250m each are counted')
  t.equal(c.cpuPercent, percent(c.cpuUsed, c.cpuCapacity))
  t.equal(c.memCapacity, item.memory.allocatable_bytes)
  t.equal(c.memUsed, item.memory.requests_bytes)
  t.equal(c.memPercent, percent(c.memUsed, c.memCapacity))
  t.same([c.storUsed, c.storCapacity, c.storPercent], [0, 0, 0], 'storage is not measured by this backend')
  t.match(totals, { cpuUsed: millicores(o.cpu.requests_cores), cpuCapacity: millicores(o.cpu.allocatable_cores), memoryUsed: o.memory.requests_bytes, memoryCapacity: o.memory.allocatable_bytes, nodeCount: o.nodes.total, podCount: o.pods.total })
  t.ok(totals.podCount >= 2)

  const none = await ui('GET', '/metrics/overview', undefined, stranger)
  t.same(none.body.clusters, [], 'another user has no clusters here')
  t.match(none.body.totals, { nodeCount: 0, podCount: 0, cpuPercent: 0 })
})

t.test('GET /metrics/resources: the caller\'s tracked resources with name, namespace, type, clusterName, status, restarts', async (t) => {
  const res = await ui('GET', '/metrics/resources')
  t.equal(res.status, 200)
  const web = res.body.resources.find((r: { name: string }) => r.name === 'web')
  t.match(web, { name: 'web', namespace: 'shop', type: 'Deployment', clusterName: 'sim', status: 'running', restarts: 0 })
  for (const r of res.body.resources) {
    for (const k of ['name', 'namespace', 'type', 'clusterName', 'status']) t.type(r[k], 'string', `${r.name}.${k}`)
    t.type(r.restarts, 'number')
  }
  const canonical = (await app.inject({ url: '/v1/api/resources?limit=100', headers: owner.headers })).json()
  t.equal(res.body.resources.length, canonical.resources.length, 'the same list as /v1/api/resources')

  t.same((await ui('GET', '/metrics/resources?cluster=sim')).body.resources.map((r: { name: string }) => r.name).sort(), res.body.resources.map((r: { name: string }) => r.name).sort(), 'the UI\'s cluster filter (a name)')
  t.same((await ui('GET', '/metrics/resources?cluster=elsewhere')).body.resources, [])
  t.same((await ui('GET', '/metrics/resources', undefined, stranger)).body.resources, [], 'owner-scoped')
  for (const query of [`cluster=${'c'.repeat(64)}`, 'color=red', 'limit=1000']) {
    const bad = await ui('GET', `/metrics/resources?${query}`)
    t.equal(bad.status, 400, query)
    t.equal(bad.body.message, bad.body.error)
  }
})
