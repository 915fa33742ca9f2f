// Applying a completed import: merge adds the graph beside the existing one without duplicating node ids or
// names (twice in a row too), replace swaps the graph, create-workflow makes a workflow that renders, and a
// session that has not completed is a 409. Sessions are seeded directly, so these tests do not depend on the
// analysis itself.
import t from 'tap'
import { importFixture, sampleAnalysis } from './fixture.ts'
import { mergeGraphs, ImportService } from '../../src/services/import-service.ts'
import type { WorkflowService } from '../../src/services/workflow-service.ts'
import { BadRequest } from '../../src/errors.ts'
import { RawJson } from '../../src/events/raw-json.ts'

const f = await importFixture(t)
const { owner, call } = f

const namesByType = (nodes: Array<{ type: string; data: { name: string } }>) => nodes.map((n) => `${n.type}/${n.data.name}`)
const duplicates = (values: string[]) => values.filter((v, i) => values.indexOf(v) !== i)

t.test('merge twice: every node id, edge id and (type, name) stays unique; the new nodes go right of the old', async (t) => {
  const wf = await call(owner, 'POST', '/v1/api/workflows', { name: 'shop' })
  t.equal(wf.status, 201)
  const importId = await f.seedSession(owner, sampleAnalysis())

  const first = await call(owner, 'POST', '/v1/api/import/apply', { import_id: importId, workflow_id: wf.body.id, mode: 'merge' })
  t.equal(first.status, 200, JSON.stringify(first.body))
  t.same(first.body.nodes.map((n: { id: string }) => n.id), ['web', 'web-service', 'cache'], 'into an empty workflow: as imported')
  t.same(first.body.nodes[0].position, { x: 0, y: 0 }, 'positions kept when there is nothing to move away from')

  const second = await call(owner, 'POST', '/v1/api/import/apply', { import_id: importId, workflow_id: wf.body.id, mode: 'merge' })
  t.equal(second.status, 200)
  const third = await call(owner, 'POST', '/v1/api/import/apply', { import_id: importId, workflow_id: wf.body.id, mode: 'merge' })
  t.equal(third.status, 200)
  const { nodes, edges } = third.body
  t.equal(nodes.length, 9)
  t.same(duplicates(nodes.map((n: { id: string }) => n.id)), [], 'no duplicate node ids')
  t.same(duplicates(edges.map((e: { id: string }) => e.id)), [], 'no duplicate edge ids')
  t.same(duplicates(namesByType(nodes)), [], 'no duplicate names within a node type')
  t.same(nodes.slice(3).map((n: { id: string }) => n.id), ['web-2', 'web-service-2', 'cache-2', 'web-3', 'web-service-3', 'cache-3'], 'renamed deterministically')
  t.same(nodes.slice(6).map((n: { data: { name: string } }) => n.data.name), ['web-3', 'web-3', 'cache-3'], 'a Deployment and its Service keep matching names')
  t.same(edges[2], { id: 'web-to-web-service-3', source: 'web-3', target: 'web-service-3' }, 'edges follow their renamed nodes')
  // The first graph spans x 0..600 (the service at 360 is 240 wide): the second starts right of it.
  t.ok(nodes.slice(3, 6).every((n: { position: { x: number } }) => n.position.x >= 600), 'second import right of the first')
  t.ok(nodes.slice(6).every((n: { position: { x: number } }) => n.position.x > Math.max(...nodes.slice(3, 6).map((m: { position: { x: number } }) => m.position.x))), 'third right of the second')
  t.same(nodes[3].position.y - nodes[0].position.y, 0, 'top-aligned with the existing graph')

  const stored = await call(owner, 'GET', `/v1/api/workflows/${wf.body.id}`)
  t.same(stored.body.nodes, nodes, 'what apply answered is what was saved (the read cache agrees)')
})

t.test('replace swaps the graph; the session\'s analysis is unchanged by applying it', async (t) => {
  const wf = await call(owner, 'POST', '/v1/api/workflows', { name: 'to replace' })
  const importId = await f.seedSession(owner, sampleAnalysis())
  await call(owner, 'POST', '/v1/api/import/apply', { import_id: importId, workflow_id: wf.body.id, mode: 'merge' })
  await call(owner, 'POST', '/v1/api/import/apply', { import_id: importId, workflow_id: wf.body.id, mode: 'merge' })
  const replaced = await call(owner, 'POST', '/v1/api/import/apply', { import_id: importId, workflow_id: wf.body.id, mode: 'replace' })
  t.equal(replaced.status, 200)
  t.same(replaced.body.nodes, sampleAnalysis().nodes)
  t.same(replaced.body.edges, sampleAnalysis().edges)
  const session = await call(owner, 'GET', `/v1/api/import/${importId}`)
  t.same(session.body.analysis.nodes, sampleAnalysis().nodes)
})

t.test('create-workflow: 201, a draft holding the graph, which renders', async (t) => {
  const importId = await f.seedSession(owner, sampleAnalysis())
  const created = await call(owner, 'POST', '/v1/api/import/create-workflow', { import_id: importId, name: 'from compose', description: 'imported' })
  t.equal(created.status, 201, JSON.stringify(created.body))
  t.match(created.body, { name: 'from compose', description: 'imported', status: 'draft', cluster_id: null })
  t.same(created.body.nodes, sampleAnalysis().nodes)
  const manifests = await f.app.inject({ url: `/v1/api/workflows/${created.body.id}/manifests`, headers: { ...owner.headers, accept: 'application/json' } })
  t.equal(manifests.statusCode, 200)
  const { objects, diagnostics } = manifests.json()
  t.same(diagnostics.filter((d: { severity: string }) => d.severity === 'error'), [])
  t.same(objects.map(({ object: o }: { object: { kind: string; metadata: { name: string } } }) => `${o.kind}/${o.metadata.name}`).sort(), ['Deployment/cache', 'Deployment/web', 'Service/web'])
})

t.test('create-workflow with a cluster the caller cannot deploy to: 400, nothing created', async (t) => {
  const importId = await f.seedSession(owner, sampleAnalysis())
  const before = await f.app.db.collection('workflows').countDocuments({})
  const res = await call(owner, 'POST', '/v1/api/import/create-workflow', { import_id: importId, name: 'x', cluster_id: 'nowhere' })
  t.equal(res.status, 400)
  t.equal(await f.app.db.collection('workflows').countDocuments({}), before)
})

t.test('a graph that cannot be saved: 400 and no workflow left behind', async (t) => {
  const broken = sampleAnalysis()
  broken.edges.push({ id: 'dangling', source: 'web', target: 'nowhere' })
  const importId = await f.seedSession(owner, broken)
  const before = await f.app.db.collection('workflows').countDocuments({})
  const res = await call(owner, 'POST', '/v1/api/import/create-workflow', { import_id: importId, name: 'broken' })
  t.equal(res.status, 400)
  t.match(res.body.error, /missing node "nowhere"/)
  t.equal(await f.app.db.collection('workflows').countDocuments({}), before)
})

t.test('when the save itself fails after the workflow was created, the workflow is deleted again', async (t) => {
  const calls: string[] = []
  const workflows = {
    create: async () => { calls.push('create'); return { id: 'w1' } },
    save: async () => { calls.push('save'); throw new BadRequest('refused') },
    delete: async (_o: string, id: string) => { calls.push(`delete ${id}`) },
  } as unknown as WorkflowService
  const sessions = { get: async () => ({ id: 's1', status: 'completed', analysis: new RawJson(JSON.stringify(sampleAnalysis())) }) }
  const service = new ImportService({ sessions: sessions as never, workflows, publish: () => undefined, policy: null as never, gitLimits: null as never, ttlMs: 1000, heartbeatMs: 1000, concurrency: 1, log: console })
  await t.rejects(service.createWorkflow('u1', { import_id: 's1', name: 'x' }), /refused/)
  t.same(calls, ['create', 'save', 'delete w1'])
})

t.test('only a completed session can be applied: 409 naming its state', async (t) => {
  const wf = await call(owner, 'POST', '/v1/api/workflows', { name: 'waiting' })
  const running = await f.seedSession(owner, sampleAnalysis(), { status: 'analyzing', analysis: null, finished_at: null })
  const failed = await f.seedSession(owner, sampleAnalysis(), { status: 'failed', analysis: null, error: 'services.web.image must be a string' })
  const a = await call(owner, 'POST', '/v1/api/import/apply', { import_id: running, workflow_id: wf.body.id, mode: 'merge' })
  t.same([a.status, a.body.error], [409, `import ${running} is still analyzing; apply it once it has completed`])
  const b = await call(owner, 'POST', '/v1/api/import/create-workflow', { import_id: failed, name: 'x' })
  t.equal(b.status, 409)
  t.match(b.body.error, /failed \(services\.web\.image must be a string\)/)
})

t.test('bad bodies are 400 naming the field', async (t) => {
  const importId = await f.seedSession(owner, sampleAnalysis())
  const wf = await call(owner, 'POST', '/v1/api/workflows', { name: 'x' })
  const res = await call(owner, 'POST', '/v1/api/import/apply', { import_id: importId, workflow_id: wf.body.id, mode: 'append' })
  t.equal(res.status, 400)
  t.match(res.body.error, /mode/)
  t.equal((await call(owner, 'POST', '/v1/api/import/create-workflow', { import_id: importId })).status, 400)
})

t.test('mergeGraphs: names cut to 63 characters keep their suffix; positions and unknown keys preserved', async (t) => {
  const long = 'a'.repeat(63)
  const existing = { nodes: [{ id: 'n', type: 'deployment', position: { x: 100, y: 50 }, width: 300, data: { name: long } }], edges: [] }
  const incoming = { nodes: [{ id: 'n', type: 'deployment', position: { x: 0, y: 0 }, data: { name: long, image: 'x' }, extra: true }], edges: [] }
  const merged = mergeGraphs(existing, incoming)
  const added = merged.nodes[1] as unknown as { id: string; data: { name: string }; position: { x: number; y: number }; extra?: boolean }
  t.equal(added.id, 'n-2')
  t.equal(added.data.name, `${'a'.repeat(61)}-2`)
  t.equal(added.data.name.length, 63)
  t.same(added.position, { x: 100 + 300 + 160, y: 50 }, 'right of the widest node, plus the gap')
  t.equal(added.extra, true)
  t.same(mergeGraphs(existing, incoming), merged, 'deterministic')
})
