// The bus → stream translation on its own (no app): node statuses after a run, dry runs, ordering.
import t from 'tap'
import { EventBus } from '../../src/events/bus.ts'
import { MemoryStreamHub, type StreamEvent } from '../../src/events/stream-hub.ts'
import { WorkflowStreamPublisher, runNodeStatuses, type RunOutcome, type TrackedStatus } from '../../src/services/workflow-stream.ts'

const tracked = (node_id: string, kind: string, status: string, counters: Record<string, unknown> = {}): TrackedStatus => ({ node_id, kind, status, status_message: `${kind} ${status}`, ready: null, counters })

t.test('runNodeStatuses: failed objects as the run says; others as tracked, worst per node; an incidental Namespace ignored', async (t) => {
  const run: RunOutcome = {
    dry_run: false, status: 'failed', error: 'x',
    nodes: [
      { node_id: 'cfg', kind: 'Namespace', action: 'created', message: 'created' },
      { node_id: 'cfg', kind: 'ConfigMap', action: 'created', message: 'created' },
      { node_id: 'api', kind: 'Deployment', action: 'configured', message: 'configured' },
      { node_id: 'ing', kind: 'Ingress', action: 'failed', message: 'the server said 500' },
      { node_id: 'plug', kind: 'Certificate', action: 'created', message: 'created' },
      { node_id: 'plug', kind: 'Issuer', action: 'created', message: 'created' },
      { node_id: 'new', kind: 'Service', action: 'created', message: 'created' },
    ],
  }
  const statuses = Object.fromEntries(runNodeStatuses(run, [
    tracked('cfg', 'Namespace', 'pending'), tracked('cfg', 'ConfigMap', 'running'),
    tracked('api', 'Deployment', 'running', { replicas: 2, readyReplicas: 2 }),
    tracked('plug', 'Certificate', 'pending'), tracked('plug', 'Issuer', 'running'),
  ]).map((n) => [n.node_id, n.status]))
  t.same(statuses.cfg, { state: 'running', message: 'ConfigMap running' }, 'the namespace it created does not speak for the node')
  t.same(statuses.api, { replicas: 2, readyReplicas: 2, state: 'running', message: 'Deployment running' })
  t.same(statuses.ing, { state: 'failed', message: 'the server said 500', action: 'failed' })
  t.equal(statuses.plug.state, 'pending', 'the worst of a node\'s objects')
  t.same(statuses.new, { state: 'pending', message: 'created', action: 'created' }, 'applied, not tracked yet: what the run said')
})

t.test('a run\'s events are published in bus order; a dry run only ends', async (t) => {
  const bus = new EventBus()
  const hub = new MemoryStreamHub()
  const runs = new Map<string, RunOutcome>()
  let release!: () => void
  const slowRead = new Promise<void>((r) => { release = r })
  const publisher = new WorkflowStreamPublisher({
    bus, hub, log: { error: () => {} },
    run: async (_o, _w, runId) => { await slowRead; return runs.get(runId) ?? null },
    tracked: async () => [],
  })
  const sub = hub.subscribe('workflow:w1')
  const obj = (node_id: string, action: 'created' | 'failed') => ({ node_id, api_version: 'v1', kind: 'ConfigMap', name: node_id, namespace: 'ns', action, message: action, uid: null, resource_version: null, labels: {} })
  runs.set('real', { dry_run: false, status: 'failed', error: '1 of 2 objects failed', nodes: [{ node_id: 'a', kind: 'ConfigMap', action: 'created', message: 'created' }, { node_id: 'b', kind: 'ConfigMap', action: 'failed', message: 'failed' }] })
  runs.set('dry', { dry_run: true, status: 'completed', error: null, nodes: [{ node_id: 'a', kind: 'ConfigMap', action: 'created', message: 'created' }] })
  bus.emit('run.started', { owner_id: 'o', workflow_id: 'w1', run_id: 'real' })
  bus.emit('run.object', { owner_id: 'o', workflow_id: 'w1', run_id: 'real', result: obj('a', 'created') })
  bus.emit('run.object', { owner_id: 'o', workflow_id: 'w1', run_id: 'real', result: obj('b', 'failed') })
  bus.emit('run.finished', { owner_id: 'o', workflow_id: 'w1', run_id: 'real', status: 'failed' })
  bus.emit('run.started', { owner_id: 'o', workflow_id: 'w1', run_id: 'dry' })
  bus.emit('run.object', { owner_id: 'o', workflow_id: 'w1', run_id: 'dry', result: obj('a', 'created') })
  bus.emit('run.finished', { owner_id: 'o', workflow_id: 'w1', run_id: 'dry', status: 'completed' })
  t.equal(hub.subscriberCount('workflow:w1'), 1)
  release()
  await publisher.idle()
  hub.publish('workflow:w1', 'end', {})
  const events: StreamEvent[] = []
  for await (const e of sub) { events.push(e); if (e.type === 'end') break }
  // Each run in its own order (two runs of one workflow overlap only when one is a dry run).
  const dry = events.filter((e) => (e.data as { run_id?: string }).run_id === 'dry')
  const real = events.filter((e) => (e.data as { run_id?: string }).run_id !== 'dry' && e.type !== 'end')
  t.same(real.map((e) => e.type), ['node_update', 'node_update', 'workflow_sync', 'error', 'complete'])
  t.same(real.slice(0, 2).map((e) => (e.data as { status: { state: string } }).status.state), ['pending', 'failed'])
  t.same(real[2].data, { nodes: [{ node_id: 'b', status: { state: 'failed', message: 'failed', action: 'failed' } }, { node_id: 'a', status: { state: 'pending', message: 'created', action: 'created' } }] })
  t.same(real[3].data, { error: '1 of 2 objects failed' })
  t.same(real[4].data, { run_id: 'real', status: 'failed' })
  t.same(dry.map((e) => e.data), [{ run_id: 'dry', status: 'completed' }], 'the dry run: its end only')
  publisher.stop()
  bus.emit('run.finished', { owner_id: 'o', workflow_id: 'w1', run_id: 'late', status: 'completed' })
  await publisher.idle()
  t.equal(hub.subscriberCount('workflow:w1'), 0)
})
