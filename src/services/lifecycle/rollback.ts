// Rollback (API.md §12): put a recorded version back on a cluster. The restore (a new version with
// `restored_from`) happens only once the run holds the workflow's run lock, so a refused run (another one
// running, a node that does not render, a cluster you may not deploy to) changes nothing; the run is of the
// restored version and records no second one. A dry run restores nothing and answers what the run would do.
import type { GraphDiff } from '../graph-diff.ts'
import type { RunRequest, RunService, StartedRun } from '../run-service.ts'
import type { WorkflowService } from '../workflow-service.ts'

export interface RollbackRequest extends Pick<RunRequest, 'cluster' | 'namespace' | 'dry_run' | 'trigger_data'> { version: number }

export interface RollbackStarted {
  started: StartedRun
  /** From the workflow's graph before the rollback to the version's. */
  changes: GraphDiff & { to_version: number }
}

export class RollbackService {
  constructor(private readonly deps: { workflows: WorkflowService; runs: RunService }) {}

  async start(ownerId: string, workflowId: string, request: RollbackRequest): Promise<RollbackStarted> {
    const { version, ...rest } = request
    // 404 for a missing version, 400 for one saved with a secret value (restore's rule), before anything runs.
    const target = await this.deps.workflows.restorableVersion(ownerId, workflowId, version)
    const changes = await this.deps.workflows.changesTo(ownerId, workflowId, target)
    const dryRun = request.dry_run === true
    // With force, as sync: a rollback is most wanted just after someone changed the cluster by hand
    // (kubectl scale in an incident), and without it every field they took would fail its node.
    const started = await this.deps.runs.startFrom(ownerId, workflowId, { ...rest, dry_run: dryRun, force: true }, {
      trigger: 'rollback', rollbackOf: version,
      source: {
        graph: 'version', version,
        ...(!dryRun && { onLocked: async (runId: string) => (await this.deps.workflows.restoreVersion(ownerId, workflowId, version, { runId })).version.version }),
      },
    })
    return { started, changes }
  }
}
