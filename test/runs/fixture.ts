// What every run test needs: the app on its own database, one simulator registered as a cluster, a user
// who owns it, a realistic graph, kubectl against the simulator, and a check that no run-time secret value
// reached any stored document or log line.
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import { registerUser, type TestUser } from '../helpers/auth.ts'
import { startTestCluster, simClusterBody } from '../helpers/kube.ts'
import type { KubeSim, KubeSimOptions } from '../kube-sim/index.ts'
import type { testConfig } from '../../src/config.ts'

const run = promisify(execFile)

interface Teardown { teardown(fn: () => unknown): void }

export interface RunFixture extends TestApp {
  sim: KubeSim
  owner: TestUser
  kubectl(...args: string[]): Promise<string>
  /** kubectl with `input` on its stdin (e.g. apply -f -). */
  kubectlStdin(input: string, ...args: string[]): Promise<string>
  kubectlJson<T = Record<string, any>>(...args: string[]): Promise<T>
  call(user: TestUser, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object): Promise<{ status: number; body: any; headers: Record<string, unknown> }>
  /** A workflow of `owner` with this graph, pointed at the simulator ("sim"). */
  workflow(graph: { nodes: object[]; edges: object[] }, name?: string): Promise<string>
  save(id: string, graph: { nodes: object[]; edges: object[] }): Promise<void>
  /** Every document of the run collections, the workflows and the log, as one string to search. */
  everythingStored(): Promise<string>
}

export async function runFixture(t: Teardown, config: Parameters<typeof testConfig>[0] = {}, simOptions: KubeSimOptions = {}): Promise<RunFixture> {
  const sim = await startTestCluster(t, simOptions)
  const testApp = await startTestApp(t, { RUN_READY_TIMEOUT_MS: 5000, ...config })
  const { app } = testApp
  const owner = await registerUser(app)
  const kubeconfig = sim.kubeconfigPath()
  const call: RunFixture['call'] = async (user, method, url, payload) => {
    const res = await app.inject({ method, url, headers: user.headers, ...(payload && { payload }) })
    return { status: res.statusCode, body: res.body ? res.json() : undefined, headers: res.headers }
  }
  const created = await call(owner, 'POST', '/v1/api/clusters', simClusterBody(sim, 'sim'))
  if (created.status !== 201) throw new Error(`cluster: ${created.status} ${JSON.stringify(created.body)}`)
  const kubectl = async (...args: string[]) => (await run('kubectl', ['--kubeconfig', kubeconfig, ...args], { timeout: 30_000 })).stdout
  const save = async (id: string, graph: { nodes: object[]; edges: object[] }) => {
    const res = await call(owner, 'POST', `/v1/api/workflows/${id}/save`, graph)
    if (res.status !== 200) throw new Error(`save: ${res.status} ${JSON.stringify(res.body)}`)
  }
  return {
    ...testApp, sim, owner, call, kubectl, save,
    kubectlStdin: async (input, ...args) => {
      const child = run('kubectl', ['--kubeconfig', kubeconfig, ...args], { timeout: 30_000 })
      child.child.stdin!.end(input)
      return (await child).stdout
    },
    kubectlJson: async (...args) => JSON.parse(await kubectl(...args, '-o', 'json')),
    async workflow(graph, name = 'shop') {
      const res = await call(owner, 'POST', '/v1/api/workflows', { name, cluster_id: 'sim' })
      if (res.status !== 201) throw new Error(`workflow: ${res.status} ${JSON.stringify(res.body)}`)
      await save(res.body.id, graph)
      return res.body.id as string
    },
    async everythingStored() {
      const parts: string[] = []
      for (const name of ['workflow_runs', 'workflow_versions', 'workflows', 'resources']) {
        parts.push(JSON.stringify(await app.db.collection(name).find({}).toArray()))
      }
      return `${parts.join('\n')}\n${testApp.logs.join('')}`
    },
  }
}

export const node = (id: string, type: string, data: Record<string, unknown>) => ({ id, type, position: { x: 0, y: 0 }, data })
export const edge = (source: string, target: string) => ({ id: `e-${source}-${target}`, source, target })

export const SECRET_VALUE = 'S3cr3t-DB-pa55word-9f2c'
export const ENV_VALUE = 'env-token-77aa41be'
export const TRIGGER = { secrets: { 'n-secret': { DB_PASSWORD: SECRET_VALUE } }, envVars: { 'n-api': { API_TOKEN: ENV_VALUE } } }

/** configmap + secret + pvc + deployment + service + ingress + hpa, wired as a user would draw them (the HPA owns the replica count). */
export function shopGraph(overrides: { namespace?: string; image?: string; replicas?: number; logFormat?: string } = {}) {
  const ns = overrides.namespace ?? 'shop'
  return {
    nodes: [
      node('n-config', 'configmap', { name: 'api-config', namespace: ns, data: { LOG_FORMAT: overrides.logFormat ?? 'json' } }),
      node('n-secret', 'secret', { name: 'api-secrets', namespace: ns, secretType: 'Opaque', keys: ['DB_PASSWORD'] }),
      node('n-pvc', 'persistentvolumeclaim', { name: 'uploads', namespace: ns, storage: '1Gi', accessModes: ['ReadWriteOnce'], mountPath: '/srv/uploads' }),
      node('n-api', 'deployment', { name: 'api', namespace: ns, image: overrides.image ?? 'ghcr.io/acme/api:1.4.2', port: 8080, ...(overrides.replicas !== undefined && { replicas: overrides.replicas }), labels: { team: 'payments' } }),
      node('n-svc', 'service', { name: 'api-svc', namespace: ns, serviceType: 'ClusterIP', port: 80, targetPort: 8080 }),
      node('n-ing', 'ingress', { name: 'web', namespace: ns, host: 'shop.example.com', paths: [{ path: '/', pathType: 'Prefix', serviceName: 'api-svc', servicePort: 80 }] }),
      node('n-hpa', 'hpa', { name: 'api-hpa', namespace: ns, minReplicas: 2, maxReplicas: 5, targetCPUUtilization: 70 }),
    ],
    edges: [
      edge('n-config', 'n-api'), edge('n-secret', 'n-api'), edge('n-pvc', 'n-api'),
      edge('n-api', 'n-svc'), edge('n-svc', 'n-ing'), edge('n-api', 'n-hpa'),
    ],
  }
}
