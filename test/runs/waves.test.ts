// Dependency edges between workloads (an imported compose depends_on): the dependency is applied first and
// its dependents only once it is ready, whatever the canvas order; a dependency that never gets ready fails
// its own node without holding back the workloads that depend on it.
import t from 'tap'
import { runFixture, node, edge } from './fixture.ts'

const f = await runFixture(t, { RUN_READY_TIMEOUT_MS: 1500 })
const { owner, call } = f

const graph = (dbImage: string) => ({
  // The dependent first on the canvas: the order comes from the edge, not from the list.
  nodes: [
    node('n-web', 'deployment', { name: 'web', namespace: 'waves', image: 'nginx:1.27', port: 80 }),
    node('n-db', 'statefulset', { name: 'db', namespace: 'waves', image: dbImage, port: 5432 }),
  ],
  edges: [edge('n-db', 'n-web')],
})

// Each log line starts with its timestamp.
const position = (logs: string[], pattern: RegExp) => logs.findIndex((l) => pattern.test(l.replace(/^\S+ /, '')))

t.test('the dependent is applied after its dependency is ready', async (t) => {
  const id = await f.workflow(graph('postgres:16'), 'waves')
  const res = await call(owner, 'POST', `/v1/api/workflows/${id}/run`, {})
  t.equal(res.status, 200, JSON.stringify(res.body))
  t.equal(res.body.status, 'completed')
  const logs: string[] = res.body.logs
  const dbReady = position(logs, /^StatefulSet db is ready/)
  const webApplied = position(logs, /^Deployment web.*: created/)
  t.ok(position(logs, /^waiting for StatefulSet db before applying what depends on it/) >= 0, 'the wait is logged')
  t.ok(dbReady >= 0 && webApplied > dbReady, `db ready (line ${dbReady}) before web is applied (line ${webApplied})`)
  const web = await f.kubectlJson('get', 'deployment', 'web', '-n', 'waves')
  const db = await f.kubectlJson('get', 'statefulset', 'db', '-n', 'waves')
  t.ok(Date.parse(web.metadata.creationTimestamp) >= Date.parse(db.metadata.creationTimestamp), 'kubectl sees web created no earlier than db')
})

t.test('a dependency that never gets ready fails its node; its dependents are applied anyway', async (t) => {
  const id = await f.workflow({ ...graph('postgres:16-never-ready'), nodes: graph('postgres:16-never-ready').nodes.map((n) => ({ ...n, data: { ...n.data, namespace: 'waves-2' } })) }, 'waves-2')
  const res = await call(owner, 'POST', `/v1/api/workflows/${id}/run`, {})
  t.equal(res.status, 200, JSON.stringify(res.body))
  t.equal(res.body.status, 'failed')
  const logs: string[] = res.body.logs
  t.ok(position(logs, /^StatefulSet db is not ready .*applying its dependents anyway/) >= 0, 'the log says why the wait ended')
  const nodes = Object.fromEntries(res.body.nodes.map((n: { node_id: string; kind: string; action: string }) => [`${n.node_id}:${n.kind}`, n.action]))
  t.equal(nodes['n-db:StatefulSet'], 'failed', 'the dependency that never got ready fails')
  t.equal(nodes['n-web:Deployment'], 'created', 'the dependent was applied')
})
