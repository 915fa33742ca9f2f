// POST /v1/api/workflows/:id/rollback and POST /v1/api/workflows/:id/sync (API.md §12). Both start a run and
// wait for it as POST /run does (200 finished, 202 still running with `Location`).
import { Type } from 'typebox'
import type { App } from '../../app-types.ts'
import { errorResponses } from '../../../schemas/common.ts'
import { WorkflowParams, RollbackRequest, RollbackResult, SyncRequest } from '../../../schemas/workflow.ts'
import { waitForStartedRun } from './run.ts'

const tags = ['workflows']

export default async function rollbackRoutes(app: App) {
  const rollbacks = app.services.rollbacks

  app.post('/v1/api/workflows/:id/rollback', {
    schema: {
      tags, operationId: 'rollbackWorkflow',
      summary: 'restore a version\'s graph and deploy it, or dry-run that',
      description: [
        'Checks as POST /run does (404 workflow or `version` not found; 400 a version saved with a secret value cannot be restored, or a node does not render; 403/404 cluster; 409 a run of this workflow is running), recording nothing when one fails.',
        'Then, holding the run lock, the version\'s graph is restored into the workflow as POST /versions/{version}/restore does (a new version with `restored_from`, its `run_id` the rollback run) and a run of that restored version starts (no second version is recorded): `trigger: "rollback"`, `rollback_of: <version>`. Objects the version does not have are pruned as after any run. Fields changed on the cluster by someone else (kubectl scale, set image) are taken back, as sync does (server-side apply with force); labels someone added are left (drift reports them; sync removes them).',
        '`dry_run: true` restores nothing, records no version and applies nothing: the run is a dry run of the version (each node\'s action and `diff` against the live object).',
        'Both answer `changes`: the graph changes from the workflow\'s graph before the rollback to the version\'s. The reply waits up to RUN_REPLY_WAIT_MS: 200 with the finished run, or 202 with it still running (poll the `Location`).',
      ].join('\n\n'),
      params: WorkflowParams, body: RollbackRequest,
      response: {
        200: { ...RollbackResult, description: 'the run, finished, and the graph changes' },
        202: { ...RollbackResult, description: 'the run, still running (`Location` names it), and the graph changes' },
        ...errorResponses(400, 401, 403, 404, 409, 413, 503),
      },
    },
  }, async (req, reply) => {
    const { started, changes } = await rollbacks.start(req.user.id, req.params.id, req.body)
    const { code, run, location } = await waitForStartedRun(app, req.user.id, req.params.id, started)
    if (location) reply.header('location', location)
    return reply.code(code).send({ run, changes })
  })

  app.post('/v1/api/workflows/:id/sync', {
    schema: {
      tags, operationId: 'syncWorkflow',
      summary: 're-apply what was last deployed to the cluster (undo drift)',
      description: [
        'Re-applies the manifests of the version last deployed to the cluster (`cluster`, default the workflow\'s `cluster_id`): the version of the workflow\'s latest finished (completed or failed) non-dry run there, into the namespace that run used unless `namespace` is given. 409 when nothing was deployed on that cluster.',
        'A run with `trigger: "sync"` and that `version`; no version is recorded. Fields changed on the cluster by someone else are taken back (server-side apply with force). Otherwise as POST /run: the same checks (400, 403, 404), 409 while a run of this workflow is running, apply in the background, readiness wait, prune of objects that left the graph, and the same reply (200 finished, 202 still running with `Location`).',
        '`dry_run: true` applies nothing: each node says what the sync would change (`diff`).',
      ].join('\n\n'),
      params: WorkflowParams, body: Type.Optional(SyncRequest),
      response: {
        200: Type.Ref('Run', { description: 'the run, finished' }),
        202: Type.Ref('Run', { description: 'the run, still running; `Location` names it' }),
        ...errorResponses(400, 401, 403, 404, 409, 413, 503),
      },
    },
  }, async (req, reply) => {
    const started = await app.services.runs.sync(req.user.id, req.params.id, req.body ?? {}, 'sync')
    const { code, run, location } = await waitForStartedRun(app, req.user.id, req.params.id, started)
    if (location) reply.header('location', location)
    return reply.code(code).send(run)
  })
}
