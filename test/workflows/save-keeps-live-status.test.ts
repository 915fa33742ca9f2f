// A save keeps every node's stored live status (API.md §14 "Saving keeps live status"): the watchers own
// `data._status` (drift rides inside it: state "drifted", `live_state`, `drift`), so what a client sends
// under that key, a stale copy or a forged one, is ignored on /v1/api and on the KubeOrch adapter alike.
// A node new to the graph gets none; a removed node's goes with it.
import t, { type Test } from 'tap'
import { startTestApp } from '../helpers/app.ts'
import { registerUser } from '../helpers/auth.ts'
import { WorkflowRepository } from '../../src/repositories/workflows.ts'

const { app } = await startTestApp(t)
const owner = await registerUser(app)
// What the resource watchers and the drift detector call to store a node's status.
const watchers = new WorkflowRepository(app.db)

const call = async (method: 'GET' | 'POST', url: string, payload?: object) => {
  const res = await app.inject({ method, url, headers: owner.headers, ...(payload && { payload }) })
  return { status: res.statusCode, body: res.json() }
}

const node = (id: string, extra: Record<string, unknown> = {}) => ({
  id, type: 'deployment', position: { x: 0, y: 0 }, data: { name: id, namespace: 'default', image: 'nginx:1.27', replicas: 1, ...extra },
})

/** A status as the drift detector leaves it (src/services/lifecycle/drift/node-status.ts). */
const DRIFTED = { state: 'drifted', live_state: 'running', message: '1/1 replicas ready', drift: { detected_at: '2026-12-01T10:00:00.000Z', fields: ['spec.replicas'] } }
const RUNNING = { state: 'running', message: '2/2 replicas ready', ready: 2 }
const FORGED = { state: 'failed', message: 'forged by the client', drift: { detected_at: '1999-01-01T00:00:00.000Z', fields: ['spec.template'] } }

type Node = { id: string; data: Record<string, unknown> }
const statusOf = (nodes: Node[], id: string) => nodes.find((n) => n.id === id)?.data._status

/** A workflow with nodes a, b, c deployed: a drifted, b running, c never reported on. */
async function deployedWorkflow(t: Test, name: string): Promise<string> {
  const created = await call('POST', '/v1/api/workflows', { name })
  t.equal(created.status, 201)
  const id = created.body.id as string
  t.equal((await call('POST', `/v1/api/workflows/${id}/save`, { nodes: [node('a'), node('b'), node('c')], edges: [] })).status, 200)
  t.ok(await watchers.setNodeStatus(owner.user.id, id, 'a', DRIFTED))
  t.ok(await watchers.setNodeStatus(owner.user.id, id, 'b', RUNNING))
  return id
}

// The UI's save answers `{workflow}`; /v1/api's the workflow itself. The UI re-encodes statuses on the way
// out, so its reply is compared through the stored workflow (/v1/api GET), which is what the test is about.
const prefixes = [
  { name: '/v1/api', save: async (id: string, body: object) => { const r = await call('POST', `/v1/api/workflows/${id}/save`, body); return { status: r.status, nodes: r.body.nodes as Node[] } } },
  { name: '/kubeorch/v1/api', save: async (id: string, body: object) => { const r = await call('POST', `/kubeorch/v1/api/workflows/${id}/save`, body); return { status: r.status, nodes: r.body.workflow?.nodes as Node[] } } },
]

for (const prefix of prefixes) {
  t.test(`${prefix.name}: a save keeps the stored status and drift; a new node gets none; a removed node loses its own`, async (t) => {
    const id = await deployedWorkflow(t, `keeps ${prefix.name}`)
    // A stale copy for a (a status from before it drifted), a forged one for b, and one for a node the
    // client just added; c is removed from the graph.
    const body = {
      nodes: [
        node('a', { replicas: 3, _status: { state: 'running', message: 'stale' } }),
        node('b', { _status: FORGED }),
        node('d', { _status: { state: 'running', message: 'invented for a node never deployed' } }),
      ],
      edges: [],
    }
    const saved = await prefix.save(id, body)
    t.equal(saved.status, 200)
    t.same(saved.nodes.map((n) => n.id), ['a', 'b', 'd'], 'the graph is the one sent')
    const stored = (await call('GET', `/v1/api/workflows/${id}`)).body.nodes as Node[]
    t.same(statusOf(stored, 'a'), DRIFTED, 'a keeps its stored status, drift included')
    t.equal(stored.find((n) => n.id === 'a')!.data.replicas, 3, 'the rest of the node is saved as sent')
    t.same(statusOf(stored, 'b'), RUNNING, 'b keeps the watchers\' status, not the forged one')
    t.notOk('_status' in stored.find((n) => n.id === 'd')!.data, 'a new node has no status, whatever was sent')
    t.notOk(stored.some((n) => n.id === 'c'), 'the removed node is gone')
    if (prefix.name === '/v1/api') t.same(saved.nodes, stored, 'the reply is what is stored')

    // c comes back as a new node: the status it had is not revived.
    const again = await prefix.save(id, { nodes: [...body.nodes, node('c', { _status: RUNNING })], edges: [] })
    t.equal(again.status, 200)
    const after = (await call('GET', `/v1/api/workflows/${id}`)).body.nodes as Node[]
    t.notOk('_status' in after.find((n) => n.id === 'c')!.data, 'a node removed and added again starts without a status')
    t.same(statusOf(after, 'a'), DRIFTED)
  })
}

t.test('a node whose status the watchers have not written keeps having none, and a save sending none keeps the stored one', async (t) => {
  const id = await deployedWorkflow(t, 'no status sent')
  const saved = await call('POST', `/v1/api/workflows/${id}/save`, { nodes: [node('a'), node('b'), node('c')], edges: [] })
  t.equal(saved.status, 200)
  t.same(statusOf(saved.body.nodes, 'a'), DRIFTED)
  t.same(statusOf(saved.body.nodes, 'b'), RUNNING)
  t.notOk('_status' in saved.body.nodes.find((n: Node) => n.id === 'c').data)
})

t.test('another user\'s workflow is not found, and nothing of it changes', async (t) => {
  const id = await deployedWorkflow(t, 'not yours')
  const other = await registerUser(app)
  const res = await app.inject({ method: 'POST', url: `/v1/api/workflows/${id}/save`, headers: other.headers, payload: { nodes: [node('a', { _status: FORGED })], edges: [] } })
  t.equal(res.statusCode, 404)
  t.same(statusOf((await call('GET', `/v1/api/workflows/${id}`)).body.nodes, 'a'), DRIFTED)
})

t.test('a status the watchers write while a save is under way is not lost to it', async (t) => {
  const id = await deployedWorkflow(t, 'racing watcher')
  const repo = new WorkflowRepository(app.db)
  const NEWER = { state: 'pending', message: 'rolling out' }
  // The save has read the stored statuses (a: drifted, b: running); the watchers write b and c before it writes.
  const wf = await repo.saveGraph(owner.user.id, id, { edges: [] }, async (stored) => {
    const merged = [node('a'), node('b'), node('c')].map((n) => {
      const live = stored.find((s) => s.id === n.id)?.data?._status
      return live === undefined ? n : { ...n, data: { ...n.data, _status: live } }
    })
    t.ok(await watchers.setNodeStatus(owner.user.id, id, 'b', NEWER))
    t.ok(await watchers.setNodeStatus(owner.user.id, id, 'c', RUNNING))
    return merged
  })
  t.ok(wf)
  const stored = (await call('GET', `/v1/api/workflows/${id}`)).body.nodes as Node[]
  t.same(statusOf(stored, 'a'), DRIFTED)
  t.same(statusOf(stored, 'b'), NEWER, 'the newer status of b stays')
  t.same(statusOf(stored, 'c'), RUNNING, 'c\'s first status stays')
  t.same(statusOf(wf!.nodes as Node[], 'b'), NEWER, 'and the reply says so')
})
