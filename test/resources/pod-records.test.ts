// The storage and assignment side of pods as tracked resources, on the embedded database: lists, search,
// counts, a node's objects and the watchers' set leave workloads' pods out (a Pod a run applied stays in); a parent marked
// deleted (a prune, a sync) takes its pods along, due to expire; unfollowed workloads' pods are removed;
// another owner's records are never touched. PodRecords gives each pod one parent per owner (a Deployment
// before a ReplicaSet, a CronJob through its job template's labels) and writes only what changed.
import t from 'tap'
import { startTestDatabase } from '../helpers/database.ts'
import { ResourceRepository, type ObservedResource } from '../../src/repositories/resources.ts'
import { PodRecords, type PodParent, type ScopeView } from '../../src/services/pod-records.ts'
import type { KubeObject } from '../../src/manifests/types.ts'

const database = await startTestDatabase(t)
const resources = new ResourceRepository(database.db)
const C = 'cluster-1'

const obs = (kind: string, name: string, extra: Partial<ObservedResource> = {}): ObservedResource => ({
  namespace: 'ns', kind, name, workflow_id: 'wf', node_id: 'n', cluster: 'sim', api_version: kind === 'Deployment' ? 'apps/v1' : 'v1', uid: null,
  status: 'running', status_message: 'ok', ready: null, counters: {}, labels: {}, ...extra,
})

t.test('lists, search, counts and the watchers\' set leave workloads\' pods out unless asked', async (t) => {
  await resources.observe('alice', C, [obs('Deployment', 'web'), obs('Pod', 'solo', { containers: ['c'] })])
  const web = (await resources.list('alice', {}, { kind: 'Deployment' })).items[0]
  await resources.observe('alice', C, [obs('Pod', 'web-1', { parent_id: web.id, containers: ['web'] }), obs('Pod', 'web-2', { parent_id: web.id, containers: ['web'] })])
  const names = async (filter: object) => (await resources.list('alice', { sort: 'name', order: 'asc' } as never, filter)).items.map((r) => r.name)
  t.same(await names({}), ['solo', 'web'], 'by default: the workload and a Pod a run applied (no parent)')
  t.same(await names({ kind: 'Pod' }), ['solo', 'web-1', 'web-2'], 'kind=Pod: every pod')
  t.same(await names({ parent_id: web.id }), ['web-1', 'web-2'], 'parent_id: the workload\'s pods')
  t.same(await names({ parent_id: web.id, status: 'failed' }), [], 'combined with the other filters')
  t.same((await resources.list('bob', {}, { parent_id: web.id })).items, [], 'another owner sees none')
  t.same((await resources.search('alice', 'web', 10)).map((d) => d.name), ['web'])
  t.same((await resources.watchable('alice')).map((d) => d.name).sort(), ['solo', 'web'], 'the watchers follow workloads, not their pods')
  t.same((await resources.findForNode('alice', 'wf', 'n')).map((d) => d.name).sort(), ['solo', 'web'], 'a node\'s objects (its status at the end of a run) without the pods')
  t.same(await resources.countByClusterAndStatus('alice'), [{ cluster_id: C, status: 'running', count: 2 }])
  const pod = (await resources.list('alice', {}, { parent_id: web.id })).items[0]
  t.match(pod, { parent_id: web.id, containers: ['web'] })
  t.equal(web.parent_id, null)
  t.same(await resources.podIds('bob', C, 'ns', ['web-1']), new Map(), 'pod ids are the owner\'s')
  t.equal((await resources.podIds('alice', C, 'ns', ['web-1', 'nope'])).size, 1)
})

t.test('a record written before parent_id existed reads parent_id null and is listed', async (t) => {
  await database.db.collection('resources').insertOne({
    _id: 'a0a0a0a0a0a0a0a0a0a0a0a0' as never, owner_id: 'carol', cluster_id: C, cluster: 'sim', namespace: 'ns', kind: 'ConfigMap', name: 'old', api_version: 'v1', uid: null,
    workflow_id: 'wf', node_id: 'n', status: 'running', status_message: '', ready: null, counters: {}, labels: {}, is_favorite: false, user_tags: [], user_notes: '',
    created_at: new Date(), updated_at: new Date(), last_seen_at: null,
  })
  const items = (await resources.list('carol', {})).items
  t.equal(items.length, 1)
  t.equal(items[0].parent_id, null)
  t.equal((await resources.watchable('carol')).length, 1)
})

t.test('a parent marked deleted (prune, sync) takes its pods along; unfollowed parents\' pods are removed', async (t) => {
  await resources.observe('dave', C, [obs('Deployment', 'a'), obs('Deployment', 'b'), obs('Deployment', 'c')])
  const ids = Object.fromEntries((await resources.list('dave', {})).items.map((r) => [r.name, r.id]))
  await resources.observe('dave', C, [obs('Pod', 'a-1', { parent_id: ids.a }), obs('Pod', 'b-1', { parent_id: ids.b }), obs('Pod', 'c-1', { parent_id: ids.c })])
  await resources.observe('erin', C, [obs('Pod', 'a-1', { parent_id: ids.a })])

  t.equal(await resources.markDeleted('dave', C, [{ namespace: 'ns', kind: 'Deployment', name: 'a' }]), 1)
  const a1 = (await resources.list('dave', {}, { parent_id: ids.a })).items[0]
  t.equal(a1.status, 'deleted', 'a run\'s prune: the pod goes with it')
  const stored = await database.db.collection('resources').findOne({ _id: a1.id as never })
  t.ok(stored?.expires_at instanceof Date && stored.expires_at.getTime() > Date.now(), 'due to expire')
  t.equal((await resources.list('erin', {}, { kind: 'Pod' })).items[0].status, 'running', 'another owner\'s record with the same parent id is untouched')

  // A sync's listing without b: b and its pod are deleted; c (and its pod) were covered and seen.
  await resources.observe('dave', C, [obs('Deployment', 'c'), obs('Pod', 'c-1', { parent_id: ids.c })], { missingAreDeleted: () => true })
  t.equal((await resources.list('dave', {}, { parent_id: ids.b })).items[0].status, 'deleted')
  t.equal((await resources.list('dave', {}, { parent_id: ids.c })).items[0].status, 'running')

  t.equal(await resources.removePods('dave', { followedParents: [] }), 1, 'only the live pod of an unfollowed parent is removed')
  t.same((await resources.list('dave', {}, { kind: 'Pod' })).items.map((p) => [p.name, p.status]).sort(), [['a-1', 'deleted'], ['b-1', 'deleted']], 'deleted ones are left to expire')
  t.equal((await resources.list('erin', {}, { kind: 'Pod' })).items.length, 1, 'another owner\'s untouched')
})

const pod = (name: string, labels: Record<string, string>, extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'jobs', labels, uid: `uid-${name}` },
  spec: { containers: [{ name: 'main' }, { name: 'side' }], nodeName: 'node-1' },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [{ name: 'main', ready: true, restartCount: 0 }, { name: 'side', ready: true, restartCount: 0 }] },
  ...extra,
} as KubeObject)

const parent = (id: string, owner: string, kind: string, name: string, spec: Record<string, unknown>): PodParent => ({
  id, owner_id: owner, workflow_id: `wf-${name}`, node_id: `n-${name}`, cluster_id: C, cluster: 'sim', kind, name, namespace: 'jobs',
  object: { apiVersion: 'apps/v1', kind, metadata: { name, namespace: 'jobs' }, spec } as KubeObject,
})

t.test('PodRecords: one parent per owner by rank, CronJobs by their template, writes only when shown fields change', async (t) => {
  const records = new PodRecords({ resources })
  let view: ScopeView = {
    pods: [pod('web-x', { app: 'web' }), pod('tick-1-abc', { app: 'tick', 'job-name': 'tick-1' }), pod('solo', { app: 'web' })],
    parents: [
      parent('a00000000000000000000001', 'frank', 'ReplicaSet', 'web-rs', { selector: { matchLabels: { app: 'web' } } }),
      parent('a00000000000000000000002', 'frank', 'Deployment', 'web', { selector: { matchLabels: { app: 'web' } } }),
      parent('a00000000000000000000003', 'frank', 'CronJob', 'tick', { jobTemplate: { spec: { template: { metadata: { labels: { app: 'tick' } } } } } }),
      parent('a00000000000000000000004', 'gina', 'Deployment', 'web', { selector: { matchLabels: { app: 'web' } } }),
    ],
    unsettledOwners: new Set(), ownPods: new Set(['frank\nsolo']),
  }
  const flush = async () => { records.touch(C, 'jobs', () => view); await records.idle() }
  await flush()
  const frank = await resources.list('frank', { sort: 'name', order: 'asc' } as never, { kind: 'Pod' })
  t.same(frank.items.map((p) => [p.name, p.parent_id]), [['tick-1-abc', 'a00000000000000000000003'], ['web-x', 'a00000000000000000000002']], 'the Deployment, not its ReplicaSet; the CronJob through its template; a Pod the owner tracks itself is nobody\'s child')
  t.match(frank.items[1], { workflow_id: 'wf-web', node_id: 'n-web', status: 'running', ready: '2/2', containers: ['main', 'side'], counters: { phase: 'Running', restarts: 0, nodeName: 'node-1' } })
  const gina = await resources.list('gina', { sort: 'name', order: 'asc' } as never, { kind: 'Pod' })
  t.same(gina.items.map((p) => [p.name, p.parent_id]), [['solo', 'a00000000000000000000004'], ['web-x', 'a00000000000000000000004']], 'each owner has their own records')

  const observed = records.stats.observed
  await flush()
  t.equal(records.stats.observed, observed, 'nothing changed: no database work')

  view = { ...view, pods: view.pods.map((p) => (p.metadata.name === 'web-x' ? pod('web-x', { app: 'web' }, { status: { phase: 'Running', containerStatuses: [{ name: 'main', ready: false, restartCount: 2, lastState: { terminated: { exitCode: 1, reason: 'Error' } }, state: { waiting: { reason: 'CrashLoopBackOff' } } }] } }) : p)) }
  await flush()
  const failed = (await resources.list('frank', {}, { kind: 'Pod' })).items.find((p) => p.name === 'web-x')!
  t.match(failed, { status: 'failed', status_message: /CrashLoopBackOff/, counters: { restarts: 2 } })

  view = { ...view, pods: view.pods.filter((p) => p.metadata.name !== 'tick-1-abc'), unsettledOwners: new Set(['gina']) }
  await flush()
  t.equal((await resources.list('frank', {}, { kind: 'Pod' })).items.find((p) => p.name === 'tick-1-abc')!.status, 'deleted', 'a pod gone from the cache is marked deleted')
  t.equal((await resources.list('gina', {}, { kind: 'Pod' })).items.length, 2, 'an owner whose workload has not listed yet is left as it is')

  view = { ...view, parents: view.parents.filter((p) => p.owner_id !== 'frank') }
  records.touch(C, 'jobs', () => view, [{ id: 'a00000000000000000000002', owner_id: 'frank' }])
  await records.idle()
  t.same((await resources.list('frank', {}, { kind: 'Pod' })).items.map((p) => [p.name, p.status]), [['tick-1-abc', 'deleted']], 'an unfollowed workload\'s pods are removed')
})
