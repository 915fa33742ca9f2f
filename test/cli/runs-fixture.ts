// What the run-related cwo tests share: a workflow made through the API (not through `cwo apply`, which is
// tested on its own), and reads of the simulated cluster with its admin token.
import type { CliWorld } from './harness.ts'
import { raw } from '../kube-sim/test-helpers.ts'

export const node = (id: string, type: string, data: Record<string, unknown>) => ({ id, type, position: { x: 0, y: 0 }, data })

export const deployment = (ns: string, image: string, name = 'web') => node(name, 'deployment', { name, namespace: ns, image, port: 80, replicas: 1 })

/** A workflow of the world's user on the simulator, with this graph; answers its id. */
export async function workflow(w: CliWorld, name: string, nodes: object[], edges: object[] = []): Promise<string> {
  const created = await w.app.app.inject({ method: 'POST', url: '/v1/api/workflows', headers: w.user.headers, payload: { name, cluster_id: w.cluster } })
  if (created.statusCode !== 201) throw new Error(`workflow: ${created.statusCode} ${created.body}`)
  const id = created.json().id as string
  await saveGraph(w, id, nodes, edges)
  return id
}

export async function saveGraph(w: CliWorld, id: string, nodes: object[], edges: object[] = []): Promise<void> {
  const res = await w.app.app.inject({ method: 'POST', url: `/v1/api/workflows/${id}/save`, headers: w.user.headers, payload: { nodes, edges } })
  if (res.statusCode !== 200) throw new Error(`save: ${res.statusCode} ${res.body}`)
}

/** The Deployment's container image on the cluster, or null when there is no such Deployment. */
export async function liveImage(w: CliWorld, ns: string, name = 'web'): Promise<string | null> {
  const res = await raw(w.sim, 'GET', `/apis/apps/v1/namespaces/${ns}/deployments/${name}`)
  if (res.status === 404) return null
  if (res.status !== 200) throw new Error(`GET deployment: ${res.status} ${res.text}`)
  return res.json.spec.template.spec.containers[0].image
}

/** Resolves when the next run of the workflow ends on the server (whatever any cwo does meanwhile). */
export function runFinished(w: CliWorld, workflowId: string): Promise<unknown> {
  return w.app.app.bus.next('run.finished', (e) => e.workflow_id === workflowId)
}
