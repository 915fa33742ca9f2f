// Real records for the fuzzer to aim at: workflows with versions for an admin and a plain user, clusters
// owned by each and one shared, a registry with a password. Clusters and registries point at a closed
// loopback port, so connection routes fail fast and nothing leaves the machine. Every seeded secret is
// kept, so the oracle can prove none of them is ever answered.
import fc from 'fast-check'
import { randomBytes } from 'node:crypto'
import { stringify } from 'yaml'
import type { App } from '../../src/app-types.ts'
import type { TestUser } from './auth.ts'
import type { PathPools } from './fuzz-requests.ts'
import type { JsonSchema } from './fuzz-schema.ts'

/** Nothing listens on port 1: a connection attempt is refused at once, without leaving the host. */
export const CLOSED = 'https://127.0.0.1:1'

const MISSING_ID = '0123456789abcdef01234567'

export interface Seeded {
  pools: PathPools
  clusterNames: string[]
  inviteCode: string
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

  private async cluster(who: TestUser, name: string): Promise<string> {
    await this.call(who, 'POST', '/v1/api/clusters', { name, server: CLOSED, auth_type: 'token', token: this.secret('cluster-token') })
    return name
  }

  /** Fresh records for one operation, so what an earlier operation deleted or renamed does not matter. */
  async seed(tag: string): Promise<Seeded> {
    const adminWorkflow = await this.workflow(this.admin, `fz-admin-${tag}`, 2)
    const userWorkflow = await this.workflow(this.user, `fz-user-${tag}`, 1)
    const adminCluster = await this.cluster(this.admin, `fz-a-${tag}`)
    const sharedCluster = await this.cluster(this.admin, `fz-s-${tag}`)
    await this.call(this.admin, 'POST', `/v1/api/clusters/${sharedCluster}/share`, { email: this.user.email, role: 'deployer' })
    const userCluster = await this.cluster(this.user, `fz-u-${tag}`)
    const registry = await this.call(this.admin, 'POST', '/v1/api/admin/registries', {
      name: `fz-registry-${tag}`, registry_type: 'custom', url: CLOSED, username: 'robot', password: this.secret('registry-password'),
    })
    const inviteCode = (await this.app.invites.current()).invite_code
    return {
      inviteCode,
      clusterNames: [adminCluster, sharedCluster, userCluster],
      pools: {
        'workflows/id': [adminWorkflow, userWorkflow, MISSING_ID],
        'registries/id': [registry.id as string, MISSING_ID],
        'clusters/name': [adminCluster, sharedCluster, userCluster, 'default', 'no-such-cluster'],
        'versions/version': ['1', '2', '99', '0'],
        'oauth/provider': ['github', 'google', 'oidc', 'no-such-provider'],
      },
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
        case 'cluster_id': return fc.oneof(fc.constantFrom(...seeded.clusterNames, 'default', 'no-such-cluster', null), fc.string({ minLength: 1, maxLength: 30 }))
        case 'email': return schema.format === 'email' || typeof schema.pattern === 'string'
          ? fc.oneof(fc.constantFrom(this.admin.email, this.user.email, 'nobody@example.test', ` ${this.user.email.toUpperCase()} `), fc.emailAddress().filter((e) => e.length <= 254))
          : undefined
        case 'invite_code': return fc.oneof(fc.constant(seeded.inviteCode), fc.string({ minLength: 1, maxLength: 20 }))
        default: return undefined
      }
    }
  }
}
