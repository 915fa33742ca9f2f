// What the diagnostics tests share: the app on its own database, a user, optionally one simulator
// registered as cluster "sim", and a way to put a workflow's objects into the simulator the way a run
// does (server-side apply of the rendered objects, plus the run record that says where they went),
// independent of the run route.
import { KubeConfig, KubernetesObjectApi, PatchStrategy, type KubernetesObject } from '@kubernetes/client-node'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import { registerUser, type TestUser } from '../helpers/auth.ts'
import { startTestCluster, simClusterBody } from '../helpers/kube.ts'
import type { KubeSim } from '../kube-sim/index.ts'
import { renderWorkflow, MANAGED_BY } from '../../src/manifests/index.ts'
import { newId } from '../../src/repositories/ids.ts'

interface Teardown { teardown(fn: () => unknown): void }
type Graph = { nodes: Array<{ id: string; type: string; data?: Record<string, unknown> }>; edges: Array<{ id: string; source: string; target: string }> }
export interface CheckBody { name: string; status: 'pass' | 'warning' | 'error'; message: string; suggestion?: string; fix_type?: string }
export interface DiagBody { node_id: string; kind: string; overall_status: string; checks: CheckBody[]; checked_at: string }

export interface DiagFixture extends TestApp {
  owner: TestUser
  call(user: TestUser, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object): Promise<{ status: number; body: any }>
  workflow(graph: Graph, cluster?: string | null): Promise<string>
  graphOf(id: string): Promise<Graph>
  diagnose(id: string, nodeId: string, user?: TestUser): Promise<DiagBody>
}

export interface SimFixture extends DiagFixture {
  sim: KubeSim
  client: KubernetesObjectApi
  /** Applies the workflow's objects (all, or those of `only`; none with `recordOnly`) to the simulator and records a finished run there. */
  deploy(id: string, options?: { only?: string[]; namespace?: string; cluster?: string; recordOnly?: boolean }): Promise<void>
}

/** The value every secret key gets when deployed: it must never appear in a reply. */
export const SECRET_VALUE = 'S3cr3t-diag-value-7f1c'

export const node = (id: string, type: string, data: Record<string, unknown>) => ({ id, type, position: { x: 0, y: 0 }, data })
export const edge = (source: string, target: string) => ({ id: `e-${source}-${target}`, source, target })

/** The checks of one name. */
export const checks = (body: DiagBody, name: string) => body.checks.filter((c) => c.name === name)
export const only = (body: DiagBody, name: string): CheckBody => {
  const found = checks(body, name)
  if (found.length !== 1) throw new Error(`expected one ${name} check, got ${JSON.stringify(body.checks)}`)
  return found[0]
}

export async function diagFixture(t: Teardown): Promise<DiagFixture> {
  const testApp = await startTestApp(t)
  const { app } = testApp
  const owner = await registerUser(app)
  const call: DiagFixture['call'] = async (user, method, url, payload) => {
    const res = await app.inject({ method, url, headers: user.headers, ...(payload && { payload }) })
    return { status: res.statusCode, body: res.body ? res.json() : undefined }
  }
  return {
    ...testApp, owner, call,
    async workflow(graph, cluster = null) {
      const res = await call(owner, 'POST', '/v1/api/workflows', { name: 'diag', ...(cluster && { cluster_id: cluster }) })
      if (res.status !== 201) throw new Error(`workflow: ${res.status} ${JSON.stringify(res.body)}`)
      const saved = await call(owner, 'POST', `/v1/api/workflows/${res.body.id}/save`, graph)
      if (saved.status !== 200) throw new Error(`save: ${saved.status} ${JSON.stringify(saved.body)}`)
      return res.body.id as string
    },
    async graphOf(id) {
      const res = await call(owner, 'GET', `/v1/api/workflows/${id}`)
      return { nodes: res.body.nodes, edges: res.body.edges }
    },
    async diagnose(id, nodeId, user = owner) {
      const res = await call(user, 'GET', `/v1/api/workflows/${id}/nodes/${nodeId}/diagnostics`)
      if (res.status !== 200) throw new Error(`diagnostics: ${res.status} ${JSON.stringify(res.body)}`)
      return res.body as DiagBody
    },
  }
}

export async function simFixture(t: Teardown): Promise<SimFixture> {
  const sim = await startTestCluster(t)
  const base = await diagFixture(t)
  const created = await base.call(base.owner, 'POST', '/v1/api/clusters', simClusterBody(sim, 'sim'))
  if (created.status !== 201) throw new Error(`cluster: ${created.status} ${JSON.stringify(created.body)}`)
  const kc = new KubeConfig()
  kc.loadFromString(sim.kubeconfigYaml('token'))
  const client = KubernetesObjectApi.makeApiClient(kc)
  return {
    ...base, sim, client,
    async deploy(id, options = {}) {
      const graph = await base.graphOf(id)
      const secrets = Object.fromEntries(graph.nodes.filter((n) => n.type === 'secret').map((n) => [n.id, Object.fromEntries(((n.data?.keys as string[]) ?? []).map((k) => [k, SECRET_VALUE]))]))
      const rendered = await renderWorkflow(graph, {
        workflowId: id, namespace: options.namespace, revealSecrets: true, secrets,
        plugins: (ref) => base.app.services.plugins.getForRender(ref),
      })
      const applied = rendered.objects.filter((o) => !options.only || options.only.includes(o.node_id))
      if (!options.recordOnly) for (const { object } of applied) await client.patch(object as KubernetesObject, undefined, undefined, MANAGED_BY, undefined, PatchStrategy.ServerSideApply)
      const cluster = (await base.call(base.owner, 'GET', `/v1/api/clusters/${options.cluster ?? 'sim'}`)).body
      const now = new Date()
      await base.app.db.collection('workflow_runs').insertOne({
        _id: newId() as never, owner_id: base.owner.user.id, workflow_id: id, version: 1, cluster: cluster.name, cluster_id: cluster.id,
        namespace: options.namespace ?? null, status: 'completed', dry_run: false, started_at: now, finished_at: now, duration_ms: 1,
        triggered_by: base.owner.user.id, logs: [], error: null,
        nodes: applied.map((o) => ({ node_id: o.node_id, kind: o.object.kind, name: o.object.metadata.name, namespace: o.object.metadata.namespace ?? null, action: 'created', message: 'created' })),
      })
    },
  }
}
