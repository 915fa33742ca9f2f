// A node's `data._status` is stored from the first status the watchers derive for its objects, not only on
// a later change: a ConfigMap or a Service is `running` from the moment it is seen and never changes, and it
// must still show a state on GET and in a new stream's `metadata` after a run.
import t from 'tap'
import { runFixture, node, edge } from '../runs/fixture.ts'
import { listen, openStream } from '../streams/sse-client.ts'
import { waitFor } from '../kube-sim/test-helpers.ts'

const f = await runFixture(t, { RUN_READY_TIMEOUT_MS: 8000 }, { timing: { podStartMs: 100, podReadyMs: 100 } })
const { app, owner, call } = f
const base = await listen(app)
const NODES = ['n-cm', 'n-web', 'n-svc']

type Json = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any
const statuses = (wf: Json) => Object.fromEntries((wf.nodes as Json[]).map((n) => [n.id, n.data?._status]))

t.test('after a run of ConfigMap + Deployment + Service every node has a stored status, on GET and in metadata', async (t) => {
  const id = await f.workflow({
    nodes: [
      node('n-cm', 'configmap', { name: 'web-config', namespace: 'first', data: { MODE: 'live' } }),
      node('n-web', 'deployment', { name: 'web', namespace: 'first', image: 'nginx:1.27', port: 8080, replicas: 1 }),
      node('n-svc', 'service', { name: 'web-svc', namespace: 'first', serviceType: 'ClusterIP', port: 80, targetPort: 8080 }),
    ],
    edges: [edge('n-cm', 'n-web'), edge('n-web', 'n-svc')],
  }, 'first')
  const ran = await call(owner, 'POST', `/v1/api/workflows/${id}/run`, {})
  t.equal(ran.body?.status, 'completed', 'the run completed')
  // The watchers store what they first derive for each object after the run; bounded wait on the stored state.
  let last: Json = {}
  const wf = await waitFor('every node has a stored status', async () => {
    await app.services.resourceWatch.idle()
    const got = await call(owner, 'GET', `/v1/api/workflows/${id}`)
    last = statuses(got.body)
    return NODES.every((n) => typeof last[n]?.state === 'string') ? got.body : null
  }, 10_000).catch(() => null)
  if (!wf) { t.fail(`stored node statuses: ${JSON.stringify(last)}`); return }
  const s = statuses(wf)
  t.equal(s['n-cm'].state, 'running', 'the ConfigMap shows running')
  t.equal(s['n-svc'].state, 'running', 'the Service shows running')
  t.equal(s['n-web'].state, 'running', 'the Deployment shows running')
  t.equal(s['n-web'].ready, '1/1', 'with its ready count')
  t.type(s['n-cm'].message, 'string')

  const stream = await openStream(base, `/v1/api/workflows/${id}/status/stream`, { authorization: `Bearer ${owner.token}` })
  t.teardown(() => stream.close())
  const [meta] = await stream.until('metadata', (e) => e.some((x) => x.type === 'metadata'))
  const metaNodes = meta.data.nodes as Json[]
  t.ok(Array.isArray(metaNodes), 'metadata lists the nodes')
  for (const n of NODES) t.equal(metaNodes.find((x) => x.id === n)?.data?._status?.state, 'running', `${n} has its state in metadata`)
})
