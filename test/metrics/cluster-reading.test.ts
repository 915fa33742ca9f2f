// One cluster's reading through @kubernetes/client-node against the simulator: a pod list longer than one
// page is marked partial (the read stays one request), and a cluster that answers too late is unreachable.
import t from 'tap'
import { startTestCluster } from '../helpers/kube.ts'
import { readCluster } from '../../src/services/metrics/cluster-reading.ts'
import { k8s } from '../../src/kube/client.ts'

const sim = await startTestCluster(t)
const { KubeConfig, CoreV1Api } = await k8s()
const connect = async () => { const kc = new KubeConfig(); kc.loadFromFile(sim.kubeconfigPath()); return kc }

const core = (await connect()).makeApiClient(CoreV1Api)
for (let i = 0; i < 3; i++) {
  await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: `p${i}` }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } })
}

t.test('more pods than one page: counted up to the page, marked partial, in one pod request', async (t) => {
  const before = sim.requestCount()
  const reading = await readCluster(connect, 5000, 2)
  t.ok(reading.reachable)
  if (!reading.reachable) return
  t.equal(reading.pods.total, 2)
  t.equal(reading.pods.partial, true)
  t.equal(sim.requestCount() - before, 2, 'one node list and one pod list')
  const whole = await readCluster(connect, 5000, 100)
  t.ok(whole.reachable && whole.pods.total === 3 && !whole.pods.partial, 'a page large enough holds them all')
})

t.test('a cluster answering after the timeout is unreachable, within the timeout', async (t) => {
  sim.faults.setLatency(10_000)
  t.teardown(() => sim.faults.reset())
  const started = performance.now()
  const reading = await readCluster(connect, 300)
  const elapsed = performance.now() - started
  t.same(reading, { reachable: false, message: 'cannot reach the cluster: timed out' })
  t.ok(elapsed < 1300, `gave up after ${Math.round(elapsed)} ms`)
})
