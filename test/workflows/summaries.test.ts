import t from 'tap'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'

const { app } = await startTestApp(t)
const { headers } = await registerUser(app)
const call = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => {
  const res = await app.inject({ method, url, headers, ...(payload && { payload }) })
  return { status: res.statusCode, body: res.body ? res.json() : undefined }
}

// Extra keys stay on saved nodes and edges: include=graph must give them back unchanged.
const nodes = [
  { id: 'web', type: 'deployment', position: { x: 1, y: 2 }, data: { name: 'web', image: 'nginx', replicas: 1 }, width: 120 },
  { id: 'svc', type: 'service', position: { x: 3, y: 4 }, data: { name: 'web' } },
  { id: 'api', type: 'deployment', position: { x: 5, y: 6 }, data: { name: 'api', image: 'api', replicas: 2 } },
  { id: 'cfg', type: 'configmap', position: { x: 7, y: 8 }, data: { name: 'cfg' } },
]
const edges = [{ id: 'e1', source: 'svc', target: 'web', animated: true }, { id: 'e2', source: 'cfg', target: 'api' }]

const graphWf = (await call('POST', '/v1/api/workflows', { name: 'summarized' })).body
if ((await call('POST', `/v1/api/workflows/${graphWf.id}/save`, { nodes, edges })).status !== 200) throw new Error('setup: save failed')
const emptyWf = (await call('POST', '/v1/api/workflows', { name: 'empty' })).body
const full = (await call('GET', `/v1/api/workflows/${graphWf.id}`)).body

const withoutGraph = ({ nodes: _n, edges: _e, ...rest }: Record<string, unknown>) => rest

t.test('a workflow list answers summaries: counts and sorted unique node types, no nodes or edges', async (t) => {
  const res = await call('GET', '/v1/api/workflows?sort=name&order=desc')
  t.equal(res.status, 200)
  const [summarized, empty] = res.body.workflows
  t.same(summarized, { ...withoutGraph(full), node_count: 4, edge_count: 2, node_types: ['configmap', 'deployment', 'service'] }, 'every other field as GET /:id answers it')
  t.notOk('nodes' in summarized || 'edges' in summarized)
  t.match(empty, { id: emptyWf.id, node_count: 0, edge_count: 0, node_types: [] })
  t.notOk('nodes' in empty || 'edges' in empty)
})

t.test('include=graph adds the nodes and edges exactly as saved', async (t) => {
  const res = await call('GET', '/v1/api/workflows?sort=name&order=desc&include=graph')
  t.equal(res.status, 200)
  const [summarized, empty] = res.body.workflows
  t.same(summarized, { ...full, node_count: 4, edge_count: 2, node_types: ['configmap', 'deployment', 'service'] })
  t.same(summarized.nodes, nodes)
  t.same(summarized.edges, edges)
  t.same([empty.nodes, empty.edges], [[], []])
})

t.test('include accepts only graph', async (t) => {
  for (const url of ['/v1/api/workflows?include=nodes', `/v1/api/workflows/${graphWf.id}/versions?include=all`]) {
    const res = await call('GET', url)
    t.equal(res.status, 400, url)
    t.type(res.body.error, 'string')
  }
})

t.test('a version list answers summaries too; include=graph adds the snapshot', async (t) => {
  const version = (await call('POST', `/v1/api/workflows/${graphWf.id}/versions`, { name: 'snap' })).body
  // A later save changes the workflow, not the summary of the snapshot.
  await call('POST', `/v1/api/workflows/${graphWf.id}/save`, { nodes: nodes.slice(0, 1), edges: [] })
  const list = await call('GET', `/v1/api/workflows/${graphWf.id}/versions`)
  t.equal(list.status, 200)
  t.same(list.body.versions, [{ ...withoutGraph(version), node_count: 4, edge_count: 2, node_types: ['configmap', 'deployment', 'service'] }])
  const withGraph = await call('GET', `/v1/api/workflows/${graphWf.id}/versions?include=graph`)
  t.same(withGraph.body.versions, [{ ...version, node_count: 4, edge_count: 2, node_types: ['configmap', 'deployment', 'service'] }])
  t.same(withGraph.body.versions[0].nodes, nodes)
  const after = await call('GET', '/v1/api/workflows?search=summarized')
  t.match(after.body.workflows[0], { node_count: 1, edge_count: 0, node_types: ['deployment'] }, 'the workflow\'s own summary follows the save')
})

t.test('the summary is computed by the database: the list query projects the graph away', async (t) => {
  // Reading the collection the way the repository does shows what the database sends back.
  const { WorkflowRepository } = await import('../../src/repositories/workflows.ts')
  const sent: unknown[] = []
  const db = new Proxy(app.db, {
    get: (target, key) => key !== 'collection' ? Reflect.get(target, key) : (name: string) => {
      const c = target.collection(name)
      return new Proxy(c, {
        get: (ct, k) => k !== 'find' ? Reflect.get(ct, k) : (...args: Parameters<typeof c.find>) => {
          const cursor = ct.find(...args)
          const toArray = cursor.toArray.bind(cursor)
          return Object.assign(cursor, { toArray: async () => { const docs = await toArray(); sent.push(...docs); return docs } })
        },
      })
    },
  })
  const page = await new WorkflowRepository(db).list(full.owner_id, { search: 'summarized' })
  t.equal(page.items.length, 1)
  t.equal(sent.length, 1)
  t.notOk('nodes' in (sent[0] as object) || 'edges' in (sent[0] as object), 'no graph crossed the wire')
  t.match(sent[0], { node_count: 1, edge_count: 0 })
})

t.test('the summary is stored with the graph on every write path, and never shown by GET', async (t) => {
  const stored = async (collection: string, filter: object) => {
    const doc = await app.db.collection(collection).findOne(filter)
    return doc && { node_count: doc.node_count, edge_count: doc.edge_count, node_types: doc.node_types }
  }
  const summary = (n: typeof nodes, e: typeof edges) => ({ node_count: n.length, edge_count: e.length, node_types: [...new Set(n.map((x) => x.type))].sort() })
  const { id } = (await call('POST', '/v1/api/workflows', { name: 'stored summary' })).body
  t.same(await stored('workflows', { _id: id }), summary([], []), 'create')
  await call('POST', `/v1/api/workflows/${id}/save`, { nodes, edges })
  t.same(await stored('workflows', { _id: id }), summary(nodes, edges), 'save')
  const v1 = (await call('POST', `/v1/api/workflows/${id}/versions`, { name: 'one' })).body
  t.same(await stored('workflow_versions', { workflow_id: id, version: v1.version }), summary(nodes, edges), 'a version snapshot')
  await call('PUT', `/v1/api/workflows/${id}`, { name: 'renamed, graph untouched' })
  t.same(await stored('workflows', { _id: id }), summary(nodes, edges), 'an update without a graph keeps it')
  await call('POST', `/v1/api/workflows/${id}/save`, { nodes: nodes.slice(1, 2), edges: [] })
  t.same(await stored('workflows', { _id: id }), summary(nodes.slice(1, 2), []), 'a second save')
  const restore = await call('POST', `/v1/api/workflows/${id}/versions/${v1.version}/restore`)
  t.equal(restore.status, 200)
  t.same(await stored('workflows', { _id: id }), summary(nodes, edges), 'restore')
  t.same(await stored('workflow_versions', { workflow_id: id, version: restore.body.version.version }), summary(nodes, edges), 'the version restore records')
  const copy = (await call('POST', `/v1/api/workflows/${id}/clone`, { name: 'stored copy' })).body
  t.same(await stored('workflows', { _id: copy.id }), summary(nodes, edges), 'clone')
  for (const url of [`/v1/api/workflows/${id}`, `/v1/api/workflows/${copy.id}`, `/v1/api/workflows/${id}/versions/${v1.version}`]) {
    const body = (await call('GET', url)).body
    t.notOk('node_count' in body || 'edge_count' in body || 'node_types' in body, `GET ${url} shows the graph, not its stored summary`)
  }
  t.same(restore.body.workflow.node_count, undefined, 'nor does the restore reply')
})

t.test('documents stored before summaries were kept get them at start-up', async (t) => {
  const { indexSetups } = await import('../../src/repositories/indexes.ts')
  const owner = (await call('GET', `/v1/api/workflows/${graphWf.id}`)).body.owner_id
  const at = new Date()
  const legacy = { owner_id: owner, name: 'legacy', description: '', cluster_id: null, nodes, edges, metadata: {}, status: 'draft', current_version: 1, run_count: 0, success_count: 0, failure_count: 0, last_run_at: null, created_at: at, updated_at: at }
  await app.db.collection('workflows').insertMany([
    { _id: 'a0000000000000000000000a' as never, ...legacy },
    { _id: 'a0000000000000000000000b' as never, ...legacy, name: 'legacy without a graph', nodes: undefined, edges: undefined },
  ], { ignoreUndefined: true })
  await app.db.collection('workflow_versions').insertOne({
    _id: 'a0000000000000000000000c' as never, workflow_id: 'a0000000000000000000000a', owner_id: owner, version: 1, name: 'v1', tag: '', description: '',
    nodes, edges, metadata: {}, is_automatic: false, restored_from: null, run_id: null, run_status: null, created_by: owner, created_at: at,
  })
  const had = await app.db.collection('workflows').findOne({ _id: graphWf.id })
  // What the database plugin runs at start-up.
  for (const setup of indexSetups) await setup(app.db)
  const listed = (await call('GET', '/v1/api/workflows?search=legacy&sort=name&order=asc')).body.workflows
  t.match(listed, [
    { id: 'a0000000000000000000000a', node_count: 4, edge_count: 2, node_types: ['configmap', 'deployment', 'service'] },
    { id: 'a0000000000000000000000b', node_count: 0, edge_count: 0, node_types: [] },
  ])
  const versions = (await call('GET', '/v1/api/workflows/a0000000000000000000000a/versions')).body.versions
  t.match(versions, [{ version: 1, node_count: 4, edge_count: 2, node_types: ['configmap', 'deployment', 'service'] }])
  const untouched = await app.db.collection('workflows').findOne({ _id: graphWf.id })
  t.same([untouched?.node_count, untouched?.node_types], [had?.node_count, had?.node_types], 'documents that had a summary keep theirs')
})
