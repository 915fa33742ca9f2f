// Connections grow with kinds × namespaces, never with resources; a restart of the service on the same
// database resumes the watches of every deployed workflow, and shutdown closes them.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { watchFixture, deployment, configmap } from './fixture.ts'
import { node } from '../runs/fixture.ts'
import { waitFor } from '../kube-sim/test-helpers.ts'
import { buildApp } from '../../src/app.ts'
import type { BusEvents } from '../../src/events/bus.ts'

// A fixed sealing key: the restarted app must open the cluster credentials the first one sealed.
const f = await watchFixture(t, { ENCRYPTION_KEY: randomBytes(32).toString('base64') })
const NAMESPACES = ['ns-a', 'ns-b', 'ns-c']
const nodes: object[] = []
for (const ns of NAMESPACES) {
  for (let i = 0; i < 4; i++) nodes.push(deployment(`d-${ns}-${i}`, `app-${i}`, ns, `ghcr.io/acme/app-${i}:1`))
  for (let i = 0; i < 4; i++) nodes.push(configmap(`c-${ns}-${i}`, `cfg-${i}`, ns))
  for (let i = 0; i < 2; i++) nodes.push(node(`s-${ns}-${i}`, 'service', { name: `svc-${i}`, namespace: ns, serviceType: 'ClusterIP', port: 80, targetPort: 8080 }))
}
const wf = await f.workflow({ nodes, edges: [] }, 'many')
// Deployment, ConfigMap, Service, the workloads' Pods, and the Namespaces the run created.
const KINDS = 5

t.test('many resources, few connections: at most kinds × namespaces watches', async (t) => {
  await f.deploy(wf)
  // Pod records (API.md §10) come as the pods start, so how many exist here is a race: the applied objects only.
  const tracked = await f.app.db.collection('resources').countDocuments({ workflow_id: wf, kind: { $ne: 'Pod' }, status: { $ne: 'deleted' } })
  t.equal(tracked, 33, '30 objects and 3 namespaces are tracked')
  await waitFor('every deployment running', async () => await f.app.db.collection('resources').countDocuments({ workflow_id: wf, kind: 'Deployment', status: 'running' }) === 12, 20_000)
  await waitFor('watches open', () => f.app.services.resourceWatch.hub.openWatches() === f.app.services.resourceWatch.hub.streamCount())
  const open = f.sim.openWatches()
  t.equal(f.app.services.resourceWatch.watchedCount(), 33)
  // 3 × (Deployment, ConfigMap, Service, Pod) + one cluster-wide Namespace watch.
  t.equal(open, 13, `${open} watch connections for ${tracked} resources`)
  t.ok(open <= KINDS * NAMESPACES.length, `within kinds × namespaces (${KINDS * NAMESPACES.length})`)
  t.equal(f.app.services.resourceWatch.hub.openWatches(), open, 'the hub counts what the cluster sees')
})

t.test('a restart on the same database resumes the watches and keeps following changes', async (t) => {
  const before = f.sim.openWatches()
  await f.app.close()
  await waitFor('the old process\'s watches closed', () => f.sim.openWatches() === 0)
  t.pass('shutdown closed every watch')
  const app = await buildApp(f.config)
  try {
    const events: Array<BusEvents['resource.status']> = []
    const synced: Array<BusEvents['workflow.synced']> = []
    app.bus.on('resource.status', (e) => events.push(e))
    app.bus.on('workflow.synced', (e) => synced.push(e))
    await app.ready()
    await waitFor(`watches resumed (${before})`, () => f.sim.openWatches() === before && f.sim.openWatches(), 20_000)
    t.equal(app.services.resourceWatch.watchedCount(), 33)
    const sync = await waitFor('workflow.synced after the restart', () => synced.find((s) => s.workflow_id === wf))
    t.equal(sync.nodes.length, 30, 'one entry per node')
    t.equal(synced.filter((s) => s.workflow_id === wf).length, 1, 'published once for the workflow')
    t.ok(sync.nodes.every((n) => (n.status as { state: string }).state === 'running'), 'all running, as stored')
    t.equal(events.length, 0, 'nothing changed while down: nothing is published')
    await f.patch('/apis/apps/v1/namespaces/ns-b/deployments/app-2', { spec: { replicas: 2 } })
    const e = await waitFor('the change after the restart', () => events.find((e) => e.name === 'app-2' && e.namespace === 'ns-b' && e.counters.readyReplicas === 2 && e.new_status === 'running'), 20_000)
    t.equal(e.workflow_id, wf)
    await app.services.resourceWatch.idle()
    t.equal((await app.db.collection('resources').findOne({ kind: 'Deployment', name: 'app-2', namespace: 'ns-b' }))!.ready, '2/2')
  } finally {
    await app.close()
  }
  await waitFor('closed again', () => f.sim.openWatches() === 0)
})
