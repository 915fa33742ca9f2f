// Real records for the fuzzer to aim at: workflows with versions for an admin and a plain user, clusters
// owned by each and one shared, a registry with a password. Clusters and registries point at a closed
// loopback port, so connection routes fail fast and nothing leaves the machine. Every seeded secret is
// kept, so the oracle can prove none of them is ever answered.
import fc from 'fast-check'
import { randomBytes } from 'node:crypto'
import { stringify } from 'yaml'
import type { App } from '../../src/app-types.ts'
import { FIX_TYPES } from '../../src/services/diagnostics/types.ts'
import type { KubeSim } from '../kube-sim/index.ts'
import type { TestUser } from './auth.ts'
import { simClusterBody } from './kube.ts'
import type { PathPools } from './fuzz-requests.ts'
import type { JsonSchema } from './fuzz-schema.ts'

/** Nothing listens on port 1: a connection attempt is refused at once, without leaving the host. */
export const CLOSED = 'https://127.0.0.1:1'

const MISSING_ID = '0123456789abcdef01234567'

/** Records that exist past their 404: a cluster on the simulator, workflows run on it (runs, tracked
 * resources with live objects and pods), builds, and the pools that aim id parameters at them. */
export interface Live {
  clusterName: string
  workflowIds: string[]
  /** What restore puts back: each live workflow's owner and graph. */
  workflows: Array<{ owner: TestUser; id: string; graph: object }>
  pools: PathPools
}

export interface Seeded {
  pools: PathPools
  clusterNames: string[]
  inviteCode: string
  /** Completed import sessions of the admin and the user, and workflows to apply them to. */
  importIds?: string[]
  workflowIds?: string[]
}

export class FuzzWorld {
  readonly secrets: string[] = []

  constructor(readonly app: App, readonly admin: TestUser, readonly user: TestUser) {
    this.secrets.push(admin.password, user.password)
  }

  private secret(label: string): string {
    const value = `${label}-${randomBytes(12).toString('hex')}`
    this.secrets.push(value)
    return value
  }

  private async call(who: TestUser, method: 'POST' | 'PUT', url: string, payload: object): Promise<Record<string, unknown>> {
    const res = await this.app.inject({ method, url, headers: who.headers, payload })
    if (res.statusCode >= 300) throw new Error(`fuzz fixture ${method} ${url}: ${res.statusCode} ${res.body}`)
    return res.json()
  }

  private async workflow(who: TestUser, name: string, versions: number): Promise<string> {
    const wf = await this.call(who, 'POST', '/v1/api/workflows', { name, description: 'fuzz target', metadata: { owner: who.email } })
    const id = wf.id as string
    await this.call(who, 'POST', `/v1/api/workflows/${id}/save`, {
      nodes: [
        { id: 'cm', type: 'configmap', position: { x: 0, y: 0 }, data: { name: 'settings', namespace: 'default' } },
        { id: 'web', type: 'deployment', position: { x: 200, y: 0 }, data: { name: 'web', namespace: 'default', image: 'nginx:1.27', replicas: 1 } },
      ],
      edges: [{ id: 'e1', source: 'cm', target: 'web' }],
    })
    for (let v = 0; v < versions; v++) await this.call(who, 'POST', `/v1/api/workflows/${id}/versions`, { name: `v${v + 1}` })
    return id
  }

  /** A completed import session holding a one-node graph, stored as the import service records one. */
  /** A notification of `who`, made as the service makes them: from a bus event. */
  private async notification(who: TestUser, name: string): Promise<string> {
    this.app.bus.emit('cluster.status', { owner_id: who.user.id, cluster_id: MISSING_ID, name, from: 'connected', to: 'error', message: 'unreachable (fuzz fixture)' })
    await this.app.services.notifications.idle()
    const res = await this.app.inject({ url: `/v1/api/notifications?search=${name}&limit=1`, headers: who.headers })
    return (res.json() as { notifications: Array<{ id: string }> }).notifications[0].id
  }

  /**
   * A notification channel of `who` at a closed port (a test delivery is refused at once, never sent
   * anywhere), its signing secret seeded (never to be seen again); past the per-user channel limit, one
   * made for an earlier operation.
   */
  private async channel(who: TestUser, name: string): Promise<string> {
    const res = await this.app.inject({ method: 'POST', url: '/v1/api/notifications/channels', headers: who.headers, payload: { name, url: CLOSED, events: [], secret: this.secret('channel-secret') } })
    if (res.statusCode === 201) return (res.json() as { id: string }).id
    const list = await this.app.inject({ url: '/v1/api/notifications/channels?limit=1', headers: who.headers })
    return (list.json() as { channels: Array<{ id: string }> }).channels[0]?.id ?? MISSING_ID
  }

  private async importSession(who: TestUser): Promise<string> {
    const now = new Date()
    const id = randomBytes(12).toString('hex')
    const node = { id: 'imported', type: 'deployment', position: { x: 0, y: 0 }, data: { name: 'imported', namespace: 'default', image: 'nginx:1.27', replicas: 1 } }
    await this.app.db.collection('import_sessions').insertOne({
      _id: id as never, owner_id: who.user.id, source: 'compose', status: 'completed', progress: 100, message: 'analysis complete', error: null,
      analysis: { services: [], nodes: [node], edges: [], warnings: [], errors: [] }, filename: null, url: null, branch: null, path: null, commit: null,
      logs: [], created_at: now, updated_at: now, finished_at: now, expires_at: new Date(now.getTime() + 3_600_000), instance_id: 'fuzz', heartbeat_at: now,
    })
    return id
  }

  private async cluster(who: TestUser, name: string): Promise<{ name: string; id: string }> {
    const created = await this.call(who, 'POST', '/v1/api/clusters', { name, server: CLOSED, auth_type: 'token', token: this.secret('cluster-token') })
    return { name, id: created.id as string }
  }

  /** A tracked resource as a run records one (no run can reach the closed cluster). */
  private async resource(who: TestUser, workflowId: string, cluster: { name: string; id: string }): Promise<string> {
    await this.app.services.resources.recordApplied(who.user.id, { workflow_id: workflowId, cluster_id: cluster.id, cluster: cluster.name }, [{
      node_id: 'web', api_version: 'apps/v1', kind: 'Deployment', name: 'web', namespace: 'default', action: 'created', uid: null, labels: {},
    }])
    return (await this.app.services.resources.findForNode(who.user.id, workflowId, 'web'))[0].id
  }

  /** A finished build as the build service records one (a real build needs BuildKit in the cluster). */
  private async build(who: TestUser, registryId: string, clusterId: string, workflowId: string): Promise<string> {
    const now = new Date()
    const id = randomBytes(12).toString('hex')
    await this.app.db.collection('builds').insertOne({
      _id: id as never, owner_id: who.user.id, repo_url: 'https://127.0.0.1:1/repo.git', branch: 'main', commit: null, context_dir: '.', dockerfile: 'Dockerfile',
      build_args: {}, registry_id: registryId, image_name: 'fuzz/app', image_tag: 'v1', cluster: 'fz-sim', cluster_id: clusterId, namespace: 'default',
      workflow_id: workflowId, node_id: 'web', status: 'failed', phase: 'build', progress: 40, image_ref: null, image_digest: null, error: 'build failed: exit code 1',
      node_updated: null, job_name: `build-${id}`, logs: [{ phase: 'build', line: 'step 1/3', timestamp: now.toISOString() }], logs_truncated: false,
      created_at: now, started_at: now, finished_at: now, updated_at: now, instance_id: 'fuzz', heartbeat_at: now,
    })
    return id
  }

  private async run(who: TestUser, workflowId: string): Promise<string> {
    const res = await this.app.inject({ method: 'POST', url: `/v1/api/workflows/${workflowId}/run`, headers: who.headers, payload: {} })
    const body = res.json() as { id?: string; status?: string; error?: string }
    if (res.statusCode !== 200 || body.status !== 'completed') throw new Error(`fuzz fixture run: ${res.statusCode} ${res.body.slice(0, 500)}`)
    return body.id as string
  }

  /** Once per test: the admin's cluster on the simulator (shared with the user as a deployer), a workflow
   * of each run on it, so runs, resources, pods, logs and builds are real ids whose handlers go past 404. */
  async live(sim: KubeSim): Promise<Live> {
    this.secrets.push(sim.identities.admin.token)
    const clusterName = 'fz-sim'
    const cluster = await this.call(this.admin, 'POST', '/v1/api/clusters', simClusterBody(sim, clusterName))
    await this.call(this.admin, 'POST', `/v1/api/clusters/${clusterName}/share`, { email: this.user.email, role: 'deployer' })
    // The admin's graph has a workload (pods for /pods and diagnostics); the user's is a config map only,
    // so the two runs together wait for one rollout.
    const cm = (ns: string) => ({ id: 'cm', type: 'configmap', position: { x: 0, y: 0 }, data: { name: 'settings', namespace: ns, data: { MODE: 'fuzz' } } })
    const adminGraph = {
      nodes: [
        cm('fz-admin'),
        { id: 'web', type: 'deployment', position: { x: 200, y: 0 }, data: { name: 'web', namespace: 'fz-admin', image: 'nginx:1.27', replicas: 1, port: 80 } },
        { id: 'svc', type: 'service', position: { x: 400, y: 0 }, data: { name: 'web', namespace: 'fz-admin', port: 80, targetPort: 80 } },
      ],
      edges: [{ id: 'e1', source: 'cm', target: 'web' }, { id: 'e2', source: 'web', target: 'svc' }],
    }
    const workflow = async (who: TestUser, name: string, graph: object) => {
      const wf = await this.call(who, 'POST', '/v1/api/workflows', { name, cluster_id: clusterName })
      await this.call(who, 'POST', `/v1/api/workflows/${wf.id as string}/save`, graph)
      return wf.id as string
    }
    const userGraph = { nodes: [cm('fz-user')], edges: [] }
    const [adminWorkflow, userWorkflow] = await Promise.all([workflow(this.admin, 'fz-live-admin', adminGraph), workflow(this.user, 'fz-live-user', userGraph)])
    const [adminRun, userRun] = await Promise.all([this.run(this.admin, adminWorkflow), this.run(this.user, userWorkflow)])
    const resources = async (who: TestUser, wf: string) => (await Promise.all(['web', 'svc', 'cm'].map((n) => this.app.services.resources.findForNode(who.user.id, wf, n)))).flat().map((r) => r.id)
    const [adminResources, userResources] = await Promise.all([resources(this.admin, adminWorkflow), resources(this.user, userWorkflow)])
    const registry = await this.call(this.admin, 'POST', '/v1/api/admin/registries', { name: 'fz-live-registry', registry_type: 'custom', url: CLOSED, username: 'robot', password: this.secret('registry-password') })
    const adminBuild = await this.build(this.admin, registry.id as string, cluster.id as string, adminWorkflow)
    const userBuild = await this.build(this.user, registry.id as string, cluster.id as string, userWorkflow)
    return {
      clusterName,
      workflowIds: [adminWorkflow, userWorkflow],
      workflows: [{ owner: this.admin, id: adminWorkflow, graph: adminGraph }, { owner: this.user, id: userWorkflow, graph: userGraph }],
      pools: {
        'workflows/id@admin': [adminWorkflow, userWorkflow],
        'workflows/id@user': [userWorkflow, adminWorkflow],
        'workflows/id': [adminWorkflow, userWorkflow],
        // Aligned with the workflow pools above (and the seeded ones after them, which have no runs).
        'runs/runId@admin': [adminRun, userRun, MISSING_ID],
        'runs/runId@user': [userRun, adminRun, MISSING_ID],
        'runs/runId': [adminRun, userRun, MISSING_ID],
        'resources/id@admin': [...adminResources, userResources[0]],
        'resources/id@user': [...userResources, adminResources[0]],
        'resources/id': [...adminResources, ...userResources],
        'builds/id@admin': [adminBuild, adminBuild, userBuild, MISSING_ID],
        'builds/id@user': [userBuild, userBuild, adminBuild, MISSING_ID],
        'builds/id': [adminBuild, userBuild, MISSING_ID],
        'clusters/name@admin': [clusterName],
        'clusters/name@user': [clusterName],
        'clusters/name': [clusterName],
        'registries/id': [registry.id as string],
        // In the admin's live graph (the seeded 'web' and 'cm' follow).
        'nodes/nodeId': ['svc'],
        'fix-template/fixType': [...FIX_TYPES, 'no-such-fix'],
      },
    }
  }

  /** Fresh records for one operation, so what an earlier operation deleted or renamed does not matter. */
  async seed(tag: string, live?: Live): Promise<Seeded> {
    const seeded = await this.fresh(tag)
    if (!live) return seeded
    // Live ids first in each pool, so most picks reach a handler with something real behind it.
    const pools: PathPools = { ...seeded.pools }
    for (const [key, ids] of Object.entries(live.pools)) pools[key] = [...ids, ...(seeded.pools[key] ?? [])]
    return {
      ...seeded, pools,
      clusterNames: [live.clusterName, ...seeded.clusterNames],
      workflowIds: [...live.workflowIds, ...(seeded.workflowIds ?? [])],
    }
  }

  /** Puts the live workflows back on the simulator with their graphs (a fuzzed update may have changed
   * their cluster or replaced the graph); a deleted one stays deleted. */
  async restoreWorkflows(live: Live): Promise<void> {
    for (const { owner, id, graph } of live.workflows) {
      await this.app.inject({ method: 'PUT', url: `/v1/api/workflows/${id}`, headers: owner.headers, payload: { cluster_id: live.clusterName } })
      await this.app.inject({ method: 'POST', url: `/v1/api/workflows/${id}/save`, headers: owner.headers, payload: graph })
    }
  }

  /** Puts the simulator cluster back as it was made (a fuzzed update may have pointed it elsewhere). */
  async restore(sim: KubeSim, live: Live): Promise<void> {
    const { server, auth_type, credentials } = simClusterBody(sim, live.clusterName)
    const url = `/v1/api/clusters/${live.clusterName}`
    await this.app.inject({ method: 'PUT', url, headers: this.admin.headers, payload: { server } })
    await this.app.inject({ method: 'PUT', url: `${url}/credentials`, headers: this.admin.headers, payload: { server, auth_type, credentials } })
  }

  private async fresh(tag: string): Promise<Seeded> {
    const adminWorkflow = await this.workflow(this.admin, `fz-admin-${tag}`, 2)
    const userWorkflow = await this.workflow(this.user, `fz-user-${tag}`, 1)
    const adminClusterRecord = await this.cluster(this.admin, `fz-a-${tag}`)
    const adminCluster = adminClusterRecord.name
    const sharedCluster = (await this.cluster(this.admin, `fz-s-${tag}`)).name
    await this.call(this.admin, 'POST', `/v1/api/clusters/${sharedCluster}/share`, { email: this.user.email, role: 'deployer' })
    const userClusterRecord = await this.cluster(this.user, `fz-u-${tag}`)
    const userCluster = userClusterRecord.name
    const adminResource = await this.resource(this.admin, adminWorkflow, adminClusterRecord)
    const userResource = await this.resource(this.user, userWorkflow, userClusterRecord)
    const adminImport = await this.importSession(this.admin)
    const userImport = await this.importSession(this.user)
    const adminNotification = await this.notification(this.admin, `fz-gone-a-${tag}`)
    const userNotification = await this.notification(this.user, `fz-gone-u-${tag}`)
    const adminChannel = await this.channel(this.admin, `fz-ch-a-${tag}`)
    const userChannel = await this.channel(this.user, `fz-ch-u-${tag}`)
    const registry = await this.call(this.admin, 'POST', '/v1/api/admin/registries', {
      name: `fz-registry-${tag}`, registry_type: 'custom', url: CLOSED, username: 'robot', password: this.secret('registry-password'),
    })
    const inviteCode = (await this.app.invites.generate()).invite_code
    // Plugins come from the built-in catalogue when the service has them; their ids are read, not made.
    const plugins = await this.app.inject({ method: 'GET', url: '/v1/api/plugins?limit=3', headers: this.admin.headers })
    const pluginIds = plugins.statusCode === 200 ? ((plugins.json() as { plugins?: Array<{ id: string }> }).plugins ?? []).map((p) => p.id) : []
    return {
      inviteCode,
      clusterNames: [adminCluster, sharedCluster, userCluster],
      importIds: [adminImport, userImport, MISSING_ID],
      workflowIds: [adminWorkflow, userWorkflow, MISSING_ID],
      pools: {
        'import/id@admin': [adminImport, adminImport, userImport, MISSING_ID],
        'import/id@user': [userImport, userImport, adminImport, MISSING_ID],
        'notifications/id@admin': [adminNotification, adminNotification, userNotification, MISSING_ID],
        'notifications/id@user': [userNotification, userNotification, adminNotification, MISSING_ID],
        'channels/id@admin': [adminChannel, adminChannel, userChannel, MISSING_ID],
        'channels/id@user': [userChannel, userChannel, adminChannel, MISSING_ID],
        // Each caller mostly aims at its own records, sometimes at the other's (which must be 404).
        'workflows/id@admin': [adminWorkflow, adminWorkflow, userWorkflow, MISSING_ID],
        'workflows/id@user': [userWorkflow, userWorkflow, adminWorkflow, MISSING_ID],
        'workflows/id': [adminWorkflow, userWorkflow, MISSING_ID],
        'clusters/name@admin': [adminCluster, sharedCluster, adminCluster, userCluster, 'default', 'no-such-cluster'],
        'clusters/name@user': [userCluster, sharedCluster, userCluster, adminCluster, 'default', 'no-such-cluster'],
        'registries/id': [registry.id as string, MISSING_ID],
        'clusters/name': [adminCluster, sharedCluster, userCluster, 'default', 'no-such-cluster'],
        'versions/version': ['1', '2', '99', '0'],
        'oauth/provider': ['github', 'google', 'oidc', 'no-such-provider'],
        'share/user_id': [this.user.user.id, this.admin.user.id, MISSING_ID],
        'plugins/id': [...pluginIds, MISSING_ID],
        'resources/id@admin': [adminResource, adminResource, userResource, MISSING_ID],
        'resources/id@user': [userResource, userResource, adminResource, MISSING_ID],
        'resources/id': [adminResource, userResource, MISSING_ID],
        // Node ids of the seeded canvases (cm, web), and one that is in none.
        'nodes/nodeId': ['web', 'cm', 'web', 'no-such-node'],
      },
    }
  }

  /** Whole bodies that pass the checks no schema expresses, for the operations that have such checks. */
  bodyHints(seeded: Seeded): (method: string, path: string) => fc.Arbitrary<unknown> | undefined {
    const dns = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}[a-z0-9]$/)
    const token = fc.constant(this.secret('fuzz-token'))
    const credentials = fc.oneof(
      fc.record({ auth_type: fc.constant('token'), token }),
      fc.record({ auth_type: fc.constant('serviceaccount'), credentials: fc.record({ token, namespace: dns }) }),
      fc.record({ auth_type: fc.constant('oidc'), credentials: fc.record({ issuer_url: fc.constant(CLOSED), client_id: fc.constant('c'), refresh_token: token }) }),
    )
    const node = (id: string, type: string, data: object) => ({ id, type, position: { x: 0, y: 0 }, data: { name: id, namespace: 'default', ...data } })
    const graph = fc.record({
      nodes: fc.constant([
        node('cfg', 'configmap', { data: { K: 'v' } }), node('web', 'deployment', { image: 'nginx:1.27', replicas: 2, port: 80 }),
        node('svc', 'service', { port: 80, targetPort: 80 }), node('hpa', 'hpa', { minReplicas: 1, maxReplicas: 3 }),
      ]),
      edges: fc.constant([{ id: 'e1', source: 'cfg', target: 'web' }, { id: 'e2', source: 'web', target: 'svc' }, { id: 'e3', source: 'web', target: 'hpa' }]),
      metadata: fc.option(fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }), { nil: undefined }),
    }, { requiredKeys: ['nodes', 'edges'] })
    return (method, path) => {
      switch (`${method} ${path}`) {
        case 'POST /v1/api/clusters':
          return fc.tuple(dns, credentials, fc.boolean()).map(([name, creds, isDefault]) => ({ name, server: CLOSED, is_default: isDefault, ...creds }))
        case 'PUT /v1/api/clusters/{name}/credentials': return credentials
        case 'POST /v1/api/clusters/{name}/share':
          return fc.record({ email: fc.constantFrom(this.user.email, this.admin.email), role: fc.constantFrom('viewer', 'deployer', 'admin') })
        case 'POST /v1/api/admin/registries':
          return fc.record({ name: fc.string({ minLength: 1, maxLength: 30 }).filter((n) => /\S/.test(n)), registry_type: fc.constant('custom'), url: fc.constant(CLOSED), username: fc.constant('robot'), password: token })
        case 'POST /v1/api/workflows/{id}/save': return graph
        case 'POST /v1/api/import/analyze':
          return fc.oneof(
            fc.record({ source: fc.constant('compose'), content: fc.constantFrom('services:\n  web:\n    image: nginx:1.27\n    ports: ["8080:80"]\n', 'services: {}\n', 'not: [valid') }),
            fc.record({ source: fc.constant('git'), url: fc.constantFrom(`${CLOSED}/repo.git`, 'https://169.254.169.254/r.git'), token: fc.constant(this.secret('git-token')) }),
          )
        case 'POST /v1/api/import/apply': {
          // Mostly a session and a workflow of the same owner (the admin's or the user's), sometimes any pair.
          const [imports, workflows] = [seeded.importIds ?? [MISSING_ID], seeded.workflowIds ?? [MISSING_ID]]
          const pair = fc.oneof({ weight: 3, arbitrary: fc.nat(imports.length - 1).map((i) => [i, i]) }, fc.tuple(fc.nat(imports.length - 1), fc.nat(workflows.length - 1)))
          return fc.tuple(pair, fc.constantFrom('merge', 'replace')).map(([[i, w], mode]) => ({ import_id: imports[i], workflow_id: workflows[w], mode }))
        }
        case 'POST /v1/api/import/create-workflow':
          return fc.record({ import_id: fc.constantFrom(...seeded.importIds ?? [MISSING_ID]), name: fc.string({ minLength: 1, maxLength: 40 }) })
        case 'POST /v1/api/workflows':
          return fc.record({ name: fc.string({ minLength: 1, maxLength: 40 }), cluster_id: fc.constantFrom(...seeded.clusterNames) })
        // A run on the workflow's own cluster (the simulator's, for the live workflows), mostly a dry run.
        case 'POST /v1/api/workflows/{id}/run':
          return fc.record({ dry_run: fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }), prune: fc.boolean() }, { requiredKeys: ['dry_run'] })
        default: return undefined
      }
    }
  }

  /** Body fields whose schema allows values the test must not send as is (outbound addresses) or that
   * only mean something when they name a real record. */
  hints(seeded: Seeded): (name: string, schema: JsonSchema) => fc.Arbitrary<unknown> | undefined {
    const urls = fc.constantFrom(CLOSED, 'http://127.0.0.1:1', 'https://[::1]:1/', `${CLOSED}/base/path?q=1#f`, 'https://user:pw@127.0.0.1:1',
      'https://169.254.169.254', 'https://0.0.0.0:1', 'ftp://127.0.0.1:1', 'not a url', 'https://', '//127.0.0.1:1', 'file:///etc/passwd')
    const kubeconfig = (server: string, user: object) => stringify({
      apiVersion: 'v1', kind: 'Config', 'current-context': 'c',
      clusters: [{ name: 'k', cluster: { server } }], users: [{ name: 'u', user }], contexts: [{ name: 'c', context: { cluster: 'k', user: 'u' } }],
    })
    return (name, schema) => {
      switch (name) {
        case 'server': case 'url': case 'issuer_url': return urls
        case 'kubeconfig': return fc.constantFrom(
          kubeconfig(CLOSED, { token: 'kubeconfig-token' }),
          kubeconfig('https://169.254.169.254', { token: 't' }),
          kubeconfig(CLOSED, { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: '/bin/true' } }),
          kubeconfig(CLOSED, { 'token-file': '/etc/passwd' }),
          'not: [valid', 'apiVersion: v1\nkind: Config\n', '\u0000',
        )
        case 'cluster': return schema.type === 'string' ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...seeded.clusterNames) }, { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 30 }) }) : undefined
        case 'cluster_id': return fc.oneof(fc.constantFrom(...seeded.clusterNames, 'default', 'no-such-cluster', null), fc.string({ minLength: 1, maxLength: 30 }))
        case 'email': return schema.format === 'email' || typeof schema.pattern === 'string'
          ? fc.oneof(fc.constantFrom(this.admin.email, this.user.email, 'nobody@example.test', ` ${this.user.email.toUpperCase()} `), fc.emailAddress().filter((e) => e.length <= 254))
          : undefined
        case 'v1': case 'v2': return fc.constantFrom(1, 2, 99)
        case 'invite_code': return fc.oneof(fc.constant(seeded.inviteCode), fc.string({ minLength: 1, maxLength: 20 }))
        case 'workflow_id': return seeded.workflowIds ? fc.oneof(fc.constantFrom(...seeded.workflowIds), fc.string({ maxLength: 30 })) : undefined
        default: return undefined
      }
    }
  }
}
