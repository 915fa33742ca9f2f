// The storage side of a status change: one node's `data._status` set without rewriting anything else of the
// workflow (other nodes, updated_at), the read cache dropped so the next read sees it, another owner's
// workflow untouched; the tracked resource's observed fields moved, its user fields kept.
import t from 'tap'
import { startTestDatabase } from '../helpers/database.ts'
import { WorkflowRepository } from '../../src/repositories/workflows.ts'
import { ResourceRepository } from '../../src/repositories/resources.ts'

const database = await startTestDatabase(t)
const workflows = new WorkflowRepository(database.db, undefined, { cache: { maxEntries: 10 } })
const resources = new ResourceRepository(database.db)
const node = (id: string) => ({ id, type: 'deployment', position: { x: 0, y: 0 }, data: { name: id, image: 'x:1', replicas: 1 } })

t.test('setNodeStatus sets one node\'s _status and nothing else, and the cached read sees it', async (t) => {
  const wf = await workflows.create('owner-a', { name: 'w', description: '', cluster_id: null, nodes: [node('a'), node('b')], edges: [] } as never)
  const before = await workflows.get('owner-a', wf.id)
  t.notOk((before!.nodes[0].data as Record<string, unknown>)._status, 'read (and cached) before')
  t.equal(await workflows.setNodeStatus('owner-a', wf.id, 'b', { state: 'running', message: '1/1 replicas ready', ready: '1/1', replicas: 1 }), true)
  const after = await workflows.get('owner-a', wf.id)
  t.same((after!.nodes[1].data as Record<string, unknown>)._status, { state: 'running', message: '1/1 replicas ready', ready: '1/1', replicas: 1 }, 'the cache entry was dropped')
  t.same(after!.nodes[1].data, { ...node('b').data, _status: { state: 'running', message: '1/1 replicas ready', ready: '1/1', replicas: 1 } }, 'the node\'s own data kept')
  t.same(after!.nodes[0], node('a'), 'the other node untouched')
  t.equal(after!.updated_at, before!.updated_at, 'not an edit: updated_at unchanged')
  t.equal(await workflows.setNodeStatus('owner-a', wf.id, 'b', { state: 'failed', message: 'x' }), true)
  t.same(((await workflows.get('owner-a', wf.id))!.nodes[1].data as Record<string, unknown>)._status, { state: 'failed', message: 'x' }, 'replaced whole')
  t.equal(await workflows.setNodeStatus('owner-b', wf.id, 'b', { state: 'deleted', message: '' }), false, 'another owner: no match')
  t.equal(await workflows.setNodeStatus('owner-a', wf.id, 'nope', { state: 'deleted', message: '' }), false, 'unknown node: no match')
  t.equal(await workflows.setNodeStatus('owner-a', 'not-an-id', 'b', { state: 'deleted', message: '' }), false)
  t.equal(((await workflows.get('owner-a', wf.id))!.nodes[1].data as Record<string, unknown> & { _status: { state: string } })._status.state, 'failed')
})

t.test('setStatus moves the observed fields only; watchable lists what is not deleted', async (t) => {
  await resources.observe('owner-a', 'c1', [
    { namespace: 'ns', kind: 'Deployment', name: 'web', api_version: 'apps/v1', uid: null, labels: {}, status: 'pending', status_message: '', ready: '0/1', counters: {}, workflow_id: 'w1', node_id: 'n', cluster: 'c' },
    { namespace: 'ns', kind: 'ConfigMap', name: 'cfg', api_version: 'v1', uid: null, labels: {}, status: 'running', status_message: '', ready: null, counters: {}, workflow_id: 'w1', node_id: 'm', cluster: 'c' },
  ])
  const web = (await resources.forCluster('owner-a', 'c1')).find((d) => d.name === 'web')!
  await resources.updateUserFields('owner-a', web._id, { is_favorite: true, user_notes: 'mine' })
  t.ok(await resources.setStatus('owner-a', web._id, { status: 'running', status_message: '1/1 replicas ready', ready: '1/1', counters: { replicas: 1 } }))
  const doc = await resources.get('owner-a', web._id)
  t.match(doc, { status: 'running', status_message: '1/1 replicas ready', ready: '1/1', counters: { replicas: 1 }, is_favorite: true, user_notes: 'mine' })
  t.equal(await resources.setStatus('owner-b', web._id, { status: 'deleted', status_message: '', ready: null, counters: {} }), null, 'another owner\'s record is not found')
  await resources.setStatus('owner-a', web._id, { status: 'deleted', status_message: 'deleted from the cluster', ready: null, counters: {} })
  t.same((await resources.watchable('owner-a')).map((d) => d.name), ['cfg'])
  t.same((await resources.watchable()).map((d) => d.name), ['cfg'], 'every owner\'s (start-up)')
  t.same(await resources.watchable('owner-b'), [])
})
