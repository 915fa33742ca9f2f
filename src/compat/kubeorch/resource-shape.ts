// Tracked resources in the KubeOrch UI's dialect (docs/kubeorch-ui.md, CONTRACT.md §2.7): the record as
// /v1/api answers it, with the camelCase names the resource pages read beside ours. The pages look
// `status` up in a fixed table (list: an unknown value crashes the page), so it is kept inside that set.
import type { TrackedResource } from '../../repositories/resources.ts'
import type { PodSummary } from '../../services/resource-service.ts'
import { withCamelAliases, type Json } from './translate.ts'

/** The statuses the UI's resource pages have a badge for; our ResourceStatus is the same set today. */
export const UI_RESOURCE_STATUSES = ['running', 'pending', 'failed', 'completed', 'unknown', 'deleted', 'warning'] as const
const STATUSES = new Set<string>(UI_RESOURCE_STATUSES)
/** A status the pages can show: anything else (a value added here later) reads as `unknown`, not a crash. */
export const uiStatus = (status: unknown): string => (typeof status === 'string' && STATUSES.has(status) ? status : 'unknown')

/**
 * `spec` as the UI reads it: `containers[].name` for a Pod (the terminal's `container`), `nodeName`, and
 * the replica figures the list page types. We keep no manifest, so only what the record knows is here.
 */
function specOf(r: TrackedResource): Json {
  const spec: Json = {}
  if (Array.isArray(r.containers)) spec.containers = r.containers.map((name) => ({ name }))
  const c = r.counters ?? {}
  if (typeof c.nodeName === 'string') spec.nodeName = c.nodeName
  if (typeof c.replicas === 'number') spec.replicas = c.replicas
  if (typeof c.availableReplicas === 'number') spec.availableReplicas = c.availableReplicas
  return spec
}

/**
 * One resource for the UI: ours (snake_case, with camelCase aliases) plus `type`, `clusterName`,
 * `createdAt`, `spec`, and empty `annotations`/`ownerReferences`/`resourceVersion` (not recorded here).
 */
export function toUiResource(r: TrackedResource, extra: { workflowName?: string } = {}): Json {
  return {
    ...withCamelAliases(r as unknown as Json),
    type: r.kind,
    status: uiStatus(r.status),
    uid: r.uid ?? '',
    resourceVersion: '',
    clusterName: r.cluster,
    workflowId: r.workflow_id,
    ...(extra.workflowName !== undefined && { workflowName: extra.workflowName }),
    annotations: {},
    ownerReferences: [],
    spec: specOf(r),
  }
}

/**
 * The detail page's history. No status history is kept here (the watchers overwrite the record), so the
 * one thing known is when the record was first made: by a run applying the object, or a sync finding it.
 */
export function resourceHistory(r: Pick<TrackedResource, 'id' | 'created_at'>): Json[] {
  return [{ id: `${r.id}-created`, action: 'created', timestamp: r.created_at, message: 'first recorded (applied by a run or found by a sync)' }]
}

const PHASE_STATUS: Record<string, string> = { Running: 'running', Pending: 'pending', Succeeded: 'completed', Failed: 'failed' }

/**
 * One item of `GET /resources/:id/pods` for the UI: ours plus `spec.nodeName` and `status` in the UI's
 * set: the Pod record's own status when it is tracked (it reads container states: a crash loop is
 * `failed` while the phase still says Running), else the phase's.
 */
export function toUiPod(p: PodSummary, recordStatus?: string): Json {
  return {
    ...withCamelAliases(p as unknown as Json),
    status: recordStatus !== undefined ? uiStatus(recordStatus) : uiStatus(PHASE_STATUS[p.phase]),
    spec: { ...(p.node_name !== null && { nodeName: p.node_name }) },
  }
}

/** A pod record (kind Pod) as an item of the pods list, where no live pod was read (a CronJob's). */
export function toUiPodRecord(r: TrackedResource): Json {
  return { id: r.id, name: r.name, namespace: r.namespace ?? '', status: uiStatus(r.status), phase: r.counters?.phase ?? null, spec: { ...(typeof r.counters?.nodeName === 'string' && { nodeName: r.counters.nodeName }) } }
}
