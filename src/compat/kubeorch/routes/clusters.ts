// The UI's /clusters (CONTRACT.md §0 #2 #3, §2.6, §8 rows 4-6) on the cluster service. The UI writes
// camelCase (`authType`, `displayName`, `credentials.caData` …) and reads `displayName`, `authType`, a
// boolean `default`, `metadata.nodeCount`; a cluster `status` outside connected|disconnected|error|unknown
// crashes its clusters page, and it copies the test reply's `status` into the cluster, so `healthy` is
// never sent here.
import { Type } from 'typebox'
import type { App } from '../../../app-types.ts'
import {
  AuthTypeSchema, ClusterListQuery, ClusterParams, CreateClusterBody, CredentialsObject, UpdateClusterBody,
} from '../../../../schemas/cluster.ts'
import { MAX_PAGE_SIZE } from '../../../../schemas/pagination.ts'
import { AppError, BadRequest, NotFound } from '../../../errors.ts'
import type { Cluster } from '../../../repositories/clusters.ts'
import type { MetricsReport } from '../../../services/cluster-service.ts'
import { readCluster, type ClusterReading } from '../../../services/metrics/cluster-reading.ts'
import { toCanonical, withCamelAliases, type Json, isObject } from '../translate.ts'

// The UI's credential names → ours (API.md §5). PEM fields come base64-encoded, which ours accept as is.
const CREDENTIAL_RENAMES = {
  caData: 'ca_data', clientCertData: 'client_cert_data', clientKeyData: 'client_key_data',
  oidcIssuerUrl: 'issuer_url', oidcClientId: 'client_id', oidcClientSecret: 'client_secret', oidcRefreshToken: 'refresh_token',
  insecure: 'insecure_skip_tls_verify',
}
// The UI also knows these spellings of two auth types (it accepts them on read).
const AUTH_TYPE_ALIASES: Record<string, string> = { bearer: 'token', serviceAccount: 'serviceaccount' }
// Fields that are credentials proper: any of them in an edit means "replace the credentials".
const SECRET_INPUTS = ['kubeconfig', 'token', 'client_cert_data', 'client_key_data', 'ca_data', 'issuer_url', 'client_id', 'client_secret', 'refresh_token', 'id_token']

/** A UI cluster body in our names; `singleNode` means nothing here. */
export function canonicalClusterBody(body: unknown): unknown {
  const out = toCanonical(body, { displayName: 'display_name', authType: 'auth_type' }, ['singleNode'])
  if (!isObject(out)) return out
  if (typeof out.auth_type === 'string') out.auth_type = AUTH_TYPE_ALIASES[out.auth_type] ?? out.auth_type
  if (out.credentials !== undefined) out.credentials = toCanonical(out.credentials, CREDENTIAL_RENAMES)
  return out
}

/** A cluster as the UI reads it; our snake_case fields stay beside the aliases. */
export function toUiCluster(c: Cluster) {
  return {
    ...withCamelAliases({ ...c }),
    default: c.is_default,
    metadata: { ...c.metadata, nodeCount: c.metadata.node_count },
  }
}

// What the edit form sends: the update's fields plus the auth type and, when one was filled, credentials.
const EditClusterBody = Type.Object({
  ...UpdateClusterBody.properties,
  auth_type: Type.Optional(AuthTypeSchema),
  credentials: Type.Optional(CredentialsObject),
}, { additionalProperties: false, minProperties: 1 })

const HEALTH: Record<Cluster['status'], 'healthy' | 'unhealthy' | 'unknown'> = { connected: 'healthy', error: 'unhealthy', unknown: 'unknown' }
const percent = (used: number, capacity: number) => Math.round((used / capacity) * 1000) / 10

/**
 * The dashboard's cluster card (CONTRACT.md §2.6 metrics). From GET /clusters/:name/metrics (node list and
 * metrics.k8s.io): the API server answering, CPU and memory use against node capacity, node count and
 * storage capacity. From the overview's reading of one cluster (its node and pod lists): pods and nodes
 * ready. From the cluster record: the last health check. A figure not known is left out (or null for the
 * pod count), so the UI says "Not available" rather than showing a made-up number.
 */
export function toUiClusterMetrics(cluster: Cluster, m: MetricsReport, reading: ClusterReading) {
  const usage = m.available && m.usage.cpu_cores !== null && m.usage.memory_bytes !== null ? m.usage : null
  const health: Array<{ name: string; status: 'healthy' | 'unhealthy' | 'unknown'; message: string }> = [
    { name: 'API Server', status: 'healthy', message: 'answered the node list' },
  ]
  if (reading.reachable) {
    const { total, ready } = reading.nodes
    health.push({ name: 'Nodes', status: total > 0 && ready === total ? 'healthy' : 'unhealthy', message: `${ready} of ${total} ready` })
  } else {
    health.push({ name: 'Nodes', status: 'unknown', message: reading.message })
  }
  health.push({ name: 'Metrics API', status: m.available ? 'healthy' : 'unknown', message: m.message })
  health.push({ name: 'Health check', status: HEALTH[cluster.status], message: cluster.status_message })
  const resource = (used: number | null, capacity: number) => used !== null && capacity > 0 ? { used, capacity, percentage: percent(used, capacity) } : { capacity }
  return {
    clusterName: cluster.name,
    health,
    resources: {
      cpu: resource(usage?.cpu_cores ?? null, m.capacity.cpu_cores),
      memory: resource(usage?.memory_bytes ?? null, m.capacity.memory_bytes),
      // Storage capacity is the nodes' ephemeral storage; nothing here measures its use.
      storage: resource(null, m.capacity.storage_bytes),
    },
    nodeCount: m.nodes.length,
    podCount: reading.reachable ? reading.pods.total : null,
    podCountPartial: reading.reachable && reading.pods.partial,
    lastUpdated: m.collected_at,
    ...m,
  }
}

export default async function clusterRoutes(app: App) {
  const service = app.services.clusters

  app.post('/clusters', {
    schema: { hide: true, body: CreateClusterBody },
    preValidation: async (req) => { req.body = canonicalClusterBody(req.body) as typeof req.body },
  }, async (req, reply) => {
    const created = await service.create(req.user.id, req.body)
    // The UI toasts on the answer's status (connected or error), as its own backend tests a cluster when
    // it is added: the same refresh as POST /clusters/:name/refresh, which stores the outcome either way.
    let cluster: Cluster
    try {
      cluster = await service.refresh(req.user.id, created.id)
    } catch (err) {
      if (!(err instanceof AppError) || err.statusCode === 404) throw err
      cluster = await service.get(req.user.id, created.id)
    }
    return reply.code(201).send(toUiCluster(cluster))
  })

  app.get('/clusters', {
    schema: { hide: true, querystring: ClusterListQuery },
    // The UI pages nothing: it shows what comes back, so it gets the largest page.
    preValidation: async (req) => { req.query = { limit: String(MAX_PAGE_SIZE), ...(req.query as Json) } as unknown as typeof req.query },
  }, async (req) => {
    const { status, ...page } = req.query
    const list = await service.list(req.user.id, page, { status })
    let defaultId = list.items.find((c) => c.is_default)?.id ?? null
    if (defaultId === null && list.total > list.items.length) {
      defaultId = await service.getDefault(req.user.id).then((c) => c.id, (err) => { if (err instanceof NotFound) return null; throw err })
    }
    return { clusters: list.items.map(toUiCluster), default: defaultId, total: list.total, page: list.page, limit: list.limit }
  })

  app.get('/clusters/:name', { schema: { hide: true, params: ClusterParams } }, async (req) => {
    const cluster = await service.get(req.user.id, req.params.name)
    // The edit form shows the namespace and the TLS checkbox at the top level; credentials that no longer
    // open (409 on the routes that use them) leave them out and the form shows its defaults.
    const settings = await service.connectionSettings(req.user.id, req.params.name).catch((err) => {
      if (err instanceof AppError && err.statusCode === 409) return null
      throw err
    })
    return { ...toUiCluster(cluster), ...(settings && { namespace: settings.namespace, insecure: settings.insecure_skip_tls_verify }) }
  })

  app.put('/clusters/:name', {
    schema: { hide: true, params: ClusterParams, body: EditClusterBody },
    preValidation: async (req) => { req.body = canonicalClusterBody(req.body) as typeof req.body },
  }, async (req) => {
    const userId = req.user.id
    const { name } = req.params
    const { auth_type, credentials, ...fields } = req.body
    const current = await service.get(userId, name)
    // The form sends back the server it was shown: only a change is one (a kubeconfig cluster's server
    // cannot be set apart from its kubeconfig).
    if (fields.server === current.server) delete fields.server
    const replacing = credentials !== undefined && SECRET_INPUTS.some((k) => (credentials as Json)[k] !== undefined)
    if (replacing) {
      // Checked against the cluster first; the old credentials stay if these fail (502), and then nothing
      // else of the edit is written either.
      await service.updateCredentials(userId, name, { auth_type: auth_type ?? current.auth_type, credentials, ...(fields.server !== undefined && { server: fields.server }) })
      delete fields.server
    } else {
      if (auth_type !== undefined && auth_type !== current.auth_type) throw new BadRequest(`changing the auth type to ${auth_type} needs its credentials`)
      if (credentials !== undefined) {
        // The form always sends the namespace (and insecure when ticked). They are part of the sealed
        // credentials: unchanged is no change; a change needs the credentials entered again.
        const settings = await service.connectionSettings(userId, name)
        if ((credentials.insecure_skip_tls_verify ?? false) !== settings.insecure_skip_tls_verify) {
          throw new BadRequest('to change whether the server certificate is verified, enter the credentials again')
        }
        // Credentials stored without a namespace show as the form's own default, "default".
        if (credentials.namespace !== undefined && credentials.namespace !== (settings.namespace ?? 'default')) {
          throw new BadRequest('to change the namespace, enter the credentials again')
        }
      }
    }
    const updated = Object.keys(fields).length ? await service.update(userId, name, fields) : await service.get(userId, name)
    return toUiCluster(updated)
  })

  app.delete('/clusters/:name', { schema: { hide: true, params: ClusterParams } }, async (req, reply) => {
    await service.delete(req.user.id, req.params.name)
    return reply.code(204).send(null)
  })

  app.put('/clusters/:name/default', { schema: { hide: true, params: ClusterParams } }, async (req) => toUiCluster(await service.setDefault(req.user.id, req.params.name)))

  app.post('/clusters/:name/test', { schema: { hide: true, params: ClusterParams } }, async (req) => {
    const { version, nodes } = await service.test(req.user.id, req.params.name)
    // Our `healthy` is the stored `connected` the test has just recorded; a failure is a 502 as on /v1/api.
    return { status: 'connected', version, nodes }
  })

  app.post('/clusters/:name/refresh', { schema: { hide: true, params: ClusterParams } }, async (req) => toUiCluster(await service.refresh(req.user.id, req.params.name)))

  app.get('/clusters/:name/status', { schema: { hide: true, params: ClusterParams } }, async (req) => withCamelAliases(await service.status(req.user.id, req.params.name)))

  app.get('/clusters/:name/metrics', { schema: { hide: true, params: ClusterParams } }, async (req) => {
    const userId = req.user.id
    const cluster = await service.get(userId, req.params.name)
    // Pods are read from this one cluster as the overview reads each (not the whole overview, which reads
    // every cluster of the user: the dashboard polls this every 30 s for one card).
    const [metrics, reading] = await Promise.all([
      service.metrics(userId, cluster.id),
      readCluster(async () => (await service.kubeConfigFor(userId, cluster.id, 'viewer')).kc, app.config.CLUSTER_TIMEOUT_MS),
    ])
    return toUiClusterMetrics(cluster, metrics, reading)
  })
}
