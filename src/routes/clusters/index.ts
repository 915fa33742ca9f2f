// Clusters (spec "Clusters"): keyed by name in paths; credentials are write-only.
import { Type } from 'typebox'
import type { App } from '../../app-types.ts'
import { errorResponses } from '../../../schemas/common.ts'
import {
  CreateClusterBody, UpdateClusterBody, UpdateCredentialsBody, ShareBody, ClusterParams, ShareParams, ClusterListQuery, ClusterList,
  TestResult, ClusterStatus, ClusterMetrics, ConnectionLogQuery, ConnectionLogList,
} from '../../../schemas/cluster.ts'
import { pageReply } from '../../repositories/pagination.ts'

const tags = ['clusters']
const ClusterRef = Type.Ref('Cluster')
// Routes that open the stored credentials answer this when they no longer open (the service's own state).
const unreadable = { 409: Type.Ref('ErrorResponse', { description: 'the stored credentials cannot be opened (ENCRYPTION_KEY changed?); replace them with PUT /v1/api/clusters/{name}/credentials' }) }

export default async function clusterRoutes(app: App) {
  const service = app.services.clusters

  app.post('/v1/api/clusters', {
    schema: {
      tags, operationId: 'createCluster', summary: 'add a cluster; its credentials are sealed and never returned',
      description: 'The name must not be `default` (a path segment) nor id-shaped, and must differ from the clusters shared with the caller (409). Every `:name` path also accepts the cluster\'s id.',
      body: CreateClusterBody, response: { 201: ClusterRef, ...errorResponses(400, 401, 409) },
    },
  }, async (req, reply) => reply.code(201).send(await service.create(req.user.id, req.body)))

  app.get('/v1/api/clusters', {
    schema: {
      tags, operationId: 'listClusters', summary: 'clusters the caller owns or that are shared with them',
      querystring: ClusterListQuery, response: { 200: ClusterList, ...errorResponses(400, 401) },
    },
  }, async (req) => {
    const { status, ...page } = req.query
    return pageReply('clusters', await service.list(req.user.id, page, { status }))
  })

  app.get('/v1/api/clusters/default', {
    schema: { tags, operationId: 'getDefaultCluster', summary: 'the caller\'s default cluster', response: { 200: ClusterRef, ...errorResponses(401, 404) } },
  }, async (req) => service.getDefault(req.user.id))

  app.get('/v1/api/clusters/:name', {
    schema: { tags, operationId: 'getCluster', summary: 'one cluster', params: ClusterParams, response: { 200: ClusterRef, ...errorResponses(401, 404) } },
  }, async (req) => service.get(req.user.id, req.params.name))

  app.put('/v1/api/clusters/:name', {
    schema: {
      tags, operationId: 'updateCluster', summary: 'update display name, description, server or labels (owner or shared admin)',
      params: ClusterParams, body: UpdateClusterBody, response: { 200: ClusterRef, ...errorResponses(400, 401, 403, 404) },
    },
  }, async (req) => service.update(req.user.id, req.params.name, req.body))

  app.delete('/v1/api/clusters/:name', {
    schema: {
      tags, operationId: 'deleteCluster', summary: 'remove the cluster (owner only); nothing in the cluster is touched',
      params: ClusterParams, response: { 204: Type.Null({ description: 'removed' }), ...errorResponses(401, 403, 404) },
    },
  }, async (req, reply) => {
    await service.delete(req.user.id, req.params.name)
    return reply.code(204).send(null)
  })

  app.put('/v1/api/clusters/:name/default', {
    schema: { tags, operationId: 'setDefaultCluster', summary: 'make it the caller\'s default cluster', params: ClusterParams, response: { 200: ClusterRef, ...errorResponses(401, 404) } },
  }, async (req) => service.setDefault(req.user.id, req.params.name))

  app.post('/v1/api/clusters/:name/test', {
    schema: {
      tags, operationId: 'testCluster', summary: 'connect with the stored credentials; the stored status is updated either way',
      params: ClusterParams, response: { 200: TestResult, ...errorResponses(401, 404, 502), ...unreadable },
    },
  }, async (req) => service.test(req.user.id, req.params.name))

  app.post('/v1/api/clusters/:name/refresh', {
    schema: {
      tags, operationId: 'refreshCluster', summary: 'read version, platform, node count and namespaces from the cluster and store them (deployer, admin or owner; a viewer gets 403)',
      params: ClusterParams, response: { 200: ClusterRef, ...errorResponses(401, 403, 404, 502), ...unreadable },
    },
  }, async (req) => service.refresh(req.user.id, req.params.name))

  app.get('/v1/api/clusters/:name/status', {
    schema: { tags, operationId: 'getClusterStatus', summary: 'the stored connection status', params: ClusterParams, response: { 200: ClusterStatus, ...errorResponses(401, 404) } },
  }, async (req) => service.status(req.user.id, req.params.name))

  app.get('/v1/api/clusters/:name/metrics', {
    schema: {
      tags, operationId: 'getClusterMetrics', summary: 'CPU and memory use from metrics.k8s.io, with node capacity; capacity only when metrics are not installed',
      params: ClusterParams, response: { 200: ClusterMetrics, ...errorResponses(401, 404, 502), ...unreadable },
    },
  }, async (req) => service.metrics(req.user.id, req.params.name))

  app.get('/v1/api/clusters/:name/logs', {
    schema: {
      tags, operationId: 'listClusterLogs', summary: 'connection events (tests, health checks, credential changes), newest first',
      params: ClusterParams, querystring: ConnectionLogQuery, response: { 200: ConnectionLogList, ...errorResponses(400, 401, 404) },
    },
  }, async (req) => pageReply('logs', await service.logs(req.user.id, req.params.name, req.query)))

  app.put('/v1/api/clusters/:name/credentials', {
    schema: {
      tags, operationId: 'updateClusterCredentials', summary: 'replace the credentials; they are checked against the cluster first and the old ones kept if they fail',
      params: ClusterParams, body: UpdateCredentialsBody, response: { 200: ClusterRef, ...errorResponses(400, 401, 403, 404, 502) },
    },
  }, async (req) => service.updateCredentials(req.user.id, req.params.name, req.body))

  app.post('/v1/api/clusters/:name/share', {
    schema: {
      tags, operationId: 'shareCluster', summary: 'share with another user by email as viewer, deployer or admin (owner or shared admin)',
      params: ClusterParams, body: ShareBody, response: { 200: ClusterRef, ...errorResponses(400, 401, 403, 404, 409) },
    },
  }, async (req) => service.share(req.user.id, req.params.name, req.body.email, req.body.role, (ids) => app.audit.note(req, { target_id: ids.cluster_id, subject_id: ids.user_id })))

  app.delete('/v1/api/clusters/:name/share/:user_id', {
    schema: {
      tags, operationId: 'unshareCluster', summary: 'revoke a share (owner or shared admin); the user no longer reaches the cluster',
      params: ShareParams, response: { 204: Type.Null({ description: 'revoked' }), ...errorResponses(400, 401, 403, 404) },
    },
  }, async (req, reply) => {
    await service.unshare(req.user.id, req.params.name, req.params.user_id, (ids) => app.audit.note(req, { target_id: ids.cluster_id, subject_id: ids.user_id }))
    return reply.code(204).send(null)
  })
}
