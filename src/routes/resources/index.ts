// Tracked resources (spec "Tracked resources", API.md §8): the objects runs applied, their live status, the
// user's own notes on them, a sync with the cluster and the pods behind a workload.
import { Type } from 'typebox'
import type { App } from '../../app-types.ts'
import { errorResponses } from '../../../schemas/common.ts'
import { ResourceParams, ResourceListQuery, ResourceList, PatchResourceBody, SyncBody, SyncResult, PodList } from '../../../schemas/resource.ts'
import { pageReply } from '../../repositories/pagination.ts'

const tags = ['resources']
const ResourceRef = Type.Ref('TrackedResource')
// Routes that read the cluster answer this when its stored credentials no longer open.
const unreadable = { 409: Type.Ref('ErrorResponse', { description: 'the cluster\'s stored credentials cannot be opened (ENCRYPTION_KEY changed?); replace them with PUT /v1/api/clusters/{name}/credentials' }) }

export default async function resourceRoutes(app: App) {
  const service = app.services.resources

  app.get('/v1/api/resources', {
    schema: {
      tags, operationId: 'listResources', summary: 'the caller\'s tracked resources',
      description: '`search` matches the name literally. `cluster` takes the cluster\'s name (as recorded) or its id. The pods of followed workloads are records too (kind Pod, `parent_id` their workload): they are listed only with `kind=Pod` or `parent_id=`.',
      querystring: ResourceListQuery, response: { 200: ResourceList, ...errorResponses(400, 401) },
    },
  }, async (req) => {
    const { cluster, namespace, kind, workflow_id, status, parent_id, ...page } = req.query
    return pageReply('resources', await service.list(req.user.id, page, { cluster, namespace, kind, workflow_id, status, parent_id }))
  })

  app.post('/v1/api/resources/sync', {
    schema: {
      tags, operationId: 'syncResources', summary: 'reconcile the records with the cluster (or every cluster the caller reaches)',
      description: 'Lists the watched kinds carrying our `app.kubernetes.io/managed-by` label and one of the caller\'s workflow ids: new ones are recorded, known ones updated, tracked ones no longer found marked `deleted`. Each cluster is read in full before anything is written, so a 502 leaves its records unchanged. A second sync of the same cluster while one runs joins it; a client that disconnects does not stop it. Needs viewer access on the cluster.',
      body: SyncBody, response: { 200: SyncResult, ...errorResponses(400, 401, 404, 502), ...unreadable },
    },
  }, async (req) => service.sync(req.user.id, req.body.cluster))

  app.get('/v1/api/resources/:id', {
    schema: { tags, operationId: 'getResource', summary: 'one tracked resource', params: ResourceParams, response: { 200: ResourceRef, ...errorResponses(400, 401, 404) } },
  }, async (req) => service.get(req.user.id, req.params.id))

  app.patch('/v1/api/resources/:id', {
    schema: {
      tags, operationId: 'updateResource', summary: 'set the user fields (is_favorite, user_tags, user_notes); any other field is refused',
      params: ResourceParams, body: PatchResourceBody, response: { 200: ResourceRef, ...errorResponses(400, 401, 404) },
    },
  }, async (req) => service.patch(req.user.id, req.params.id, req.body))

  app.get('/v1/api/resources/:id/pods', {
    schema: {
      tags, operationId: 'listResourcePods', summary: 'the pods of a workload (Deployment, StatefulSet, DaemonSet, ReplicaSet, Job), of a Service through its selector, or the Pod itself',
      description: 'Each pod carries `id`, its own tracked-resource id (usable for logs and the terminal), or null while the watch has not recorded it. 404 with an `{error}` saying so when the kind has no pods (ConfigMap, Ingress, ...) or the object is no longer in the cluster. Needs viewer access on the cluster.',
      params: ResourceParams, response: { 200: PodList, ...errorResponses(400, 401, 404, 502), ...unreadable },
    },
  }, async (req) => service.pods(req.user.id, req.params.id))
}
