// POST /v1/api/workflows/:id/run and GET /v1/api/workflows/:id/runs/:runId. The route starts a run and waits
// a bounded time for it; the run itself never depends on this request (a disconnect does not abort it).
import { Type, type Static } from 'typebox'
import type { App } from '../../app-types.ts'
import { errorResponses } from '../../../schemas/common.ts'
import { WorkflowParams, RunParams, RunRequest } from '../../../schemas/workflow.ts'
import type { Run } from '../../repositories/runs.ts'
import type { StartedRun } from '../../services/run-service.ts'

const tags = ['workflows']

/**
 * Starts a run and waits up to RUN_REPLY_WAIT_MS for it: 200 with the finished run, or 202 with it still
 * running and where to poll it. Shared with the KubeOrch UI adapter, which answers the same run in its dialect.
 */
export async function startRunAndWait(app: App, userId: string, workflowId: string, body: Static<typeof RunRequest>): Promise<{ code: 200 | 202; run: Run; location?: string }> {
  return waitForStartedRun(app, userId, workflowId, await app.services.runs.start(userId, workflowId, body))
}

/** Waits for a started run (any trigger) as the run route does: 200 finished, or 202 with where to poll it. */
export async function waitForStartedRun(app: App, userId: string, workflowId: string, { run, done }: StartedRun): Promise<{ code: 200 | 202; run: Run; location?: string }> {
  const runs = app.services.runs
  const finished = await runs.waitFor(done, app.config.RUN_REPLY_WAIT_MS)
  if (finished) return { code: 200, run: finished }
  const current: Run = (await runs.get(userId, workflowId, run.id).catch(() => null)) ?? run
  return { code: 202, run: current, location: `/v1/api/workflows/${workflowId}/runs/${run.id}` }
}

export default async function runRoutes(app: App) {
  const runs = app.services.runs

  app.post('/v1/api/workflows/:id/run', {
    schema: {
      tags, operationId: 'runWorkflow',
      summary: 'deploy the workflow to a cluster (server-side apply), or dry-run it',
      description: [
        'Checks first, recording nothing when one fails: the workflow is yours (404); `cluster` (default: the workflow\'s `cluster_id`) is one you may deploy to (404, 403 when shared with you as viewer, 409 when its stored credentials cannot be opened); every node renders without error (400 listing each node\'s errors).',
        'Then a version is recorded (`is_automatic`, `run_id`) and the run record is written, and the objects are applied in the background in dependency order; workloads are awaited (bounded) until ready. The reply waits up to RUN_REPLY_WAIT_MS: 200 with the finished run, or 202 with the run still `running` (poll the `Location`).',
        'A second run of the same workflow while one runs → 409. `force` takes over fields another field manager owns (otherwise such a node fails naming the manager). `prune` (default true) deletes, after a fully successful run, the objects of earlier runs that left the graph (ApplySet convention; only objects still this workflow\'s: each is read again just before it is deleted, and one another workflow took over is kept).',
        'Objects belong to the workflow that made them: an existing object that carries another workflow\'s id, or that this service did not make, is not changed and its node fails (`failed`, a `conflict (409)` message naming the other workflow\'s id). `adopt: true` takes such objects over when the caller owns that other workflow or owns the cluster (only the cluster\'s owner may adopt an object this service did not make). `force` is separate: it takes over fields another field manager (kubectl, an operator) owns.',
        '`dry_run: true` sends every write with dryRun=All: nothing is created, versioned or tracked; each node says the action it would take and its diff against the live object. Dry runs appear in the history with `dry_run: true` and are not counted in the workflow\'s run counters.',
        'Values in `trigger_data.secrets` and `trigger_data.envVars` go to the cluster only: never into a record, reply or log.',
      ].join('\n\n'),
      params: WorkflowParams, body: Type.Optional(RunRequest),
      response: {
        200: Type.Ref('Run', { description: 'the run, finished' }),
        202: Type.Ref('Run', { description: 'the run, still running; `Location` names it' }),
        ...errorResponses(400, 401, 403, 404, 409, 413, 422, 503),
      },
    },
  }, async (req, reply) => {
    const { code, run, location } = await startRunAndWait(app, req.user.id, req.params.id, req.body ?? {})
    if (location) reply.header('location', location)
    return reply.code(code).send(run)
  })

  app.get('/v1/api/workflows/:id/runs/:runId', {
    schema: {
      tags, operationId: 'getWorkflowRun', summary: 'one run: status, per-node results, logs, error',
      params: RunParams, response: { 200: Type.Ref('Run'), ...errorResponses(401, 404) },
    },
  }, async (req) => runs.get(req.user.id, req.params.id, req.params.runId))
}
