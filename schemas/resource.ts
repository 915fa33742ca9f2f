// Tracked resources (API.md §8): the objects runs applied or a sync found, one record per
// (cluster, namespace, kind, name) and owner. Only the user fields can be changed through the API.
import { Type } from 'typebox'
import { Timestamp, Id, StringEnum } from './common.ts'
import { PaginationQuery, PageOf } from './pagination.ts'

export const ResourceStatusSchema = StringEnum(['running', 'pending', 'failed', 'completed', 'warning', 'unknown', 'deleted'], {
  description: 'derived from the live object (see src/kube/status); `deleted` once it is gone from the cluster',
})

const UserTags = Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { maxItems: 20, uniqueItems: true, description: 'at most 20 distinct tags of 1–50 characters' })
const UserNotes = Type.String({ maxLength: 4000 })

export const TrackedResource = Type.Object({
  id: Id,
  workflow_id: Type.String({ description: 'the workflow whose run applied it' }),
  node_id: Type.String({ description: 'the canvas node it was rendered from (empty when a sync found it without one)' }),
  owner_id: Type.String(),
  cluster: Type.String({ description: 'the cluster\'s name when it was recorded' }),
  cluster_id: Type.String(),
  namespace: Type.Union([Type.String(), Type.Null()], { description: 'null for cluster-scoped kinds (Namespace)' }),
  kind: Type.String(),
  name: Type.String(),
  api_version: Type.String(),
  uid: Type.Union([Type.String(), Type.Null()]),
  status: ResourceStatusSchema,
  status_message: Type.String(),
  ready: Type.Union([Type.String(), Type.Null()], { description: 'ready against desired, e.g. "2/3", where the kind has replicas, containers or completions' }),
  counters: Type.Record(Type.String(), Type.Union([Type.Number(), Type.String(), Type.Null()]), { description: 'per-kind figures: replicas, readyReplicas, clusterIP, externalIP, phase, ...' }),
  labels: Type.Record(Type.String(), Type.String()),
  parent_id: Type.Union([Type.String(), Type.Null()], { description: 'for a pod of a followed workload (kind Pod): the workload\'s tracked-resource id; null on every other resource' }),
  containers: Type.Optional(Type.Array(Type.String(), { description: 'a Pod\'s container names (present on pods)' })),
  is_favorite: Type.Boolean(),
  user_tags: Type.Array(Type.String()),
  user_notes: Type.String(),
  created_at: Timestamp,
  updated_at: Timestamp,
  last_seen_at: Type.Union([Timestamp, Type.Null()], { description: 'when a run or a sync last found it in the cluster' }),
}, { $id: 'TrackedResource', additionalProperties: false })

export const ResourceParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) })

export const ResourceListQuery = PaginationQuery(['created_at', 'updated_at', 'name', 'kind', 'namespace', 'status', 'last_seen_at'], {
  cluster: Type.Optional(Type.String({ minLength: 1, maxLength: 63, description: 'the cluster\'s name or id' })),
  namespace: Type.Optional(Type.String({ minLength: 1, maxLength: 63 })),
  kind: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Kubernetes kind, e.g. Deployment (exact)' })),
  workflow_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  status: Type.Optional(ResourceStatusSchema),
  parent_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'the pods of this workload (its tracked-resource id); workloads\' pods are left out of the list unless this or kind=Pod asks for them' })),
})
export const ResourceList = PageOf('resources', Type.Ref('TrackedResource'))

export const PatchResourceBody = Type.Object({
  is_favorite: Type.Optional(Type.Boolean()),
  user_tags: Type.Optional(UserTags),
  user_notes: Type.Optional(UserNotes),
}, { additionalProperties: false, minProperties: 1, description: 'only the user fields; any other field is refused (400)' })

export const SyncBody = Type.Object({
  cluster: Type.Optional(Type.String({ minLength: 1, maxLength: 63, description: 'the cluster\'s name or id; every cluster the caller reaches when absent' })),
}, { additionalProperties: false })

export const SyncResult = Type.Object({
  created: Type.Integer({ minimum: 0, description: 'objects found that were not tracked yet' }),
  updated: Type.Integer({ minimum: 0, description: 'tracked resources whose recorded state changed' }),
  deleted: Type.Integer({ minimum: 0, description: 'tracked resources no longer found, now `deleted`' }),
}, { additionalProperties: false })

const PodContainer = Type.Object({
  name: Type.String(),
  image: Type.String(),
  ready: Type.Boolean(),
  restarts: Type.Integer({ minimum: 0 }),
  state: StringEnum(['waiting', 'running', 'terminated', 'unknown']),
  reason: Type.Union([Type.String(), Type.Null()], { description: 'why it waits or ended (e.g. CrashLoopBackOff, Completed)' }),
}, { additionalProperties: false })

export const PodSummary = Type.Object({
  id: Type.Union([Id, Type.Null()], { description: 'the Pod\'s tracked-resource id (GET /v1/api/resources/{id}, logs, terminal); null while the watch has not recorded it yet, or when the workload is not followed (its workflow archived)' }),
  name: Type.String(),
  namespace: Type.String(),
  phase: Type.String(),
  ready: Type.String({ description: 'ready containers against all, e.g. "1/1"' }),
  restarts: Type.Integer({ minimum: 0 }),
  node_name: Type.Union([Type.String(), Type.Null()]),
  containers: Type.Array(PodContainer),
  created_at: Type.Union([Timestamp, Type.Null()]),
}, { additionalProperties: false })
export const PodList = Type.Object({ pods: Type.Array(PodSummary) }, { additionalProperties: false })
