// npm run bench:watch — 5,000 tracked resources across 5 kinds and 10 namespaces on the simulated cluster,
// followed by the watch service. Prints the number of watch connections the cluster holds (goal: ≤ kinds ×
// namespaces = 50; the system we replace held one per resource, 5,000) and the time from a change made in
// the simulator to its `resource.status` event on the bus (p50/p99), for deletions (→ deleted) and for
// Services turned into LoadBalancers (running → pending). The objects are created directly in the simulator
// carrying our labels and recorded as tracked resources, as runs would have left them.
//
// Then an outage: the simulator stops for BENCH_OUTAGE_S seconds (default 20; 0 skips) under two hubs
// following the same ConfigMap with the spec's backoff (5 s doubling to 60 s), one probing the cluster every
// WATCH_PROBE_INTERVAL_MS (2 s), one with the backoff alone (the baseline: up to the cap after the cluster is
// back). Printed: from the simulator answering again (and the ConfigMap changed at that instant) to the
// change's event delivered by each hub. The outage lasts half a probe interval more than BENCH_OUTAGE_S, so
// the restart falls mid-way between two probes (the average case, not the best).
//
// BENCH_PER_KIND_NS (default 100): objects per kind and namespace. BENCH_CHANGES (200): changes measured.
// The simulator runs in this process (its controllers share the CPU), so the figures are pessimistic.
import https from 'node:https'
import { performance } from 'node:perf_hooks'
import { MongoClient } from 'mongodb'
import { KubeConfig } from '@kubernetes/client-node'
import { startKubeSim } from '../test/kube-sim/index.ts'
import { startEmbeddedMongo } from '../src/embedded-mongo/index.ts'
import { EventBus } from '../src/events/bus.ts'
import { ResourceRepository, type ObservedResource } from '../src/repositories/resources.ts'
import { WorkflowRepository } from '../src/repositories/workflows.ts'
import { ResourceWatchService } from '../src/services/resource-watch-service.ts'
import { WatchHub, DEFAULT_PROBE_INTERVAL_MS, type ReconnectInfo } from '../src/kube/watch-hub.ts'
import { MemoryStreamHub } from '../src/events/stream-hub.ts'
import { WorkflowStreamPublisher, workflowKey } from '../src/services/workflow-stream.ts'
import { MANAGED_BY, MANAGED_BY_LABEL, NODE_ID_ANNOTATION, WORKFLOW_ID_ANNOTATION } from '../src/manifests/metadata.ts'
import { newId } from '../src/repositories/ids.ts'

const PER = Number(process.env.BENCH_PER_KIND_NS ?? 100)
const CHANGES = Number(process.env.BENCH_CHANGES ?? 200)
const OUTAGE_S = Number(process.env.BENCH_OUTAGE_S ?? 20)
const NAMESPACES = Array.from({ length: 10 }, (_, i) => `bench-${i}`)
const KINDS = [
  { kind: 'ConfigMap', apiVersion: 'v1', plural: 'configmaps', body: () => ({ data: { A: '1' } }) },
  { kind: 'Secret', apiVersion: 'v1', plural: 'secrets', body: () => ({ type: 'Opaque', data: { K: 'dg==' } }) },
  { kind: 'ServiceAccount', apiVersion: 'v1', plural: 'serviceaccounts', body: () => ({}) },
  { kind: 'Service', apiVersion: 'v1', plural: 'services', body: () => ({ spec: { type: 'ClusterIP', ports: [{ port: 80, targetPort: 8080 }], selector: { app: 'x' } } }) },
  { kind: 'PersistentVolumeClaim', apiVersion: 'v1', plural: 'persistentvolumeclaims', body: () => ({ spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }) },
]

const sim = await startKubeSim()
const agent = new https.Agent({ keepAlive: true, maxSockets: 32, ca: sim.caPem })
function request(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<{ status: number; json: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const data = body === undefined ? undefined : JSON.stringify(body)
  return new Promise((resolve, reject) => {
    const req = https.request(new URL(path, sim.url), {
      method, agent,
      headers: { Authorization: `Bearer ${sim.identities.admin.token}`, Accept: 'application/json', ...(data && { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(data) }) },
    }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        resolve({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : undefined })
      })
    })
    req.on('error', reject)
    if (data) req.write(data)
    req.end()
  })
}
async function pool<T>(items: T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let i = 0
  await Promise.all(Array.from({ length: n }, async () => { while (i < items.length) await fn(items[i++]) }))
}
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]

const mongo = await startEmbeddedMongo({ storage: 'memory' })
const client = await MongoClient.connect(mongo.uri)
const db = client.db('bench_watch')
const bus = new EventBus()
const resources = new ResourceRepository(db)
const workflows = new WorkflowRepository(db)
const ownerId = newId()
const clusterId = newId()

// Objects in the cluster, one workflow per kind and namespace (its nodes: those objects, PER of them).
const started = performance.now()
const objects: Array<{ kind: typeof KINDS[number]; ns: string; name: string; workflowId: string; nodeId: string }> = []
const workflowOf = new Map<string, string>()
for (const ns of NAMESPACES) {
  const r = await request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })
  if (r.status >= 300) throw new Error(`namespace ${ns}: ${r.status}`)
  for (const kind of KINDS) {
    const workflowId = newId()
    workflowOf.set(`${ns}/${kind.kind}`, workflowId)
    for (let i = 0; i < PER; i++) objects.push({ kind, ns, name: `${kind.kind.toLowerCase()}-${i}`, workflowId, nodeId: `${kind.kind}-${i}` })
  }
}
await pool(objects, 32, async (o) => {
  const r = await request('POST', `/api/v1/namespaces/${o.ns}/${o.kind.plural}`, {
    apiVersion: o.kind.apiVersion, kind: o.kind.kind,
    metadata: { name: o.name, namespace: o.ns, labels: { [MANAGED_BY_LABEL]: MANAGED_BY }, annotations: { [WORKFLOW_ID_ANNOTATION]: o.workflowId, [NODE_ID_ANNOTATION]: o.nodeId } },
    ...o.kind.body(),
  })
  if (r.status >= 300) throw new Error(`${o.kind.kind} ${o.ns}/${o.name}: ${r.status} ${JSON.stringify(r.json)}`)
})
const at = new Date()
for (const [key, workflowId] of workflowOf) {
  const nodes = objects.filter((o) => o.workflowId === workflowId).map((o) => ({ id: o.nodeId, type: o.kind.kind.toLowerCase(), position: { x: 0, y: 0 }, data: { name: o.name, namespace: o.ns } }))
  await db.collection('workflows').insertOne({
    _id: workflowId as never, owner_id: ownerId, name: key.replace('/', '-').toLowerCase(), description: '', cluster_id: clusterId, nodes, edges: [], metadata: {}, status: 'published',
    current_version: 1, run_count: 1, success_count: 1, failure_count: 0, last_run_at: at, created_at: at, updated_at: at,
  })
}
const observed: ObservedResource[] = objects.map((o) => ({
  namespace: o.ns, kind: o.kind.kind, name: o.name, api_version: o.kind.apiVersion, uid: null, labels: { [MANAGED_BY_LABEL]: MANAGED_BY },
  // Recorded as a run leaves them; the watch's first listing corrects what differs (PVCs bind, for one).
  status: 'running', status_message: '', ready: null, counters: {}, workflow_id: o.workflowId, node_id: o.nodeId, cluster: 'sim',
}))
await resources.observe(ownerId, clusterId, observed)
console.log(`setup: ${objects.length} objects in ${NAMESPACES.length} namespaces, ${KINDS.length} kinds, created and recorded in ${((performance.now() - started) / 1000).toFixed(1)} s`)

const kc = new KubeConfig()
kc.loadFromString(sim.kubeconfigYaml())
const watch = new ResourceWatchService({
  resources, workflows, bus,
  activeWorkflowIds: async () => new Set(workflowOf.values()),
  kubeConfigFor: async () => kc,
  clusterLog: async () => undefined,
  backoff: { baseMs: 5000, maxMs: 60_000 },
})
// A subscriber on every workflow's stream, as a browser would hold one: the latency is measured to it too.
const hub = new MemoryStreamHub()
const publisher = new WorkflowStreamPublisher({ bus, hub, run: async () => null, tracked: async () => [], log: { error: () => undefined } })
const waiters = new Set<{ match: (data: Record<string, unknown>) => boolean; resolve: () => void }>()
const subscriptions = [...workflowOf.values()].map((id) => hub.subscribe(workflowKey(id), { bufferSize: 100_000 }))
for (const sub of subscriptions) {
  void (async () => {
    for await (const ev of sub) {
      if (ev.type !== 'status_change') continue
      for (const w of [...waiters]) if (w.match(ev.data as Record<string, unknown>)) { waiters.delete(w); w.resolve() }
    }
  })()
}
const subscriberSees = (match: (data: Record<string, unknown>) => boolean) => new Promise<void>((resolve) => { waiters.add({ match, resolve }) })

const syncedAll = new Promise<void>((resolve) => {
  const pending = new Set(workflowOf.values())
  const off = bus.on('workflow.synced', (e) => { pending.delete(e.workflow_id); if (!pending.size) { off(); resolve() } })
})
const t0 = performance.now()
await watch.start()
await syncedAll
await watch.idle()
const startMs = performance.now() - t0
// Each stream lists, then opens its watch: count once every stream holds one.
while (watch.hub.openWatches() < watch.hub.streamCount()) await new Promise((r) => setTimeout(r, 20))
const connections = sim.openWatches()
const goal = KINDS.length * NAMESPACES.length
console.log(`start: ${watch.watchedCount()} resources followed, every workflow synced in ${startMs.toFixed(0)} ms`)
console.log(`watch connections: ${connections} for ${watch.watchedCount()} resources (goal ≤ kinds × namespaces = ${goal}: ${connections <= goal ? 'met' : 'MISSED'}; one per resource would be ${watch.watchedCount()})`)

// Changes, one at a time: from the request that makes it to the event on the bus.
async function measure(label: string, picks: typeof objects, change: (o: typeof objects[number]) => Promise<void>, expect: string): Promise<number[]> {
  const latencies: number[] = []
  const toSubscriber: number[] = []
  const requests: number[] = []
  for (const o of picks) {
    const seen = bus.next('resource.status', (e) => e.name === o.name && e.namespace === o.ns && e.kind === o.kind.kind && e.new_status === expect)
    const delivered = subscriberSees((d) => d.name === o.name && d.namespace === o.ns && d.kind === o.kind.kind && d.new_status === expect)
    const s = performance.now()
    await change(o)
    requests.push(performance.now() - s)
    await seen
    latencies.push(performance.now() - s)
    await delivered
    toSubscriber.push(performance.now() - s)
  }
  for (const list of [latencies, toSubscriber, requests]) list.sort((a, b) => a - b)
  console.log(`${label}: ${latencies.length} changes, change request sent → resource.status p50 ${pct(latencies, 50).toFixed(1)} ms, p99 ${pct(latencies, 99).toFixed(1)} ms, max ${latencies[latencies.length - 1].toFixed(1)} ms; → status_change on a stream subscriber p50 ${pct(toSubscriber, 50).toFixed(1)} ms, p99 ${pct(toSubscriber, 99).toFixed(1)} ms (of which the simulator answering the change request: p50 ${pct(requests, 50).toFixed(1)} ms)`)
  return toSubscriber
}
const half = Math.max(1, Math.floor(CHANGES / 2))
const every = (kind: string) => objects.filter((o) => o.kind.kind === kind)
const spread = <T>(list: T[], n: number) => Array.from({ length: Math.min(n, list.length) }, (_, i) => list[Math.floor((i * list.length) / Math.min(n, list.length))])
const lb = await measure('Service → LoadBalancer', spread(every('Service'), half), async (o) => {
  const r = await request('PATCH', `/api/v1/namespaces/${o.ns}/services/${o.name}`, { spec: { type: 'LoadBalancer' } }, 'application/merge-patch+json')
  if (r.status >= 300) throw new Error(`patch: ${r.status}`)
}, 'pending')
const del = await measure('deleted in the cluster', spread(every('ConfigMap'), half), async (o) => {
  const r = await request('DELETE', `/api/v1/namespaces/${o.ns}/configmaps/${o.name}`)
  if (r.status >= 300) throw new Error(`delete: ${r.status}`)
}, 'deleted')
const all = [...lb, ...del].sort((a, b) => a - b)
console.log(`all changes, to a stream subscriber: p50 ${pct(all, 50).toFixed(1)} ms, p99 ${pct(all, 99).toFixed(1)} ms; connections now ${sim.openWatches()}; RSS ${(process.memoryUsage().rss / 1048576).toFixed(0)} MB`)

await watch.close()
publisher.stop()
hub.close()

if (OUTAGE_S > 0) {
  const ns = 'bench-outage'
  const cm = `/api/v1/namespaces/${ns}/configmaps`
  for (const [path, body] of [
    ['/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }],
    [cm, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'followed', labels: { [MANAGED_BY_LABEL]: MANAGED_BY } }, data: { N: '0' } }],
  ] as const) {
    const r = await request('POST', path, body)
    if (r.status >= 300) throw new Error(`${path}: ${r.status}`)
  }
  const spec = { baseMs: 5000, maxMs: 60_000 }
  const key = { cluster: 'sim', apiVersion: 'v1', kind: 'ConfigMap', namespace: ns }
  const follow = (probeIntervalMs: number) => {
    const reconnects: ReconnectInfo[] = []
    const waiters: Array<{ value: string; resolve: (at: number) => void }> = []
    const h = new WatchHub({ labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY}`, backoff: spec, connect: async () => kc, probeIntervalMs, onReconnect: (i) => { reconnects.push(i) } })
    h.subscribe(key, {
      name: 'followed',
      event: (_type, o) => {
        const at = performance.now()
        for (const w of [...waiters]) if ((o as { data?: Record<string, string> }).data?.N === w.value) { waiters.splice(waiters.indexOf(w), 1); w.resolve(at) }
      },
    })
    const sees = (value: string) => new Promise<number>((resolve) => { waiters.push({ value, resolve }) })
    return { h, reconnects, sees }
  }
  const probed = follow(DEFAULT_PROBE_INTERVAL_MS)
  const alone = follow(0)
  while (probed.h.openWatches() + alone.h.openWatches() < 2) await new Promise((r) => setTimeout(r, 20))
  await sim.faults.stop()
  // The probes run every interval from the drop: an outage of a whole number of intervals would end just
  // before a probe (the best case). Half an interval more puts the restart mid-way, the average case.
  const outageMs = OUTAGE_S * 1000 + DEFAULT_PROBE_INTERVAL_MS / 2
  await new Promise((r) => setTimeout(r, outageMs))
  await sim.faults.restart()
  const back = performance.now()
  const seenProbed = probed.sees('1')
  const seenAlone = alone.sees('1')
  const r = await request('PATCH', `${cm}/followed`, { data: { N: '1' } }, 'application/merge-patch+json')
  if (r.status >= 300) throw new Error(`patch: ${r.status}`)
  const [withProbe, backoffAlone] = (await Promise.all([seenProbed, seenAlone])).map((at) => (at - back) / 1000)
  const reached = (list: ReconnectInfo[]) => Math.max(...list.map((i) => i.delayMs)) / 1000
  console.log(`outage ${(outageMs / 1000).toFixed(1)} s: cluster answering again → the change made then delivered: with the probe (every ${DEFAULT_PROBE_INTERVAL_MS / 1000} s: 0 to ${DEFAULT_PROBE_INTERVAL_MS / 1000} s plus a request) ${withProbe.toFixed(1)} s (backoff had reached ${reached(probed.reconnects).toFixed(1)} s); spec backoff alone ${backoffAlone.toFixed(1)} s (backoff had reached ${reached(alone.reconnects).toFixed(1)} s; up to the ${spec.maxMs / 1000} s cap after a longer outage)`)
  probed.h.close()
  alone.h.close()
}
agent.destroy()
await client.close()
await mongo.close()
await sim.close()
