// A run that fails, started as the KubeOrch UI starts it (CONTRACT.md §2.3 "POST /workflows/:id/run", §6;
// OBSERVED.md's last section): the canvas toasts "Workflow run started successfully" on any 2xx and shows
// the body's `error` otherwise, so a run that has already failed when the reply is sent must not be a 2xx.
import t from 'tap'
import { runFixture, node } from '../../runs/fixture.ts'
import { freePort } from '../../helpers/ports.ts'

const f = await runFixture(t)
const { owner, call } = f
const K = '/kubeorch/v1/api'
const TRIGGER = { trigger_data: { secrets: {}, envVars: {} } }
const configOnly = (namespace: string) => ({ nodes: [node('n-config', 'configmap', { name: 'settings', namespace, data: { MODE: 'on' } })], edges: [] })

/** A published workflow on `cluster` with one ConfigMap, as the canvas leaves it before Run. */
async function workflowOn(cluster: string, name: string, namespace: string): Promise<string> {
  const created = await call(owner, 'POST', `${K}/workflows`, { name, description: '', cluster_id: cluster })
  if (created.status !== 201) throw new Error(`workflow: ${created.status} ${JSON.stringify(created.body)}`)
  const id = created.body.id as string
  await f.save(id, configOnly(namespace))
  t.equal((await call(owner, 'PUT', `${K}/workflows/${id}/status`, { status: 'published' })).status, 200)
  return id
}

t.test('an unreachable cluster: 502 with the run\'s error as `error` and `message`, and the run beside it', async (t) => {
  const port = await freePort()
  const added = await call(owner, 'POST', '/v1/api/clusters', { name: 'gone', server: `https://127.0.0.1:${port}`, auth_type: 'token', credentials: { token: 'x', ca_data: f.sim.caPem } })
  t.equal(added.status, 201)
  const id = await workflowOn('gone', 'unreachable', 'gone')
  const res = await call(owner, 'POST', `${K}/workflows/${id}/run`, TRIGGER)
  t.equal(res.status, 502, 'not a 2xx: the UI would toast "started successfully"')
  t.match(res.body.error, /refused|reach|unreachable|connect/i)
  t.equal(res.body.message, res.body.error, 'message beside error')
  t.match(res.body, { status: 'failed', run_id: String, cluster: 'gone' })
  t.equal(res.body.run_id, res.body.id)
  t.ok(Array.isArray(res.body.logs), 'the run log is still there')
  const stored = await call(owner, 'GET', `/v1/api/workflows/${id}/runs/${res.body.run_id}`)
  t.match(stored.body, { status: 'failed', error: res.body.error }, 'the same error as the recorded run')
  // /v1/api keeps its contract: a finished run is 200, whatever its outcome.
  const v1 = await call(owner, 'POST', `/v1/api/workflows/${id}/run`, TRIGGER)
  t.match(v1, { status: 200, body: { status: 'failed' } })
})

t.test('a cluster that refuses an object: 502 naming it', async (t) => {
  const id = await workflowOn('sim', 'refused', 'refused')
  f.sim.faults.failNext(10, 500, { pathPrefix: '/api/v1/namespaces/refused/configmaps', message: 'etcd is having a moment' })
  t.teardown(() => f.sim.faults.reset())
  const res = await call(owner, 'POST', `${K}/workflows/${id}/run`, TRIGGER)
  f.sim.faults.reset()
  t.equal(res.status, 502)
  t.match(res.body.error, /ConfigMap settings/)
  t.equal(res.body.message, res.body.error)
  t.equal(res.body.status, 'failed')
})

t.test('a run that succeeds is still a 200 with its logs', async (t) => {
  const id = await workflowOn('sim', 'fine', 'fine')
  const res = await call(owner, 'POST', `${K}/workflows/${id}/run`, TRIGGER)
  t.equal(res.status, 200, JSON.stringify(res.body.error))
  t.match(res.body, { status: 'completed', message: 'run completed', run_id: String })
  t.ok(res.body.logs.length > 0)
})
