// Clusters: the keys to users' infrastructure. Credentials are sealed against the record id and opened
// only to connect; no reply or log carries them. Access: the owner may do anything; a cluster shared as
// viewer can be seen and tested, as deployer also deployed to, as admin also updated, re-credentialed and
// shared; only the owner deletes. No access at all looks exactly like a missing cluster.
import type { KubeConfig } from '@kubernetes/client-node'
import { k8s } from '../kube/client.ts'
import { readNodes, scalar } from '../kube/cluster-usage.ts'
import { AppError, BadRequest, Conflict, Forbidden, NotFound, UpstreamError } from '../errors.ts'
import { SealError } from '../crypto/sealer.ts'
import { isId } from '../repositories/ids.ts'
import type { EventBus } from '../events/bus.ts'
import type { Sealer } from '../crypto/sealer.ts'
import type { OutboundPolicy } from '../net/outbound-policy.ts'
import { normaliseCredentials, type AuthType, type ClusterCredentials } from '../kube/credentials.ts'
import { buildKubeConfig, readUserKubeconfig } from '../kube/kubeconfig.ts'
import { probeCluster, clusterMetadata, pingCluster, type ProbeResult } from '../kube/cluster-probe.ts'
import { clusterUpstreamError, describeClusterError, withTimeout } from '../kube/upstream-errors.ts'
import type { OidcTokenSource } from '../kube/oidc-token.ts'
import { toCluster, type Access, type Cluster, type ClusterDoc, type ClusterRecord, type ClusterRepository, type ShareRole, type ClusterStatus } from '../repositories/clusters.ts'
import type { ClusterLogRepository, ConnectionAction, ConnectionLog } from '../repositories/cluster-logs.ts'
import type { Page, PageRequest } from '../repositories/pagination.ts'

const RANK: Record<Access, number> = { viewer: 1, deployer: 2, admin: 3, owner: 4 }

export interface ClusterServiceDeps {
  clusters: ClusterRepository
  logs: ClusterLogRepository
  sealer: Sealer
  policy: OutboundPolicy
  oidc: OidcTokenSource
  bus: EventBus
  findUserIdByEmail: (email: string) => Promise<string | null>
  /** A user's current email and name, for the shares a cluster lists; null when the account is gone. */
  describeUser: (userId: string) => Promise<{ email: string; name: string } | null>
  timeoutMs: number
}

type CredentialFields = Partial<Record<string, unknown>> & { credentials?: Record<string, unknown> }
const CREDENTIAL_KEYS = ['kubeconfig', 'context', 'token', 'namespace', 'client_cert_data', 'client_key_data', 'ca_data', 'issuer_url', 'client_id', 'client_secret', 'refresh_token', 'id_token', 'insecure_skip_tls_verify']

export interface CreateCluster extends CredentialFields { name: string; display_name?: string; description?: string; server?: string; auth_type: AuthType; labels?: Record<string, string>; is_default?: boolean }
export interface MetricsReport {
  available: boolean; message: string
  usage: { cpu_cores: number | null; memory_bytes: number | null }
  capacity: { cpu_cores: number; memory_bytes: number; storage_bytes: number }
  nodes: Array<{ name: string; cpu_cores: number | null; memory_bytes: number | null; cpu_capacity: number; memory_capacity: number }>
  collected_at: string
}

/**
 * Credentials that no longer open (sealed under a key this server does not have, or altered) are the
 * service's own state, not the cluster's answer: 409, saying what to do about it.
 */
export function unreadableCredentials(doc: ClusterDoc): Conflict {
  return new Conflict(`the stored credentials of cluster "${doc.name}" cannot be opened (was ENCRYPTION_KEY changed?); replace them with PUT /v1/api/clusters/${doc.name}/credentials`)
}

/** `default` is a path segment (GET /clusters/default) and an id-shaped name would shadow ids in paths. */
function assertUsableName(name: string): void {
  if (name === 'default') throw new BadRequest('name "default" is reserved: /clusters/default is the caller\'s default cluster')
  if (isId(name)) throw new BadRequest('name must not look like a cluster id (24 hexadecimal characters): cluster paths accept ids too')
}

/** A share given or revoked: which cluster, which user. */
export interface ShareChange { cluster_id: string; user_id: string }

export class ClusterService {
  constructor(private readonly deps: ClusterServiceDeps) {}

  // Credentials in, sealed; never out.

  /** Credential fields come inside `credentials` or at the top level of the body, not both. */
  private credentialsFrom(authType: AuthType, body: CredentialFields): ClusterCredentials {
    const topLevel = Object.fromEntries(CREDENTIAL_KEYS.filter((k) => body[k] !== undefined).map((k) => [k, body[k]]))
    if (body.credentials && Object.keys(topLevel).length) throw new BadRequest('give the credential fields either inside credentials or at the top level, not both')
    const creds = normaliseCredentials({ ...(body.credentials ?? topLevel), auth_type: authType } as ClusterCredentials)
    // Refused now what every connection would refuse; where the issuer's name points is checked on connection.
    if (creds.auth_type === 'oidc') this.deps.policy.checkFormat(creds.issuer_url, 'issuer_url')
    return creds
  }

  /** The API server a record talks to: a kubeconfig brings its own, every other type names one. */
  private async serverFor(creds: ClusterCredentials, given: string | undefined): Promise<string> {
    let server = given
    if (creds.auth_type === 'kubeconfig') {
      const fromFile = readUserKubeconfig(creds.kubeconfig, creds.context).server
      if (given && given.replace(/\/$/, '') !== fromFile) throw new BadRequest('server does not match the kubeconfig\'s cluster server')
      server = fromFile
    }
    if (!server) throw new BadRequest('server is required')
    const url = await this.deps.policy.check(server, 'server')
    return url.toString().replace(/\/$/, '')
  }

  private context(id: string): string { return `clusters:${id}` }

  private open(doc: ClusterDoc): ClusterCredentials {
    try {
      return this.deps.sealer.open<ClusterCredentials>(doc.credentials_sealed, this.context(doc._id))
    } catch (err) {
      if (err instanceof SealError) throw unreadableCredentials(doc)
      throw err
    }
  }

  /** The reply shape, with each share's current email and name. */
  private async present(cluster: Cluster, users = new Map<string, Promise<{ email: string; name: string } | null>>()): Promise<Cluster> {
    if (!cluster.shared_with.length) return cluster
    const shared_with = await Promise.all(cluster.shared_with.map(async ({ user_id, role }) => {
      if (!users.has(user_id)) users.set(user_id, this.deps.describeUser(user_id))
      const user = await users.get(user_id)!
      return { user_id, email: user?.email ?? null, name: user?.name ?? null, role }
    }))
    return { ...cluster, shared_with }
  }

  private show(doc: ClusterDoc, userId: string): Promise<Cluster> {
    return this.present(toCluster(doc, userId))
  }

  /** A KubeConfig for the record; for oidc, with a current ID token (a refreshed one is sealed and kept). */
  private async connectWith(doc: ClusterDoc, creds: ClusterCredentials): Promise<KubeConfig> {
    // Checked on every connection, not only when saved: a name may resolve elsewhere by now.
    await this.deps.policy.check(doc.server, 'server')
    if (creds.auth_type !== 'oidc') return buildKubeConfig(doc.server, creds, this.deps.policy)
    await this.deps.policy.check(creds.issuer_url, 'issuer_url')
    const tokens = await this.deps.oidc.current(creds)
    if (tokens.refreshed) {
      const updated: ClusterCredentials = { ...creds, id_token: tokens.id_token, refresh_token: tokens.refresh_token }
      await this.deps.clusters.update(doc._id, { credentials_sealed: this.deps.sealer.seal(updated, this.context(doc._id)) })
    }
    return buildKubeConfig(doc.server, creds, this.deps.policy, tokens.id_token)
  }

  private async connect(doc: ClusterDoc): Promise<KubeConfig> {
    return this.connectWith(doc, this.open(doc))
  }

  // Access

  /** The cluster a path names, by name or by id (names are never id-shaped, so this is unambiguous). */
  private async reach(userId: string, name: string, need: Access = 'viewer'): Promise<ClusterRecord> {
    const record = await this.deps.clusters.findByRef(userId, name)
    if (!record) throw new NotFound('cluster')
    if (RANK[record.access] < RANK[need]) throw new Forbidden(`this cluster is shared with you as ${record.access}; that does not allow this`)
    return record
  }

  /** A connection for deploying or reading resources: by id or name, with at least `need` access. */
  async kubeConfigFor(userId: string, ref: string, need: Access = 'deployer'): Promise<{ kc: KubeConfig; cluster: Cluster }> {
    const record = await this.deps.clusters.findByRef(userId, ref)
    if (!record) throw new NotFound('cluster')
    if (RANK[record.access] < RANK[need]) throw new Forbidden(`this cluster is shared with you as ${record.access}; that does not allow this`)
    return { kc: await this.connect(record.doc), cluster: toCluster(record.doc, userId) }
  }

  /** Whether the user reaches the cluster (by id or name) with at least `need` access; no connection is made. */
  async canReach(userId: string, ref: string, need: Access = 'deployer'): Promise<boolean> {
    const record = await this.deps.clusters.findByRef(userId, ref)
    return record !== null && RANK[record.access] >= RANK[need]
  }

  // Endpoints

  async create(userId: string, body: CreateCluster): Promise<Cluster> {
    assertUsableName(body.name)
    // One name, one cluster for each user: an own cluster may not hide one shared with them (sharing checks
    // the other direction).
    const visible = await this.deps.clusters.findByName(userId, body.name)
    if (visible && visible.access !== 'owner') throw new Conflict(`a cluster named "${body.name}" is already shared with you; choose another name`)
    const creds = this.credentialsFrom(body.auth_type, body)
    const server = await this.serverFor(creds, body.server)
    const id = this.deps.clusters.newId()
    let doc = await this.deps.clusters.create(id, {
      owner_id: userId, name: body.name, display_name: body.display_name ?? body.name, description: body.description ?? '',
      server, auth_type: body.auth_type, credentials_sealed: this.deps.sealer.seal(creds, this.context(id)), labels: body.labels ?? {},
    })
    // A user's first cluster becomes their default (as the first registry does), so `cluster` can be left out
    // of builds and workflows from the start; the claim is atomic, so of two added at once only one wins.
    if (body.is_default) doc = (await this.deps.clusters.setDefault(userId, id)) ?? doc
    else doc = (await this.deps.clusters.claimDefault(userId, id)) ?? doc
    await this.deps.logs.add(id, 'create', true, `added (${body.auth_type})`)
    this.deps.bus.emit('cluster.changed', { owner_id: userId, cluster_id: id })
    return this.show(doc, userId)
  }

  async list(userId: string, req: PageRequest, filter: { status?: ClusterStatus } = {}): Promise<Page<Cluster>> {
    const page = await this.deps.clusters.list(userId, req, filter)
    const users = new Map<string, Promise<{ email: string; name: string } | null>>()
    return { ...page, items: await Promise.all(page.items.map((c) => this.present(c, users))) }
  }

  async get(userId: string, name: string): Promise<Cluster> {
    return this.show((await this.reach(userId, name)).doc, userId)
  }

  async getDefault(userId: string): Promise<Cluster> {
    const record = await this.deps.clusters.findDefault(userId)
    if (!record) throw new NotFound('default cluster')
    return this.show(record.doc, userId)
  }

  async update(userId: string, name: string, fields: { display_name?: string; description?: string; server?: string; labels?: Record<string, string> }): Promise<Cluster> {
    const { doc } = await this.reach(userId, name, 'admin')
    const changes: Partial<ClusterDoc> = { ...fields }
    if (fields.server !== undefined) {
      if (doc.auth_type === 'kubeconfig') throw new BadRequest('the server of a kubeconfig cluster comes from its kubeconfig; update the credentials instead')
      changes.server = (await this.deps.policy.check(fields.server, 'server')).toString().replace(/\/$/, '')
    }
    const updated = await this.deps.clusters.update(doc._id, changes)
    if (!updated) throw new NotFound('cluster')
    await this.deps.logs.add(doc._id, 'update', true, `updated ${Object.keys(fields).join(', ')}`)
    return this.show(updated, userId)
  }

  async delete(userId: string, name: string): Promise<void> {
    const { doc } = await this.reach(userId, name, 'owner')
    const removed = await this.deps.clusters.delete(doc._id)
    // Whoever had it as default (the owner, users it was shared with) falls back to their oldest cluster.
    for (const user of removed?.default_of ?? []) await this.deps.clusters.ensureDefault(user)
    await this.deps.logs.deleteForCluster(doc._id)
    this.deps.bus.emit('cluster.changed', { owner_id: doc.owner_id, cluster_id: doc._id })
  }

  async setDefault(userId: string, name: string): Promise<Cluster> {
    const { doc } = await this.reach(userId, name)
    const updated = await this.deps.clusters.setDefault(userId, doc._id)
    if (!updated) throw new NotFound('cluster')
    return this.show(updated, userId)
  }

  /** Records the outcome of talking to the cluster, and announces a change of status. */
  private async record(doc: ClusterDoc, action: ConnectionAction, outcome: { ok: true; message: string; metadata?: Partial<ClusterDoc['metadata']> } | { ok: false; message: string }): Promise<ClusterDoc> {
    const status: ClusterStatus = outcome.ok ? 'connected' : 'error'
    const updated = await this.deps.clusters.update(doc._id, {
      status, status_message: outcome.message, last_checked_at: new Date(),
      ...(outcome.ok && outcome.metadata && { metadata: { ...doc.metadata, ...outcome.metadata } }),
    })
    await this.deps.logs.add(doc._id, action, outcome.ok, outcome.message)
    if (status !== doc.status) {
      this.deps.bus.emit('cluster.status', { owner_id: doc.owner_id, cluster_id: doc._id, name: doc.name, from: doc.status, to: status, message: outcome.message })
    }
    return updated ?? doc
  }

  async test(userId: string, name: string): Promise<{ status: 'healthy'; version: string; nodes: number }> {
    const { doc } = await this.reach(userId, name)
    let result: ProbeResult
    try {
      result = await probeCluster(await this.connect(doc), this.deps.timeoutMs)
    } catch (err) {
      const error = err instanceof UpstreamError || err instanceof BadRequest || err instanceof Conflict ? err : clusterUpstreamError(err)
      await this.record(doc, 'test', { ok: false, message: error.message })
      throw error instanceof BadRequest ? new UpstreamError(error.message) : error
    }
    await this.record(doc, 'test', { ok: true, message: `healthy: ${result.version}, ${result.nodes} nodes`, metadata: { version: result.version, platform: result.platform, node_count: result.nodes } })
    return { status: 'healthy', version: result.version, nodes: result.nodes }
  }

  async refresh(userId: string, name: string): Promise<Cluster> {
    // It writes the cluster's stored metadata and status: a viewer only reads.
    const { doc } = await this.reach(userId, name, 'deployer')
    try {
      const metadata = await clusterMetadata(await this.connect(doc), this.deps.timeoutMs)
      return await this.show(await this.record(doc, 'refresh', { ok: true, message: `metadata refreshed: ${metadata.version}`, metadata }), userId)
    } catch (err) {
      const error = err instanceof UpstreamError || err instanceof Conflict ? err : clusterUpstreamError(err)
      await this.record(doc, 'refresh', { ok: false, message: error.message })
      throw error
    }
  }

  async status(userId: string, name: string) {
    const { doc } = await this.reach(userId, name)
    return { name: doc.name, status: doc.status, status_message: doc.status_message, last_checked_at: doc.last_checked_at?.toISOString() ?? null, version: doc.metadata.version }
  }

  async metrics(userId: string, name: string): Promise<MetricsReport> {
    const { doc } = await this.reach(userId, name)
    const kc = await this.connect(doc)
    const { CoreV1Api, Metrics } = await k8s()
    let nodes
    try {
      nodes = (await withTimeout(kc.makeApiClient(CoreV1Api).listNode(), this.deps.timeoutMs)).items
    } catch (err) {
      throw clusterUpstreamError(err)
    }
    const { capacity, nodes: read } = readNodes(nodes)
    const perNode = read.map((n) => ({ name: n.name, cpu_cores: null as number | null, memory_bytes: null as number | null, cpu_capacity: n.cpu_capacity, memory_capacity: n.memory_capacity }))
    const collected_at = new Date().toISOString()
    try {
      const usage = await withTimeout(new Metrics(kc).getNodeMetrics(), this.deps.timeoutMs)
      let cpu = 0
      let memory = 0
      for (const m of usage.items) {
        const node = perNode.find((n) => n.name === m.metadata.name)
        const c = scalar(m.usage.cpu)
        const mem = scalar(m.usage.memory)
        cpu += c
        memory += mem
        if (node) { node.cpu_cores = c; node.memory_bytes = mem }
      }
      return { available: true, message: 'from metrics.k8s.io', usage: { cpu_cores: Math.round(cpu * 1000) / 1000, memory_bytes: memory }, capacity, nodes: perNode, collected_at }
    } catch (err) {
      const code = (err as { statusCode?: number; code?: number }).statusCode ?? (err as { code?: number }).code
      const message = code === 404 || code === 503
        ? 'metrics.k8s.io is not available on this cluster (install metrics-server); showing capacity only'
        : `usage could not be read (${describeClusterError(err)}); showing capacity only`
      return { available: false, message, usage: { cpu_cores: null, memory_bytes: null }, capacity, nodes: perNode, collected_at }
    }
  }

  /**
   * The connection settings that are no secret (the namespace a form shows, whether TLS is verified), for a
   * client's edit form; the credentials themselves never leave.
   */
  async connectionSettings(userId: string, name: string): Promise<{ namespace: string | null; insecure_skip_tls_verify: boolean }> {
    const { doc } = await this.reach(userId, name)
    const creds = this.open(doc) as ClusterCredentials & { namespace?: unknown }
    return { namespace: typeof creds.namespace === 'string' ? creds.namespace : null, insecure_skip_tls_verify: creds.insecure_skip_tls_verify === true }
  }

  async logs(userId: string, name: string, req: PageRequest): Promise<Page<ConnectionLog>> {
    const { doc } = await this.reach(userId, name)
    return this.deps.logs.list(doc._id, req)
  }

  /** New credentials replace the old ones only after they have reached the cluster. */
  async updateCredentials(userId: string, name: string, body: CredentialFields & { auth_type?: AuthType; server?: string }): Promise<Cluster> {
    const { doc } = await this.reach(userId, name, 'admin')
    const authType = body.auth_type ?? doc.auth_type
    const creds = this.credentialsFrom(authType, body)
    const server = await this.serverFor(creds, body.server ?? (creds.auth_type === 'kubeconfig' ? undefined : doc.server))
    const candidate = { ...doc, server, auth_type: authType }
    try {
      await pingCluster(await this.connectWith(candidate, creds), this.deps.timeoutMs)
    } catch (err) {
      const message = err instanceof UpstreamError ? err.message : describeClusterError(err)
      await this.deps.logs.add(doc._id, 'credentials', false, `new credentials refused: ${message}`)
      throw new UpstreamError(`the new credentials did not work, the old ones are kept: ${message}`)
    }
    const updated = await this.deps.clusters.update(doc._id, { server, auth_type: authType, credentials_sealed: this.deps.sealer.seal(creds, this.context(doc._id)) })
    return this.show(await this.record(updated ?? doc, 'credentials', { ok: true, message: 'credentials replaced' }), userId)
  }

  /** `changed`: told the cluster's id and the grantee's once the share is stored (the audit log's entry). */
  async share(userId: string, name: string, email: string, role: ShareRole, changed?: (ids: ShareChange) => void): Promise<Cluster> {
    const { doc } = await this.reach(userId, name, 'admin')
    const target = await this.deps.findUserIdByEmail(email)
    if (!target) throw new NotFound('user')
    if (target === doc.owner_id) throw new BadRequest('the owner already has full access')
    const clash = await this.deps.clusters.findByName(target, doc.name)
    if (clash && clash.doc._id !== doc._id) throw new Conflict(`that user already reaches a cluster named "${doc.name}"`)
    const updated = await this.deps.clusters.share(doc._id, target, role)
    await this.deps.logs.add(doc._id, 'share', true, `shared as ${role}`)
    changed?.({ cluster_id: doc._id, user_id: target })
    this.deps.bus.emit('cluster.changed', { owner_id: doc.owner_id, cluster_id: doc._id })
    return this.show(updated ?? doc, userId)
  }

  /** Ends a share (owner or shared admin); 404 when the cluster has no share for that user. */
  async unshare(userId: string, name: string, targetUserId: string, changed?: (ids: ShareChange) => void): Promise<void> {
    const { doc } = await this.reach(userId, name, 'admin')
    const before = await this.deps.clusters.unshare(doc._id, targetUserId)
    if (!before) throw new NotFound('share')
    if (before.default_of.includes(targetUserId)) await this.deps.clusters.ensureDefault(targetUserId)
    await this.deps.logs.add(doc._id, 'share', true, 'share revoked')
    changed?.({ cluster_id: doc._id, user_id: targetUserId })
    // Who reaches the cluster changed: the revoked user's watchers stop now, not at their next reconnect.
    this.deps.bus.emit('cluster.changed', { owner_id: doc.owner_id, cluster_id: doc._id })
  }

  // Health monitor

  /** One health check: ping with the stored credentials; the outcome is stored either way. */
  async checkHealth(doc: ClusterDoc): Promise<'connected' | 'error'> {
    await k8s() // loading the client is not the cluster's time
    try {
      const info = await withTimeout((async () => pingCluster(await this.connect(doc), this.deps.timeoutMs))(), this.deps.timeoutMs)
      await this.record(doc, 'health_check', { ok: true, message: `healthy: ${info.version}`, metadata: { version: info.version, platform: info.platform } })
      return 'connected'
    } catch (err) {
      const message = err instanceof AppError ? err.message : describeClusterError(err)
      await this.record(doc, 'health_check', { ok: false, message })
      return 'error'
    }
  }

  allClusters(): AsyncGenerator<ClusterDoc> {
    return this.deps.clusters.all()
  }
}
