// The overview across a user's clusters (API.md §10 "Overview metrics"): what GET /v1/api/metrics/overview answers.
import { Type } from 'typebox'
import { Timestamp, Id, StringEnum } from './common.ts'

const Count = (description: string) => Type.Integer({ minimum: 0, description })
const Cores = (description: string) => Type.Number({ minimum: 0, description: `${description}, in CPU cores` })
const Bytes = (description: string) => Type.Number({ minimum: 0, description: `${description}, in bytes` })

const ClusterStatusCounts = Type.Object({
  connected: Count('clusters whose last health check or connection succeeded'),
  error: Count('clusters whose last health check or connection failed'),
  unknown: Count('clusters not checked yet'),
}, { additionalProperties: false, description: 'clusters by their stored health status (as GET /v1/api/clusters shows it)' })

const PodPhaseCounts = Type.Object({
  pending: Count('pods in phase Pending'),
  running: Count('pods in phase Running'),
  succeeded: Count('pods in phase Succeeded'),
  failed: Count('pods in phase Failed'),
  unknown: Count('pods in phase Unknown, or with no phase'),
}, { additionalProperties: false })

const ResourceStatusCounts = Type.Object({
  running: Count('tracked resources running'),
  pending: Count('tracked resources pending'),
  failed: Count('tracked resources failed'),
  completed: Count('tracked resources completed'),
  warning: Count('tracked resources with a warning'),
  unknown: Count('tracked resources whose status is unknown'),
  deleted: Count('tracked resources no longer in their cluster (not part of `total`)'),
}, { additionalProperties: false })

const Nodes = Type.Object({
  total: Count('nodes'),
  ready: Count('nodes whose Ready condition is True'),
}, { additionalProperties: false })

const Pods = Type.Object({
  total: Count('pods in every namespace'),
  by_phase: PodPhaseCounts,
  partial: Type.Boolean({ description: 'true when a cluster holds more pods than one list returns (5000): only those listed are counted' }),
}, { additionalProperties: false })

const Cpu = Type.Object({
  capacity_cores: Cores('sum of the nodes\' capacity'),
  allocatable_cores: Cores('sum of the nodes\' allocatable (capacity less what is reserved for the system)'),
  requests_cores: Cores('sum of the requests of scheduled pods that have not finished, as `kubectl describe node` adds them up'),
}, { additionalProperties: false })

const Memory = Type.Object({
  capacity_bytes: Bytes('sum of the nodes\' capacity'),
  allocatable_bytes: Bytes('sum of the nodes\' allocatable'),
  requests_bytes: Bytes('sum of the requests of scheduled pods that have not finished'),
}, { additionalProperties: false })

const Resources = Type.Object({
  total: Count('the caller\'s tracked resources still in their clusters (pods excepted)'),
  by_status: ResourceStatusCounts,
}, { additionalProperties: false, description: 'the caller\'s own tracked resources (a shared cluster counts only the caller\'s)' })

const ClusterOverview = Type.Object({
  id: Id,
  name: Type.String({ description: 'the cluster\'s name (its key in /v1/api/clusters/{name})' }),
  status: StringEnum(['unknown', 'connected', 'error'], { description: 'the stored health status (last health check or connection)' }),
  status_message: Type.String({ description: 'what the last health check or connection said' }),
  last_checked_at: Type.Union([Timestamp, Type.Null()], { description: 'when it was last checked; null if never' }),
  reachable: Type.Boolean({ description: 'whether the cluster answered this overview\'s node and pod lists within CLUSTER_TIMEOUT_MS; when false, nodes, pods, cpu and memory are null and message says why' }),
  message: Type.String({ description: 'how its figures were read, or why it could not be' }),
  nodes: Type.Union([Nodes, Type.Null()]),
  pods: Type.Union([Pods, Type.Null()]),
  cpu: Type.Union([Cpu, Type.Null()]),
  memory: Type.Union([Memory, Type.Null()]),
  resources: Type.Object({ total: Count('the caller\'s tracked resources on this cluster still in it (pods excepted)') }, { additionalProperties: false }),
}, { additionalProperties: false })

export const MetricsOverview = Type.Object({
  clusters: Type.Object({
    total: Count('clusters the caller owns or that are shared with them'),
    by_status: ClusterStatusCounts,
    reachable: Count('clusters that answered this overview\'s lists; the totals below add up only these'),
    unreachable: Count('clusters that did not answer within CLUSTER_TIMEOUT_MS (or whose credentials no longer open); listed in `items` with reachable: false'),
  }, { additionalProperties: false }),
  nodes: Nodes,
  pods: Pods,
  cpu: Cpu,
  memory: Memory,
  resources: Resources,
  items: Type.Array(ClusterOverview, { description: 'each cluster\'s part, in name order' }),
  collected_at: Timestamp,
  cache_ms: Type.Integer({ minimum: 0, description: 'how long this answer is served again to the caller from memory (METRICS_CACHE_MS)' }),
}, { additionalProperties: false, description: 'totals across the clusters the caller can reach; read from each cluster with one node list and one pod list, cached per user for METRICS_CACHE_MS' })
