// How node and pod lists become totals: requests as the scheduler counts them (containers summed, the
// largest init container if larger, plus overhead; finished and unscheduled pods hold nothing), phases
// with a catch-all, nodes whose allocatable is missing counted as fully allocatable.
import t from 'tap'
import type { V1Node, V1Pod } from '@kubernetes/client-node'
import { readNodes, readPods, podRequest } from '../../src/kube/cluster-usage.ts'

const pod = (phase: string | undefined, spec: Partial<V1Pod['spec']> & { containers?: V1Pod['spec'] extends infer S ? S extends { containers: infer C } ? C : never : never } = {}, nodeName: string | null = 'n1'): V1Pod =>
  ({ metadata: { name: 'p' }, spec: { containers: [], ...(nodeName && { nodeName }), ...spec }, status: phase === undefined ? {} : { phase } }) as V1Pod
const req = (cpu?: string, memory?: string) => ({ name: 'c', resources: { requests: { ...(cpu && { cpu }), ...(memory && { memory }) } } })

t.test('a pod\'s request: containers summed, the largest init container when larger, plus overhead', async (t) => {
  t.equal(podRequest(pod('Running', { containers: [req('100m', '64Mi'), req('150m', '16Mi')] }), 'cpu'), 0.25)
  t.equal(podRequest(pod('Running', { containers: [req('100m', '64Mi'), req('150m', '16Mi')], initContainers: [req('400m', '32Mi'), req('50m')] }), 'cpu'), 0.4, 'init 400m > 250m')
  t.equal(podRequest(pod('Running', { containers: [req('100m', '64Mi'), req('150m', '16Mi')], initContainers: [req('400m', '32Mi')] }), 'memory'), 80 * 2 ** 20, 'containers 80Mi > init 32Mi')
  t.equal(podRequest(pod('Running', { containers: [req('1')], overhead: { cpu: '250m' } }), 'cpu'), 1.25)
  t.equal(podRequest(pod('Running', { containers: [{ name: 'c' }, req(undefined, 'nonsense')] }), 'memory'), 0, 'no requests, or unreadable ones, add nothing')
})

t.test('pods by phase; only scheduled, unfinished pods hold requests', async (t) => {
  const totals = readPods([
    pod('Running', { containers: [req('1', '1Gi')] }),
    pod('Pending', { containers: [req('2', '1Gi')] }, null), // not scheduled: holds no node's resources
    pod('Pending', { containers: [req('500m')] }),
    pod('Succeeded', { containers: [req('4', '4Gi')] }),
    pod('Failed', { containers: [req('4', '4Gi')] }),
    pod(undefined, { containers: [req('100m')] }),
    pod('Weird', {}),
  ])
  t.same(totals.by_phase, { pending: 2, running: 1, succeeded: 1, failed: 1, unknown: 2 })
  t.equal(totals.total, 7)
  t.equal(Math.round(totals.requests.cpu_cores * 1000), 1600)
  t.equal(totals.requests.memory_bytes, 2 ** 30)
})

t.test('nodes: ready by condition, capacity and allocatable summed, allocatable defaults to capacity', async (t) => {
  const node = (name: string, ready: string, capacity: Record<string, string>, allocatable?: Record<string, string>): V1Node =>
    ({ metadata: { name }, status: { capacity, ...(allocatable && { allocatable }), conditions: [{ type: 'Ready', status: ready }] } }) as V1Node
  const totals = readNodes([
    node('a', 'True', { cpu: '4', memory: '16Gi', 'ephemeral-storage': '100Gi' }, { cpu: '3800m', memory: '15Gi' }),
    node('b', 'False', { cpu: '2', memory: '8Gi' }),
    { metadata: { name: 'c' } } as V1Node,
  ])
  t.equal(totals.total, 3)
  t.equal(totals.ready, 1)
  t.same(totals.capacity, { cpu_cores: 6, memory_bytes: 24 * 2 ** 30, storage_bytes: 100 * 2 ** 30 })
  t.equal(Math.round(totals.allocatable.cpu_cores * 1000), 5800)
  t.equal(totals.allocatable.memory_bytes, 23 * 2 ** 30)
  t.same(totals.nodes.map((n) => [n.name, n.ready]), [['a', true], ['b', false], ['c', false]])
})
