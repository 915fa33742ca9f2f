// Drift reports (API.md §12): GET /v1/api/workflows/:id/drift checks the cluster now.
import type { App } from '../../app-types.ts'
import { errorResponses } from '../../../schemas/common.ts'
import { WorkflowParams } from '../../../schemas/workflow.ts'
import { DriftReportSchema } from '../../../schemas/drift.ts'

const tags = ['workflows']

export default async function driftRoutes(app: App) {
  const drift = app.services.drift

  app.get('/v1/api/workflows/:id/drift', {
    schema: {
      tags, operationId: 'getWorkflowDrift', summary: 'what differs in the cluster from what the last runs applied (a fresh check)',
      description: [
        'Reads every object the workflow\'s runs applied (one GET each, a few at a time, each bounded by CLUSTER_TIMEOUT_MS, with your viewer access) and compares it with the baseline the last run on that cluster left: the server\'s answer to the apply, on the fields the rendered manifest sets. So server defaults never count, and values are compared as the server normalises them.',
        'What counts as drift: a field the service set that has another value or is gone; a label added, changed or removed (labels under the kubernetes.io/ and k8s.io/ prefixes, which controllers add, do not count); an annotation the service set that changed (another tool\'s new annotation does not count); an object deleted (`missing: true`). Status and server bookkeeping never count, nor `spec.replicas` of a workload that a HorizontalPodAutoscaler of the same workflow scales.',
        'Only drifted nodes are listed; `nodes` is empty when everything is as applied, or when there is no baseline yet (never deployed, or last run before this server recorded baselines: the next run or sync records one). Secret data and run-time trigger values are compared by a keyed digest and shown as "(hidden)". The result is also stored as the nodes\' drift (`data._status.drift`, state `drifted`) and announced (`drift_detected` on the workflow stream) as the periodic check (DRIFT_CHECK_INTERVAL_S) and watch events do.',
        '502 when a cluster does not answer.',
      ].join('\n\n'),
      params: WorkflowParams, response: { 200: DriftReportSchema, ...errorResponses(400, 401, 404, 502) },
    },
  }, async (req) => drift.report(req.user.id, req.params.id))
}
