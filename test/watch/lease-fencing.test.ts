// Fencing of the watchers' writes (API.md §11): a record keeps the highest cluster-lease epoch that wrote it
// and refuses a lower one, so a replica that lost a cluster without noticing cannot overwrite the status its
// successor stored. Without an epoch (a single replica) writes are unfenced, as before replicas.
import t from 'tap'
import { startTestDatabase } from '../helpers/database.ts'
import { ResourceRepository, STALE, toResource, type ObservedResource } from '../../src/repositories/resources.ts'

const database = await startTestDatabase(t)
const resources = new ResourceRepository(database.db)

const observed = (name: string, over: Partial<ObservedResource> = {}): ObservedResource => ({
  namespace: 'ns', kind: 'Deployment', name, api_version: 'apps/v1', uid: null, labels: {}, status: 'pending', status_message: '', ready: '0/1', counters: {},
  workflow_id: 'w1', node_id: 'n', cluster: 'c', ...over,
})
const status = (s: 'running' | 'failed' | 'pending', message = '') => ({ status: s, status_message: message, ready: null, counters: {} })

t.test('setStatus: a stale epoch is refused after a newer one wrote; equal and higher ones pass', async (t) => {
  await resources.observe('o', 'c1', [observed('web')])
  const [doc] = await resources.forCluster('o', 'c1')
  t.type(await resources.setStatus('o', doc._id, status('running', 'by epoch 1'), 1), Date, 'epoch 1 writes')
  t.type(await resources.setStatus('o', doc._id, status('running', 'by epoch 2'), 2), Date, 'epoch 2 writes')
  t.equal(await resources.setStatus('o', doc._id, status('failed', 'by epoch 1 again'), 1), STALE, 'epoch 1 after epoch 2: refused')
  let now = await resources.get('o', doc._id)
  t.equal(now!.status_message, 'by epoch 2', 'the newer holder\'s status kept')
  t.equal(now!.watch_epoch, 2, 'the record keeps the highest epoch')
  t.type(await resources.setStatus('o', doc._id, status('failed', 'epoch 2 again'), 2), Date, 'the same epoch writes again')
  t.type(await resources.setStatus('o', doc._id, status('pending', 'unfenced'), null), Date, 'unfenced (one replica) always writes')
  now = await resources.get('o', doc._id)
  t.equal(now!.status_message, 'unfenced')
  t.equal(now!.watch_epoch, 2, 'an unfenced write leaves the epoch as it was')
  t.equal(await resources.setStatus('o', 'aaaaaaaaaaaaaaaaaaaaaaaa', status('running'), 5), null, 'no record: null, not stale')
  t.equal(await resources.setStatus('other', doc._id, status('running'), 5), null, 'another owner\'s record: not found')
  t.notOk('watch_epoch' in toResource(now!), 'the epoch is bookkeeping: not in the API shape')
})

t.test('observe: a pod write with a stale epoch leaves records a newer holder wrote, and writes the rest', async (t) => {
  const pod = (name: string, s: 'running' | 'failed') => observed(name, { kind: 'Pod', parent_id: 'p1', status: s })
  const scope = { namespace: 'ns', kind: 'Pod', parent_id: { $type: 'string' as const } }
  await resources.observe('o', 'c2', [pod('a', 'running'), pod('b', 'running')], { scope, epoch: 3 })
  const docs = await resources.forCluster('o', 'c2')
  t.same(docs.map((d) => d.watch_epoch), [3, 3], 'stamped with the writer\'s epoch')
  // The old holder (epoch 2) still thinks a is failed and b gone.
  const counts = await resources.observe('o', 'c2', [pod('a', 'failed')], { scope, epoch: 2, missingAreDeleted: () => true, onlyChanged: true })
  t.same(counts, { created: 0, updated: 0, deleted: 0 }, 'nothing written over the newer holder\'s records')
  const after = await resources.forCluster('o', 'c2')
  t.same(after.map((d) => [d.name, d.status]).sort(), [['a', 'running'], ['b', 'running']])
  // The new holder (epoch 3) moves them.
  const moved = await resources.observe('o', 'c2', [pod('a', 'failed')], { scope, epoch: 3, missingAreDeleted: () => true, onlyChanged: true })
  t.same(moved, { created: 0, updated: 1, deleted: 1 })
  t.same((await resources.forCluster('o', 'c2')).map((d) => [d.name, d.status]).sort(), [['a', 'failed'], ['b', 'deleted']])
})

t.test('removePods scoped to clusters leaves the pods of clusters another replica watches', async (t) => {
  await resources.observe('o', 'c3', [observed('p', { kind: 'Pod', parent_id: 'gone', status: 'running' })])
  await resources.observe('o', 'c4', [observed('q', { kind: 'Pod', parent_id: 'gone', status: 'running' })])
  t.equal(await resources.removePods('o', { followedParents: [], clusterIds: ['c3'] }), 1, 'only the watched cluster\'s pod')
  t.equal((await resources.forCluster('o', 'c4')).length, 1, 'the other cluster\'s pod kept')
})
