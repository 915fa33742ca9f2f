// The KubeOrch UI's workflow, version and diagnostics calls on the adapter (CONTRACT.md §2.3–2.5, §3, §8
// rows 7–11; OBSERVED.md rows 6, 7, 10, 11, 13): the UI's exact bodies in, every field it reads checked out.
// Runs and the status stream, which need a cluster doing work, are in workflow-stream.test.ts.
import t, { type Test } from 'tap'
import { startTestApp } from '../../helpers/app.ts'
import { registerUser, type TestUser } from '../../helpers/auth.ts'
import { startTestCluster, simClusterBody } from '../../helpers/kube.ts'

const sim = await startTestCluster(t)
const { app } = await startTestApp(t)
const owner = await registerUser(app)
const other = await registerUser(app)
const created = await app.inject({ method: 'POST', url: '/v1/api/clusters', headers: owner.headers, payload: simClusterBody(sim, 'sim') })
if (created.statusCode !== 201) throw new Error(`cluster: ${created.statusCode} ${created.body}`)

const ui = async (user: TestUser, method: 'GET' | 'POST' | 'PUT', path: string, payload?: unknown) => {
  const res = await app.inject({ method, url: `/kubeorch/v1/api${path}`, headers: user.headers, ...(payload !== undefined && { payload: payload as object }) })
  return { status: res.statusCode, body: res.body ? res.json() : undefined }
}
const v1 = async (method: 'GET' | 'POST', path: string, payload?: object) => {
  const res = await app.inject({ method, url: `/v1/api${path}`, headers: owner.headers, ...(payload && { payload }) })
  return { status: res.statusCode, body: res.json() }
}

const STATUSES = ['draft', 'published', 'archived']

/** The fields of a bare workflow the canvas and lists read (CONTRACT.md §2.3). */
function assertWorkflow(t: Test, wf: any, what: string) { // eslint-disable-line @typescript-eslint/no-explicit-any
  t.type(wf.id, 'string', `${what}: id`)
  t.type(wf.name, 'string', `${what}: name`)
  t.type(wf.description, 'string', `${what}: description`)
  t.ok(STATUSES.includes(wf.status), `${what}: status ${wf.status} is draft, published or archived`)
  t.ok(Array.isArray(wf.nodes) && Array.isArray(wf.edges), `${what}: nodes and edges are arrays`)
  for (const k of ['run_count', 'success_count', 'failure_count']) t.type(wf[k], 'number', `${what}: ${k}`)
  for (const k of ['created_at', 'updated_at']) t.ok(!Number.isNaN(Date.parse(wf[k])), `${what}: ${k} is a date`)
  t.equal(wf.cluster_id, 'sim', `${what}: cluster_id holds the cluster name`)
  t.notOk('workflow' in wf, `${what}: bare, not wrapped`)
}

// The save body as the UI sends it after adding, filling, dragging and connecting nodes (CONTRACT.md §3,
// OBSERVED.md rows 9–10): reactflow's own keys, a new configmap key, a cleared port, a null handle.
const NEW_KEY = `_new_${1764252000123}`
const saveBody = {
  nodes: [
    {
      id: 'node-1', type: 'configmap', position: { x: 120, y: 80 },
      data: { id: 'node-1', name: 'configmap-1', namespace: 'default', templateId: 'tpl-configmap', data: { [NEW_KEY]: '' }, mountPath: '/etc/config' },
      width: 220, height: 96, selected: false, positionAbsolute: { x: 120, y: 80 }, dragging: false,
    },
    {
      id: 'node-2', type: 'deployment', position: { x: 420, y: 80 },
      data: { id: 'node-2', name: 'deployment-2', namespace: 'default', templateId: 'tpl-deployment', image: 'nginx:1.27', replicas: 1, port: 8080, envKeys: [{ id: 'env-1', name: 'API_TOKEN' }], _linkedConfigMaps: ['node-1'] },
      width: 240, height: 120, selected: true, positionAbsolute: { x: 420, y: 80 }, dragging: false,
    },
    {
      id: 'node-3', type: 'service', position: { x: 720, y: 80 },
      // The user cleared the port field: NaN on the client, null on the wire.
      data: { id: 'node-3', name: 'service-3', namespace: 'default', templateId: 'tpl-service', serviceType: 'ClusterIP', targetApp: 'deployment-2', port: null, targetPort: 8080, _linkedDeployment: 'node-2' },
      width: 200, height: 90,
    },
  ],
  edges: [
    { id: 'reactflow__edge-node-3output-node-2', source: 'node-3', sourceHandle: 'output', target: 'node-2', targetHandle: null },
    { id: 'reactflow__edge-node-1output-node-2', source: 'node-1', sourceHandle: 'output', target: 'node-2', targetHandle: null },
  ],
}

let workflowId = ''

t.test('POST /workflows {name, description, cluster_id} answers 201 with the bare workflow', async (t) => {
  const res = await ui(owner, 'POST', '/workflows', { name: 'shop', description: 'the shop', cluster_id: 'sim' })
  t.equal(res.status, 201)
  assertWorkflow(t, res.body, 'create')
  t.equal(res.body.status, 'draft', 'a new workflow is a draft (only drafts are editable on the canvas)')
  t.same(res.body.nodes, [])
  workflowId = res.body.id
})

t.test('POST /workflows/:id/save with reactflow\'s nodes answers {workflow}; GET gives the canvas back unchanged', async (t) => {
  const res = await ui(owner, 'POST', `/workflows/${workflowId}/save`, saveBody)
  t.equal(res.status, 200, JSON.stringify(res.body))
  assertWorkflow(t, res.body.workflow, 'save.workflow')
  t.equal(res.body.workflow.name, 'shop', 'the title stays')
  t.same(res.body.workflow.nodes, saveBody.nodes, 'nodes as sent, extra keys, the new configmap key and the null port included')
  t.same(res.body.workflow.edges, saveBody.edges, 'edges as sent, targetHandle null included')
  const got = await ui(owner, 'GET', `/workflows/${workflowId}`)
  t.equal(got.status, 200)
  assertWorkflow(t, got.body, 'get')
  t.same(got.body.nodes, saveBody.nodes)
  t.same(got.body.edges, saveBody.edges)
  t.equal(got.body.nodes[0].data.data[NEW_KEY], '')
  t.equal(got.body.nodes[2].data.port, null)
})

t.test('a saved `_status` is not stored: the UI echoes our status back, the watchers own it', async (t) => {
  const echoed = structuredClone(saveBody)
  ;(echoed.nodes[1].data as Record<string, unknown>)._status = { state: 'healthy', replicas: 1, readyReplicas: 1, message: '1/1 replicas ready' }
  const res = await ui(owner, 'POST', `/workflows/${workflowId}/save`, echoed)
  t.equal(res.status, 200)
  t.notOk('_status' in res.body.workflow.nodes[1].data, 'a node never deployed has no live status, whatever the UI sent')
  const stored = await v1('GET', `/workflows/${workflowId}`)
  t.notOk('_status' in stored.body.nodes[1].data)
})

t.test('GET /workflows (no query) lists workflows[] with nodes[] to count, without reading every canvas', async (t) => {
  const res = await ui(owner, 'GET', '/workflows')
  t.equal(res.status, 200)
  t.ok(Array.isArray(res.body.workflows), 'workflows[] (a bare array shows an empty list)')
  const item = res.body.workflows.find((w: { id: string }) => w.id === workflowId)
  t.ok(item)
  for (const k of ['id', 'name', 'description', 'status', 'cluster_id', 'updated_at']) t.ok(k in item, `item has ${k}`)
  for (const k of ['run_count', 'success_count', 'failure_count']) t.type(item[k], 'number')
  t.equal(item.nodes.length, 3, 'nodes.length is the node count the list shows')
  t.same(item.nodes.map((n: { id: string }) => n.id), ['node-1', 'node-2', 'node-3'], 'the entries are the nodes themselves (their ids)')
  t.same(item.nodes[1], { id: 'node-2' }, 'only their ids: no canvas data read out for a list')
  t.same(item.edges.map((e: { id: string }) => e.id), saveBody.edges.map((e) => e.id))
  t.equal(item.node_count, 3, 'our own summary stays')
  const theirs = await ui(other, 'GET', '/workflows')
  t.same(theirs.body.workflows, [], 'another user sees none of them')
})

t.test('GET /workflows without a query lists up to 100 (the UI cannot page); a limit sent is kept', async (t) => {
  const many = await registerUser(app)
  for (let i = 0; i < 25; i++) {
    const res = await app.inject({ method: 'POST', url: '/v1/api/workflows', headers: many.headers, payload: { name: `w${i}` } })
    t.equal(res.statusCode, 201)
  }
  const all = await ui(many, 'GET', '/workflows')
  t.equal(all.body.workflows.length, 25, 'more than the 20 of a default page')
  t.equal(all.body.total, 25)
  const paged = await ui(many, 'GET', '/workflows?limit=10&page=3')
  t.equal(paged.body.workflows.length, 5)
  const bad = await ui(many, 'GET', '/workflows?limit=1000')
  t.equal(bad.status, 400, 'the canonical bounds still hold')
  t.equal(bad.body.message, bad.body.error)
})

t.test('PUT /workflows/:id {name, description} answers the bare workflow', async (t) => {
  const res = await ui(owner, 'PUT', `/workflows/${workflowId}`, { name: 'shop v2', description: 'renamed' })
  t.equal(res.status, 200)
  assertWorkflow(t, res.body, 'update')
  t.equal(res.body.name, 'shop v2')
  t.equal(res.body.description, 'renamed')
  t.same(res.body.nodes, saveBody.nodes, 'the canvas is kept')
})

t.test('versions: create, list with nodes[]/edges[] and total, get one bare, restore → workflow.nodes/edges', async (t) => {
  const made = await ui(owner, 'POST', `/workflows/${workflowId}/versions`, { name: 'first cut', tag: 'v1', description: 'before the run' })
  t.equal(made.status, 201)
  t.equal(made.body.version, 1)
  t.type(made.body.message, 'string')
  await ui(owner, 'POST', `/workflows/${workflowId}/save`, { nodes: saveBody.nodes.slice(0, 2), edges: saveBody.edges.slice(1) })
  const second = await ui(owner, 'POST', `/workflows/${workflowId}/versions`, {})
  t.equal(second.status, 201)
  t.equal(second.body.version, 2)

  const list = await ui(owner, 'GET', `/workflows/${workflowId}/versions?page=1&limit=10`)
  t.equal(list.status, 200)
  t.ok(Array.isArray(list.body.versions))
  t.equal(list.body.total, 2)
  t.equal(list.body.versions[0].version, 2, 'newest first: page 1\'s first is the latest')
  t.type(list.body.versions[0].version, 'number')
  t.same(list.body.versions.map((v: { nodes: unknown[] }) => v.nodes.length), [2, 3], 'each item counts its nodes')
  t.same(list.body.versions.map((v: { edges: unknown[] }) => v.edges.length), [1, 2])
  for (const v of list.body.versions) {
    for (const k of ['id', 'workflow_id', 'name', 'description', 'created_at', 'created_by', 'is_automatic']) t.ok(k in v, `item has ${k}`)
  }

  const one = await ui(owner, 'GET', `/workflows/${workflowId}/versions/1`)
  t.equal(one.status, 200)
  t.equal(one.body.version, 1)
  t.same(one.body.nodes, saveBody.nodes, 'bare, with the nodes as saved')
  t.same(one.body.edges, saveBody.edges)
  t.equal(one.body.name, 'first cut')
  t.equal(one.body.tag, 'v1')

  const restored = await ui(owner, 'POST', `/workflows/${workflowId}/versions/1/restore`)
  t.equal(restored.status, 200)
  t.same(restored.body.workflow.nodes, saveBody.nodes, 'workflow.nodes: the canvas is redrawn from them')
  t.same(restored.body.workflow.edges, saveBody.edges)
  t.equal(restored.body.version.restored_from, 1)
  t.equal((await ui(owner, 'GET', `/workflows/${workflowId}`)).body.nodes.length, 3)

  t.equal((await ui(other, 'GET', `/workflows/${workflowId}/versions?page=1&limit=10`)).status, 404)
  const bad = await ui(owner, 'GET', `/workflows/${workflowId}/versions/zero`)
  t.equal(bad.status, 400)
  t.equal(bad.body.message, bad.body.error)
})

t.test('POST /workflows/:id/clone {name} answers 201 with the bare copy', async (t) => {
  const res = await ui(owner, 'POST', `/workflows/${workflowId}/clone`, { name: 'shop copy' })
  t.equal(res.status, 201)
  assertWorkflow(t, res.body, 'clone')
  t.not(res.body.id, workflowId, 'the UI navigates to result.id')
  t.equal(res.body.name, 'shop copy')
  t.equal(res.body.status, 'draft')
  t.same(res.body.nodes.map((n: { id: string }) => n.id), ['node-1', 'node-2', 'node-3'])
  t.equal((await ui(other, 'POST', `/workflows/${workflowId}/clone`, { name: 'mine now' })).status, 404)
})

t.test('PUT /workflows/:id/status: published, then archived with no warning for a workflow never run', async (t) => {
  const { body: draft } = await ui(owner, 'POST', '/workflows', { name: 'idle', description: '', cluster_id: 'sim' })
  const published = await ui(owner, 'PUT', `/workflows/${draft.id}/status`, { status: 'published' })
  t.equal(published.status, 200)
  t.equal(published.body.status, 'published')
  t.notOk('warning' in published.body)
  const archived = await ui(owner, 'PUT', `/workflows/${draft.id}/status`, { status: 'archived' })
  t.equal(archived.status, 200)
  t.equal(archived.body.status, 'archived')
  t.notOk('warning' in archived.body, 'nothing was deployed, so nothing stays behind')
  const bad = await ui(owner, 'PUT', `/workflows/${draft.id}/status`, { status: 'active' })
  t.equal(bad.status, 400)
  t.equal(bad.body.message, bad.body.error)
})

t.test('node diagnostics, fix template and fix in the UI\'s names', async (t) => {
  // A service that targets 9090 while its deployment listens on 8080: a fixable error.
  const { body: wf } = await ui(owner, 'POST', '/workflows', { name: 'diag', description: '', cluster_id: 'sim' })
  const nodes = structuredClone(saveBody.nodes.slice(1))
  Object.assign(nodes[1].data, { port: 80, targetPort: 9090 })
  const saved = await ui(owner, 'POST', `/workflows/${wf.id}/save`, { nodes, edges: [saveBody.edges[0]] })
  t.equal(saved.status, 200, JSON.stringify(saved.body))

  const diag = await ui(owner, 'GET', `/workflows/${wf.id}/nodes/node-3/diagnostics`)
  t.equal(diag.status, 200, JSON.stringify(diag.body))
  t.ok(['healthy', 'warning', 'error'].includes(diag.body.overallStatus), `overallStatus ${diag.body.overallStatus}`)
  t.equal(diag.body.overallStatus, 'error', 'the wrong target port is an error (healthy would hide the panel)')
  t.equal(diag.body.serviceName, 'service-3')
  t.equal(diag.body.namespace, 'default')
  t.ok(!Number.isNaN(Date.parse(diag.body.timestamp)))
  t.ok(Array.isArray(diag.body.checks) && diag.body.checks.length > 0)
  for (const c of diag.body.checks) {
    t.ok(['pass', 'warning', 'error'].includes(c.status), `${c.name}: status ${c.status}`)
    t.type(c.name, 'string')
    t.type(c.message, 'string')
    t.type(c.autoFixable, 'boolean')
    if (c.autoFixable) t.type(c.fixType, 'string', `${c.name}: a fixable check names its fix`)
  }
  const fixable = diag.body.checks.find((c: { autoFixable: boolean; status: string }) => c.autoFixable && c.status !== 'pass')
  t.equal(fixable?.fixType, 'target-port', 'the check the panel selects first')

  const tpl = await ui(owner, 'GET', `/workflows/${wf.id}/nodes/node-3/fix-template/${fixable.fixType}`)
  t.equal(tpl.status, 200)
  for (const k of ['name', 'description', 'yaml', 'applyMethod', 'fixType']) t.type(tpl.body[k], 'string', `fix template has ${k}`)
  t.equal(tpl.body.fixType, 'target-port')
  t.match(tpl.body.yaml, /targetPort: 8080/, 'the YAML shows the service after the fix')

  const edited = await ui(owner, 'POST', `/workflows/${wf.id}/nodes/node-3/fix`, { fixType: 'target-port', yaml: tpl.body.yaml.replace('8080', '8081'), mode: 'manual' })
  t.equal(edited.status, 400, 'hand-edited YAML is refused, not silently dropped')
  t.match(edited.body.details, /edited YAML is not applied/, 'the panel shows `details`')
  t.equal(edited.body.error, edited.body.details)
  t.equal(edited.body.message, edited.body.error)
  t.equal((await v1('GET', `/workflows/${wf.id}`)).body.nodes[1].data.targetPort, 9090, 'nothing was changed')

  const fixed = await ui(owner, 'POST', `/workflows/${wf.id}/nodes/node-3/fix`, { fixType: 'target-port', yaml: tpl.body.yaml, mode: 'auto' })
  t.equal(fixed.status, 200, JSON.stringify(fixed.body))
  t.type(fixed.body.message, 'string')
  t.equal(fixed.body.workflow.nodes.find((n: { id: string }) => n.id === 'node-3').data.targetPort, 8080)
  t.equal((await v1('GET', `/workflows/${wf.id}`)).body.nodes[1].data.targetPort, 8080, 'saved')

  const unknown = await ui(owner, 'POST', `/workflows/${wf.id}/nodes/node-3/fix`, { fixType: 'reboot', yaml: '', mode: 'auto' })
  t.equal(unknown.status, 400)
  t.equal(unknown.body.details, unknown.body.error)
  t.equal((await ui(other, 'GET', `/workflows/${wf.id}/nodes/node-3/diagnostics`)).status, 404)
  t.equal((await ui(other, 'POST', `/workflows/${wf.id}/nodes/node-3/fix`, { fixType: 'target-port', mode: 'auto' })).status, 404)
})

t.test('refusals: bad bodies → 400 with error and message; another user\'s workflow → 404', async (t) => {
  const cases: Array<[TestUser, 'GET' | 'POST' | 'PUT', string, unknown, number]> = [
    [owner, 'POST', '/workflows', { description: 'no name', cluster_id: 'sim' }, 400],
    [owner, 'POST', '/workflows', { name: 'x', cluster_id: 'no-such-cluster' }, 400],
    [owner, 'PUT', `/workflows/${workflowId}`, {}, 400],
    [owner, 'POST', `/workflows/${workflowId}/save`, { nodes: [{ id: 'a', type: 'deployment' }, { id: 'a', type: 'service' }], edges: [] }, 400],
    [owner, 'POST', `/workflows/${workflowId}/save`, { nodes: 'all of them', edges: [] }, 400],
    [owner, 'POST', `/workflows/${workflowId}/run`, { trigger_data: { secrets: {}, envVars: {}, extra: 1 } }, 400],
    [other, 'GET', `/workflows/${workflowId}`, undefined, 404],
    [other, 'PUT', `/workflows/${workflowId}`, { name: 'mine' }, 404],
    [other, 'POST', `/workflows/${workflowId}/save`, saveBody, 404],
    [other, 'PUT', `/workflows/${workflowId}/status`, { status: 'archived' }, 404],
    [other, 'POST', `/workflows/${workflowId}/run`, { trigger_data: { secrets: {}, envVars: {} } }, 404],
    [other, 'POST', `/workflows/${workflowId}/versions`, {}, 404],
  ]
  for (const [user, method, path, body, code] of cases) {
    const res = await ui(user, method, path, body)
    t.equal(res.status, code, `${method} ${path} ${JSON.stringify(body)?.slice(0, 60)}`)
    t.type(res.body.error, 'string')
    t.equal(res.body.message, res.body.error, 'message beside error')
  }
  t.equal((await v1('GET', `/workflows/${workflowId}`)).body.name, 'shop v2', 'nothing was changed by the refused writes')
})
