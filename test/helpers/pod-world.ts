// The cast of the pod-facing tests (logs, terminal): alice owns the simulator as a cluster and shares it with
// carol as viewer; bob is a stranger. `create` writes objects straight into the simulator and `track` records
// one of its Deployments as a run would, answering the tracked resource's id.
import type { App } from '../../src/app-types.ts'
import type { KubeSim } from '../kube-sim/index.ts'
import { raw } from '../kube-sim/test-helpers.ts'
import { registerUser, type TestUser } from './auth.ts'
import { simClusterBody } from './kube.ts'

export async function podWorld(app: App, sim: KubeSim, clusterName: string) {
  const alice = await registerUser(app)
  const bob = await registerUser(app)
  const carol = await registerUser(app)

  async function call(u: TestUser, method: 'GET' | 'POST', url: string, payload?: object) {
    const res = await app.inject({ method, url, headers: u.headers, ...(payload && { payload }) })
    return { status: res.statusCode, body: res.body ? res.json() : undefined }
  }
  const cluster = (await call(alice, 'POST', '/v1/api/clusters', simClusterBody(sim, clusterName))).body as { id: string }
  const shared = await call(alice, 'POST', `/v1/api/clusters/${clusterName}/share`, { email: carol.user.email, role: 'viewer' })
  if (shared.status !== 200) throw new Error(`share: ${JSON.stringify(shared.body)}`)

  async function create(path: string, body: object): Promise<void> {
    const res = await raw(sim, 'POST', path, { body })
    if (res.status !== 201) throw new Error(`${path}: ${res.status} ${res.text}`)
  }

  async function track(u: TestUser, name: string, namespace: string): Promise<string> {
    const wf = (await call(u, 'POST', '/v1/api/workflows', { name: `wf-${name}-${u.user.id}` })).body as { id: string }
    await app.services.resources.recordApplied(u.user.id, { workflow_id: wf.id, cluster_id: cluster.id, cluster: clusterName }, [
      { node_id: name, api_version: 'apps/v1', kind: 'Deployment', name, namespace, action: 'created', uid: null, labels: {} },
    ])
    return (await app.services.resources.findForNode(u.user.id, wf.id, name))[0].id
  }

  return { alice, bob, carol, call, cluster, create, track }
}
