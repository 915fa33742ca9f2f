// The node state `drifted` (API.md §12) in the KubeOrch UI's vocabulary: the table for every node type over
// statuses made by the drift service's own `withDrift` from derived statuses, and end to end on the
// simulator: a deployed Deployment labelled by hand with the real kubectl shows on the adapter's workflow
// stream (read with the UI's parser) as a node_update with the UI's degraded state `partial`, `drift` and
// `live_state` kept and the fields in `message`; no drift_detected/drift_resolved event reaches the UI (it
// would log "Unknown SSE event type"); GET /workflows/:id and the alert pages show it too; taking the
// label off brings the node back to `healthy`.
import t from 'tap'
import { UI_STATES, UI_STATUS_TYPES, uiNodeStatus, uiState, type UiStatusType } from '../../../src/compat/kubeorch/node-status.ts'
import { withDrift, DRIFTED } from '../../../src/services/lifecycle/drift/node-status.ts'
import { RESOURCE_STATUSES } from '../../../src/kube/status/index.ts'
import { runFixture, node } from '../../runs/fixture.ts'
import { listen } from '../../streams/sse-client.ts'
import { nextBusEvent } from '../../helpers/bus.ts'
import { openUiStream, type UiEvent } from './ui-stream.ts'

const PREFIX = '/kubeorch/v1/api'
const drift = { detected_at: '2026-11-27T10:00:00.000Z', fields: ['spec.replicas'] }
type S = Record<string, unknown>

// End to end on the simulator.
const f = await runFixture(t, { SSE_HEARTBEAT_MS: 15_000 }, { timing: { podStartMs: 50, podReadyMs: 50 } })
t.setTimeout(90_000)
const { app, owner, call } = f
const NS = 'drift-ui'
const wf = await f.workflow({ nodes: [node('n-web', 'deployment', { name: 'web', namespace: NS, image: 'nginx:1.27', port: 8080, replicas: 1 })], edges: [] }, 'drifty')
const ran = await call(owner, 'POST', `/v1/api/workflows/${wf}/run`, {})
if (ran.status !== 200 || ran.body.status !== 'completed') throw new Error(`run: ${ran.status} ${JSON.stringify(ran.body)}`)
const base = await listen(app)
const stream = await openUiStream(`${base}${PREFIX}/workflows/${wf}/status/stream`, owner.token)
t.teardown(() => stream.close())
await stream.until('metadata', (e) => e.some((x) => x.type === 'metadata'))
const parsed = (events: UiEvent[]) => events.map((e) => ({ type: e.type, data: JSON.parse(e.data) }))
const webUpdates = (events: UiEvent[]) => parsed(events).filter((e) => e.type === 'node_update' && e.data.node_id === 'n-web').map((e) => e.data.status as S)

t.test('drifted, by type: broken stays broken; working is the degraded state where the panel has one, else the live state', async (t) => {
  const DEGRADED: Partial<Record<UiStatusType, string>> = { deployment: 'partial', statefulset: 'partial', daemonset: 'partial', hpa: 'limited' }
  for (const type of UI_STATUS_TYPES) {
    for (const live of RESOURCE_STATUSES) {
      const status = withDrift({ state: live, message: `${live} message` }, drift)
      t.equal(status.state, DRIFTED, 'the drift service\'s own status')
      const shown = uiNodeStatus(type, status) as S
      const liveShown = uiState(type, live)
      const expected = live === 'failed' || live === 'deleted' ? liveShown : DEGRADED[type] ?? liveShown
      t.equal(shown.state, expected, `${type} drifted while ${live}`)
      t.ok(UI_STATES[type].includes(shown.state as string), `${type}: in the UI's set`)
      t.same(shown.drift, drift, 'drift is kept')
      t.equal(shown.live_state, live, 'live_state is kept')
      t.equal(shown.message, `drifted from what was applied: spec.replicas; ${live} message`, 'the message leads with the fields')
    }
  }
  t.equal((uiNodeStatus('deployment', withDrift({ state: 'running' }, { detected_at: drift.detected_at, fields: ['a', 'b', 'c', 'd', 'e', 'f', 'g'] })) as S).message,
    'drifted from what was applied: a, b, c, d, e and 2 more', 'a long list is cut')
  t.equal((uiNodeStatus('deployment', { state: DRIFTED }) as S).state, 'partial', 'no live_state: an unknown live state, still degraded')
  t.same(uiNodeStatus('deployment', withDrift(withDrift({ state: 'running', message: 'm' }, drift), null)), { state: 'healthy', message: 'm' }, 'resolved: the live status again')
  const saved = uiNodeStatus('deployment', withDrift({ state: 'running', message: 'm' }, drift)) as S
  t.same(uiNodeStatus('deployment', saved), saved, 'a drifted status the UI saved back is left as it is')
  t.equal((uiNodeStatus('plugin', withDrift({ state: 'running' }, drift)) as S).state, DRIFTED, 'a type without a panel is passed through')
})

t.test('kubectl label on the deployed Deployment: the UI\'s stream shows the node partial with its drift; GET /workflows/:id too; the alert pages list it', async (t) => {
  const detected = nextBusEvent(app, 'drift.detected', 'drift of n-web', (e) => e.workflow_id === wf && e.node_id === 'n-web')
  const from = stream.events.length
  await f.kubectl('-n', NS, 'label', 'deployment/web', 'extra=by-hand')
  const { fields } = await detected
  t.ok(fields.includes('metadata.labels.extra'), 'the drift service saw the label')
  const events = await stream.until('the drifted node_update', (e) => webUpdates(e.slice(from)).some((s) => isDriftStatus(s)))
  const status = webUpdates(events.slice(from)).find(isDriftStatus)!
  t.match(status, { state: 'partial', live_state: 'running', drift: { fields: ['metadata.labels.extra'] }, message: /^drifted from what was applied: metadata\.labels\.extra/ })
  t.ok(UI_STATES.deployment.includes(status.state as string))
  t.notOk(stream.events.some((e) => e.type === 'drift_detected' || e.type === 'drift_resolved'), 'no event the UI does not know')

  const got = (await app.inject({ url: `${PREFIX}/workflows/${wf}`, headers: owner.headers })).json()
  t.match(got.nodes.find((n: { id: string }) => n.id === 'n-web').data._status, { state: 'partial', live_state: 'running', drift: { fields: ['metadata.labels.extra'] } }, 'the canvas\'s first load')

  await app.services.notifications.idle()
  const alerts = (await app.inject({ url: `${PREFIX}/alerts/events?type=workflow`, headers: owner.headers })).json()
  t.match(alerts.events.find((e: { ruleId: string }) => e.ruleId === 'drift_detected'), {
    severity: 'warning', ruleType: 'workflow', status: 'firing', workflowId: wf, ruleName: 'Node n-web of workflow drifty drifted', message: /metadata\.labels\.extra/,
    details: { link: `/dashboard/workflow/${wf}` },
  })
  t.equal((await app.inject({ url: `${PREFIX}/alerts/overview`, headers: owner.headers })).json().severityBreakdown.warning, 1)
})

t.test('the label taken off: the node is healthy again, without its drift', async (t) => {
  const resolved = nextBusEvent(app, 'drift.resolved', 'n-web in sync', (e) => e.workflow_id === wf && e.node_id === 'n-web')
  const from = stream.events.length
  await f.kubectl('-n', NS, 'label', 'deployment/web', 'extra-')
  await resolved
  const events = await stream.until('the healthy node_update', (e) => webUpdates(e.slice(from)).some((s) => s.state === 'healthy'))
  const status = webUpdates(events.slice(from)).find((s) => s.state === 'healthy')!
  t.notOk('drift' in status)
  t.notOk('live_state' in status)
  t.notOk(stream.events.some((e) => e.type === 'drift_detected' || e.type === 'drift_resolved'))
})

function isDriftStatus(s: S): boolean {
  return typeof s.drift === 'object' && s.drift !== null
}
