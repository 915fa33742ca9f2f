// The all-types graph, rendered for a run, is accepted object by object by a Kubernetes API server shape
// (the simulator in test/kube-sim) through client-node's server-side apply, in the order rendered.
import t from 'tap'
import { KubeConfig, KubernetesObjectApi, PatchStrategy, type KubernetesObject } from '@kubernetes/client-node'
import { renderWorkflow, MANAGED_BY, MANAGED_BY_LABEL, NODE_ID_ANNOTATION } from '../../src/manifests/index.ts'
import { startTestCluster } from '../helpers/kube.ts'
import { ctx, fullCanvas } from './canvas.ts'

const sim = await startTestCluster(t)
const kc = new KubeConfig()
kc.loadFromString(sim.kubeconfigYaml('token'))
const client = KubernetesObjectApi.makeApiClient(kc)

t.test('every object of the all-types graph is accepted by server-side apply and reads back as applied', async (t) => {
  const result = await renderWorkflow(fullCanvas(), ctx({
    revealSecrets: true, secrets: { 'n-secret': { DB_PASSWORD: 'pw', API_KEY: 'key' } }, envVars: { 'n-deployment': { RUN_ID: '42' } },
  }))
  t.same(result.diagnostics, [])
  t.equal(result.objects.length, 17)
  for (const { node_id, object } of result.objects) {
    const label = `${object.kind} ${object.metadata.name}`
    const applied = await client.patch(object as KubernetesObject, undefined, undefined, MANAGED_BY, undefined, PatchStrategy.ServerSideApply)
      .catch((err: unknown) => { t.fail(`${label}: ${err instanceof Error ? err.message : String(err)}`); return null })
    if (!applied) continue
    const back = await client.read({ apiVersion: object.apiVersion, kind: object.kind, metadata: { name: object.metadata.name, ...(object.metadata.namespace && { namespace: object.metadata.namespace }) } })
    t.equal(back.metadata?.labels?.[MANAGED_BY_LABEL], MANAGED_BY, `${label}: managed-by label`)
    t.equal(back.metadata?.annotations?.[NODE_ID_ANNOTATION], node_id, `${label}: node annotation`)
  }
  const secret = await client.read({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'api-secrets', namespace: 'shop' } }) as KubernetesObject & { data?: Record<string, string> }
  t.equal(Buffer.from(secret.data?.DB_PASSWORD ?? '', 'base64').toString(), 'pw', 'the run\'s secret value arrived')
})

t.test('the simulator does refuse what a real API server refuses (so the test above can fail)', async (t) => {
  const bad = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'bad', namespace: 'default' }, spec: { template: { spec: { containers: [{ name: 'c', image: 'nginx', ports: [{ containerPort: 'eighty' }] }] } } } }
  const err = await client.patch(bad as KubernetesObject, undefined, undefined, MANAGED_BY, undefined, PatchStrategy.ServerSideApply).then(() => null, (e: unknown) => e)
  t.ok(err, 'refused')
})
