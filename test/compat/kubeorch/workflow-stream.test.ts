// The workflow status stream in the KubeOrch UI's dialect (CONTRACT.md §4 "Workflow status", OBSERVED.md
// row 12) and the status vocabulary behind it (node-status.ts): the mapping over every (node type, our
// state) pair, the states that need the status itself, the reframe per event, and a real run on the
// simulator started with the UI's requests and watched over real HTTP with the UI's own parsing rules.
import t from 'tap'
import { UI_STATES, UI_STATUS_TYPES, STATE_TABLE, uiNodeStatus, uiState, type UiStatusType } from '../../../src/compat/kubeorch/node-status.ts'
import { workflowStreamReframe } from '../../../src/compat/kubeorch/workflow-stream.ts'
import { deriveStatus, RESOURCE_STATUSES, type ResourceStatus } from '../../../src/kube/status/index.ts'
import { runFixture } from '../../runs/fixture.ts'
import { listen } from '../../streams/sse-client.ts'
import { registerUser } from '../../helpers/auth.ts'
import { openUiStream } from './ui-stream.ts'

// The UI's own unions (its lib/types/nodes.ts), written out here rather than read from the module under test.
const THE_UIS_STATES: Record<UiStatusType, string[]> = {
  deployment: ['healthy', 'partial', 'error'], statefulset: ['healthy', 'partial', 'error'], daemonset: ['healthy', 'partial', 'error'],
  service: ['healthy', 'pending', 'error'], ingress: ['healthy', 'pending', 'error'],
  configmap: ['created', 'pending', 'error'], secret: ['created', 'pending', 'error'],
  persistentvolumeclaim: ['Bound', 'Pending', 'Lost', 'error'], job: ['running', 'completed', 'failed', 'pending'],
  cronjob: ['active', 'suspended'], hpa: ['scaling', 'stable', 'limited', 'error'], networkpolicy: ['active', 'pending'],
}

// Per type, our states in RESOURCE_STATUSES order: running, pending, failed, completed, warning, unknown, deleted.
const EXPECTED: Record<UiStatusType, string[]> = {
  deployment: ['healthy', 'partial', 'error', 'healthy', 'partial', 'partial', 'error'],
  statefulset: ['healthy', 'partial', 'error', 'healthy', 'partial', 'partial', 'error'],
  daemonset: ['healthy', 'partial', 'error', 'healthy', 'partial', 'partial', 'error'],
  service: ['healthy', 'pending', 'error', 'healthy', 'pending', 'pending', 'error'],
  ingress: ['healthy', 'pending', 'error', 'healthy', 'pending', 'pending', 'error'],
  configmap: ['created', 'pending', 'error', 'created', 'pending', 'pending', 'error'],
  secret: ['created', 'pending', 'error', 'created', 'pending', 'pending', 'error'],
  persistentvolumeclaim: ['Bound', 'Pending', 'error', 'Bound', 'Pending', 'Pending', 'error'],
  job: ['running', 'pending', 'failed', 'completed', 'pending', 'pending', 'failed'],
  cronjob: ['active', 'active', 'suspended', 'active', 'active', 'suspended', 'suspended'],
  hpa: ['stable', 'scaling', 'error', 'stable', 'limited', 'limited', 'error'],
  networkpolicy: ['active', 'pending', 'pending', 'active', 'active', 'pending', 'pending'],
}

t.test('every (node type, our state) pair maps into the UI\'s set for that type, as the table says', async (t) => {
  t.same([...RESOURCE_STATUSES], ['running', 'pending', 'failed', 'completed', 'warning', 'unknown', 'deleted'], 'our vocabulary, in the order EXPECTED lists it')
  t.same(Object.keys(UI_STATES).sort(), Object.keys(THE_UIS_STATES).sort())
  for (const type of UI_STATUS_TYPES) {
    t.same([...UI_STATES[type]].sort(), [...THE_UIS_STATES[type]].sort(), `${type}: the module knows the UI's set`)
    RESOURCE_STATUSES.forEach((state: ResourceStatus, i) => {
      const mapped = uiState(type, state)
      t.ok(THE_UIS_STATES[type].includes(mapped), `${type} ${state} → ${mapped} is in the UI's set`)
      t.equal(mapped, EXPECTED[type][i], `${type} ${state} → ${EXPECTED[type][i]}`)
      t.equal(STATE_TABLE[type][state], mapped, 'the table says it (no refinement without details)')
    })
    for (const theirs of THE_UIS_STATES[type]) t.equal(uiState(type, theirs), theirs, `${type}: the UI's own ${theirs} (saved back by it) is kept`)
    t.ok(THE_UIS_STATES[type].includes(uiState(type, 'nonsense')), `${type}: a state nobody knows still lands in the set`)
  }
})

t.test('states that need the status itself, derived from real objects by src/kube/status', async (t) => {
  const meta = (name: string) => ({ name, namespace: 'default', generation: 1 })
  const suspended = deriveStatus({ apiVersion: 'batch/v1', kind: 'CronJob', metadata: meta('c1'), spec: { schedule: '* * * * *', suspend: true }, status: {} })
  t.equal(suspended.status, 'warning')
  t.equal((uiNodeStatus('cronjob', { ...suspended.counters, state: suspended.status, message: suspended.message }) as { state: string }).state, 'suspended', 'a suspended CronJob is suspended')
  const lastFailed = deriveStatus({ apiVersion: 'batch/v1', kind: 'CronJob', metadata: meta('c2'), spec: { schedule: '* * * * *' }, status: { lastScheduleTime: '2026-01-01T00:00:00Z' } })
  t.equal(lastFailed.status, 'warning')
  const lf = uiNodeStatus('cronjob', { ...lastFailed.counters, state: lastFailed.status, message: lastFailed.message }) as Record<string, unknown>
  t.equal(lf.state, 'active', 'a CronJob whose last job failed still schedules')
  t.equal(lf.message, lastFailed.message, 'our message says why')

  const lost = deriveStatus({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: meta('p'), spec: {}, status: { phase: 'Lost' } })
  t.equal((uiNodeStatus('persistentvolumeclaim', { ...lost.counters, state: lost.status, message: lost.message }) as { state: string }).state, 'Lost')
  const bound = deriveStatus({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: meta('p'), spec: { volumeName: 'pv-1' }, status: { phase: 'Bound', capacity: { storage: '1Gi' } } })
  const b = uiNodeStatus('persistentvolumeclaim', { ...bound.counters, state: bound.status, message: bound.message }) as Record<string, unknown>
  t.same([b.state, b.capacity, b.volumeName], ['Bound', '1Gi', 'pv-1'], 'the keys the PVC panel shows')
  t.equal((uiNodeStatus('persistentvolumeclaim', { state: 'failed', message: 'apply failed' }) as { state: string }).state, 'error', 'a claim that failed to apply is not Lost')

  const hpaObject = (current: number, desired: number) => deriveStatus({
    apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: meta('h'), spec: { minReplicas: 1, maxReplicas: 5 },
    status: { currentReplicas: current, desiredReplicas: desired, conditions: [{ type: 'AbleToScale', status: 'True' }, { type: 'ScalingActive', status: 'True' }], currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 42 } } }] },
  })
  const hpa = (d: ReturnType<typeof deriveStatus>) => uiNodeStatus('hpa', { ...d.counters, state: d.status, message: d.message }) as Record<string, unknown>
  t.equal(hpa(hpaObject(2, 2)).state, 'stable')
  t.equal(hpa(hpaObject(2, 4)).state, 'scaling', 'current and desired replicas differ')
  t.equal(hpa(hpaObject(2, 2)).currentCPU, 42, 'currentCPU, as the panel names it')

  const ingress = (address: Record<string, string>) => {
    const d = deriveStatus({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: meta('i'), spec: { rules: [{ host: 'a.example' }] }, status: { loadBalancer: { ingress: [address] } } })
    return uiNodeStatus('ingress', { ...d.counters, state: d.status, message: d.message }) as Record<string, unknown>
  }
  t.same([ingress({ ip: '10.0.0.7' }).state, ingress({ ip: '10.0.0.7' }).loadBalancerIP], ['healthy', '10.0.0.7'])
  t.equal(ingress({ hostname: 'lb.example' }).loadBalancerHostname, 'lb.example')

  const deploy = deriveStatus({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: meta('d'), spec: { replicas: 3 }, status: { observedGeneration: 1, replicas: 3, readyReplicas: 1, availableReplicas: 1, updatedReplicas: 3 } })
  const d = uiNodeStatus('deployment', { ...deploy.counters, state: deploy.status, message: deploy.message }) as Record<string, unknown>
  t.same([d.state, d.replicas, d.readyReplicas], ['partial', 3, 1], 'a Deployment not all ready is partial, with the counts its tooltip shows')
  t.same(uiNodeStatus('plugin', { state: 'running', message: 'x' }), { state: 'running', message: 'x' }, 'a type without a status panel keeps ours')
  t.equal(uiNodeStatus('deployment', null), null)
})

t.test('the reframe: metadata, node_update by the node\'s type, workflow_sync under data, status_change left out', async (t) => {
  const reframe = workflowStreamReframe()
  const meta = reframe('metadata', {
    id: 'w1', name: 'shop', nodes: [
      { id: 'n-dep', type: 'deployment', data: { name: 'api', _status: { state: 'running', replicas: 1, readyReplicas: 1, message: '1/1 replicas ready' } } },
      { id: 'n-cm', type: 'configmap', data: { name: 'cfg', _status: { state: 'running', message: 'present' } } },
      { id: 'n-new', type: 'service', data: { name: 'svc' } },
    ],
  }) as { type: string; data: { name: string; nodes: Array<{ id: string; data: { _status?: { state: string } } }> } }
  t.equal(meta.type, 'metadata')
  t.equal(meta.data.name, 'shop', 'the rest of the snapshot is kept')
  t.same(meta.data.nodes.map((n) => n.data._status?.state), ['healthy', 'created', undefined], 'top-level nodes[], each data._status in the UI\'s vocabulary')

  // A run creates the node's namespace too; its node_update names the Namespace kind, the node is still a Deployment.
  const ns = reframe('node_update', { node_id: 'n-dep', kind: 'Namespace', status: { state: 'pending', message: 'created', action: 'created' } }) as { data: { node_id: string; status: { state: string; action: string } } }
  t.equal(ns.data.node_id, 'n-dep')
  t.equal(ns.data.status.state, 'partial', 'by the node\'s type, not the object\'s kind')
  t.equal(ns.data.status.action, 'created', 'our keys stay')
  // A node added after the stream opened: its type comes from the kind of its object.
  t.equal((reframe('node_update', { node_id: 'n-late', kind: 'Job', status: { state: 'completed', message: 'done' } }) as { data: { status: { state: string } } }).data.status.state, 'completed')
  t.equal((reframe('node_update', { node_id: 'n-late', kind: 'Namespace', status: { state: 'failed', message: 'x' } }) as { data: { status: { state: string } } }).data.status.state, 'failed', 'and it is remembered')

  const sync = reframe('workflow_sync', { nodes: [{ node_id: 'n-dep', status: { state: 'failed', message: 'no replica ready' } }, { node_id: 'n-cm', status: { state: 'running', message: 'present' } }] }) as { data: { nodes: unknown[]; data: { nodes: Array<{ id: string; data: { _status: { state: string; message: string } } }> } } }
  t.same(sync.data.data.nodes.map((n) => [n.id, n.data._status.state]), [['n-dep', 'error'], ['n-cm', 'created']], 'data.nodes[].{id, data._status}, where the UI reads them')
  t.equal(sync.data.data.nodes[0].data._status.message, 'no replica ready')
  t.equal(sync.data.nodes.length, 2, 'our nodes stay beside them (the UI does not read them)')

  t.equal(reframe('status_change', { resource_id: 'r', node_id: 'n-dep', old_status: 'pending', new_status: 'running' }), null, 'no status_change: the UI would log it as unknown')
  t.same(reframe('error', { error: 'the run failed' }), { type: 'error', data: { error: 'the run failed' } })
  t.same(reframe('complete', { run_id: 'r1', status: 'completed' }), { type: 'complete', data: { run_id: 'r1', status: 'completed' } })
  t.not(workflowStreamReframe(), workflowStreamReframe(), 'one reframe per stream: what it learned of one workflow\'s nodes stays with that stream')
})

// --- A real run, started and watched as the UI does it ---------------------------------------------------

interface UiEvent { type: string; data: any } // eslint-disable-line @typescript-eslint/no-explicit-any

const KNOWN = ['metadata', 'node_update', 'workflow_sync', 'error', 'complete']

/** The statuses the canvas holds after these events, by the hook's rules (metadata seeds, node_update sets one, workflow_sync replaces all). */
function canvasStatuses(events: UiEvent[]): Map<string, { state: string } & Record<string, unknown>> {
  let shown = new Map()
  for (const { type, data } of events) {
    if (type === 'metadata') {
      const seeded = new Map((data.nodes ?? []).filter((n: any) => n.data?._status).map((n: any) => [n.id, n.data._status])) // eslint-disable-line @typescript-eslint/no-explicit-any
      if (seeded.size > 0) shown = seeded
    } else if (type === 'node_update') {
      const d = data.data || data
      const nodeId = d.node_id || data.node_id
      if (nodeId && d.status) shown.set(nodeId, d.status)
    } else if (type === 'workflow_sync' && data.data?.nodes) {
      shown = new Map(data.data.nodes.filter((n: any) => n.data?._status).map((n: any) => [n.id, n.data._status])) // eslint-disable-line @typescript-eslint/no-explicit-any
    }
  }
  return shown
}

/** The UI's reader (lib/hooks/useWorkflowStatusStream.ts, ./ui-stream.ts) with its JSON.parse of every payload. */
async function uiStream(url: string, token: string) {
  const s = await openUiStream(url, token)
  const parsed = (): UiEvent[] => s.events.map((e) => ({ type: e.type, data: JSON.parse(e.data) }))
  return {
    status: s.status, body: s.body as any, // eslint-disable-line @typescript-eslint/no-explicit-any
    get events() { return parsed() },
    /** Event names the UI does not handle: it logs "Unknown SSE event type" for each. */
    get unknown() { return s.events.map((e) => e.type).filter((type) => !KNOWN.includes(type)) },
    until: async (what: string, pred: (e: UiEvent[]) => boolean, ms = 20_000) => { await s.until(what, () => pred(parsed()), ms) },
    close: () => s.close(),
  }
}

const f = await runFixture(t, {}, { timing: { podStartMs: 100, podReadyMs: 100 } })
const base = await listen(f.app)
const ui = async (method: 'GET' | 'POST' | 'PUT', path: string, payload?: object) => {
  const res = await f.app.inject({ method, url: `/kubeorch/v1/api${path}`, headers: f.owner.headers, ...(payload && { payload }) })
  return { status: res.statusCode, body: res.json() }
}
const ENV_VALUE = 'ui-env-value-5c1d'

t.test('a run started as the UI starts it, watched over the adapter\'s stream with the UI\'s parser', async (t) => {
  const made = await ui('POST', '/workflows', { name: 'shop', description: 'watched', cluster_id: 'sim' })
  const id = made.body.id as string
  const nodes = [
    { id: 'node-1', type: 'configmap', position: { x: 0, y: 0 }, data: { id: 'node-1', name: 'configmap-1', namespace: 'default', data: { LOG_LEVEL: 'info' }, mountPath: '/etc/config' }, width: 220, height: 96 },
    { id: 'node-2', type: 'deployment', position: { x: 300, y: 0 }, data: { id: 'node-2', name: 'deployment-2', namespace: 'default', image: 'nginx:1.27', replicas: 1, port: 8080, envKeys: [{ id: 'e1', name: 'API_TOKEN' }] }, width: 240, height: 120, selected: true, positionAbsolute: { x: 300, y: 0 }, dragging: false },
    { id: 'node-3', type: 'service', position: { x: 600, y: 0 }, data: { id: 'node-3', name: 'service-3', namespace: 'default', serviceType: 'ClusterIP', targetApp: 'deployment-2', port: 80, targetPort: 8080 }, width: 200, height: 90 },
  ]
  const edges = [
    { id: 'reactflow__edge-node-3output-node-2', source: 'node-3', sourceHandle: 'output', target: 'node-2', targetHandle: null },
    { id: 'reactflow__edge-node-1output-node-2', source: 'node-1', sourceHandle: 'output', target: 'node-2', targetHandle: null },
  ]
  t.equal((await ui('POST', `/workflows/${id}/save`, { nodes, edges })).status, 200)

  const s = await uiStream(`${base}/kubeorch/v1/api/workflows/${id}/status/stream`, f.owner.token)
  if (s.status !== 200) throw new Error(`stream: ${s.status}`)
  t.teardown(() => s.close())
  await s.until('metadata', (e) => e.some((x) => x.type === 'metadata'))
  t.same(s.events[0].data.nodes.map((n: { id: string }) => n.id), ['node-1', 'node-2', 'node-3'], 'metadata: the workflow\'s nodes at the top level')

  // The UI's Run: publish a draft, then run with the values it collected (no cluster: the workflow's).
  t.equal((await ui('PUT', `/workflows/${id}/status`, { status: 'published' })).status, 200)
  const run = await ui('POST', `/workflows/${id}/run`, { trigger_data: { secrets: {}, envVars: { 'node-2': { API_TOKEN: ENV_VALUE } } } })
  t.ok(run.status === 200 || run.status === 202, `run answered ${run.status}`)
  t.ok(Array.isArray(run.body.logs) && run.body.logs.length > 0, 'logs[] fills the run-log panel')
  t.ok(run.body.logs.every((l: unknown) => typeof l === 'string'), 'as strings')
  t.equal(run.body.run_id, run.body.id)
  t.equal(run.body.cluster, 'sim', 'the workflow\'s cluster_id was the default')
  t.notMatch(JSON.stringify(run.body), ENV_VALUE, 'the value is not in the answer')

  await s.until('complete', (e) => e.some((x) => x.type === 'complete' && x.data.run_id === run.body.id), 30_000)
  await s.until('node-2 healthy', (e) => e.some((x) => x.type === 'node_update' && x.data.node_id === 'node-2' && x.data.status.state === 'healthy'))
  await s.until('the canvas showing every node up', (e) => {
    const shown = canvasStatuses(e)
    return shown.get('node-1')?.state === 'created' && shown.get('node-2')?.state === 'healthy' && shown.get('node-3')?.state === 'healthy'
  })
  const healthy = s.events.find((x) => x.type === 'node_update' && x.data.node_id === 'node-2' && x.data.status.state === 'healthy')!
  t.same([healthy.data.status.replicas, healthy.data.status.readyReplicas], [1, 1], 'replicas and readyReplicas, as the panel reads them')
  t.type(healthy.data.status.message, 'string')
  t.match(canvasStatuses(s.events).get('node-3')?.clusterIP, /^\d+\.\d+\.\d+\.\d+$/, 'clusterIP for the service panel')

  const typeOf: Record<string, UiStatusType> = { 'node-1': 'configmap', 'node-2': 'deployment', 'node-3': 'service' }
  for (const e of s.events.filter((x) => x.type === 'node_update')) {
    t.ok(THE_UIS_STATES[typeOf[e.data.node_id]].includes(e.data.status.state), `node_update ${e.data.node_id} ${e.data.status.state} is in its type's set`)
  }
  const syncs = s.events.filter((x) => x.type === 'workflow_sync')
  t.ok(syncs.length >= 1, 'a workflow_sync after the run')
  for (const e of syncs) {
    t.ok(Array.isArray(e.data.data.nodes), 'workflow_sync: data.nodes[]')
    for (const n of e.data.data.nodes) t.ok(THE_UIS_STATES[typeOf[n.id]].includes(n.data._status.state), `workflow_sync ${n.id} ${n.data._status.state} is in its type's set`)
  }
  t.same(s.unknown, [], 'no event the UI does not know (no status_change)')

  // A canvas opened now: its metadata seeds every status.
  const later = await uiStream(`${base}/kubeorch/v1/api/workflows/${id}/status/stream`, f.owner.token)
  if (later.status !== 200) throw new Error(`stream: ${later.status}`)
  t.teardown(() => later.close())
  await later.until('metadata', (e) => e.some((x) => x.type === 'metadata'))
  const seeded = Object.fromEntries(later.events[0].data.nodes.map((n: { id: string; data: { _status?: { state: string } } }) => [n.id, n.data._status?.state]))
  t.equal(seeded['node-2'], 'healthy', 'metadata nodes carry data._status in the UI\'s vocabulary')
  // The ConfigMap and Service were running from their first sight, and the watchers store a node's status
  // only when it changes, so the stored workflow may have none for them (reported to the lead): whatever is
  // there is in the UI's vocabulary.
  for (const [nodeId, state] of Object.entries(seeded)) if (state !== undefined) t.ok(THE_UIS_STATES[typeOf[nodeId]].includes(state), `metadata ${nodeId} ${state}`)
  const got = await ui('GET', `/workflows/${id}`)
  t.equal(got.body.nodes[1].data._status.state, 'healthy', 'GET /workflows/:id too (the canvas starts from it)')
  const canonical = await f.call(f.owner, 'GET', `/v1/api/workflows/${id}`)
  t.equal(canonical.body.nodes[1].data._status.state, 'running', '/v1/api keeps its own vocabulary')

  // The UI saves its nodes with the statuses the stream merged in: ours stay as the watchers wrote them.
  const echoed = got.body.nodes.map((n: { data: object }, i: number) => (i === 1 ? { ...n, data: { ...n.data, _status: { state: 'error', message: 'stale' } } } : n))
  t.equal((await ui('POST', `/workflows/${id}/save`, { nodes: echoed, edges })).status, 200)
  t.equal((await f.call(f.owner, 'GET', `/v1/api/workflows/${id}`)).body.nodes[1].data._status.state, 'running', 'the stored status is the watchers\', not the echo')

  const live = await f.kubectlJson('get', 'deployment/deployment-2', '-n', 'default')
  t.same(live.spec.template.spec.containers[0].env?.find((e: { name: string }) => e.name === 'API_TOKEN'), { name: 'API_TOKEN', value: ENV_VALUE }, 'trigger_data.envVars reached the Deployment, keyed by node id then variable name')
  t.notMatch(await f.everythingStored(), ENV_VALUE, 'and nothing stored or logged holds it')

  const archived = await ui('PUT', `/workflows/${id}/status`, { status: 'archived' })
  t.equal(archived.status, 200)
  t.match(archived.body.warning, /stay in the cluster/, 'archive warns that the deployed objects stay (the UI would otherwise toast "cleaned up")')
})

t.test('the stream of another user\'s workflow is a 404 with error and message, before any stream starts', async (t) => {
  const made = await ui('POST', '/workflows', { name: 'private', description: '', cluster_id: 'sim' })
  const stranger = await registerUser(f.app)
  const res = await uiStream(`${base}/kubeorch/v1/api/workflows/${made.body.id}/status/stream`, stranger.token)
  t.equal(res.status, 404)
  t.equal(res.body.message, res.body.error)
  const bad = await uiStream(`${base}/kubeorch/v1/api/workflows/${'x'.repeat(65)}/status/stream`, f.owner.token)
  t.equal(bad.status, 400)
})
