// cwo rollback WORKFLOW VERSION [--dry-run] [--wait] and cwo sync WORKFLOW [--dry-run] [--wait]: put a
// version back on the cluster (its graph restored as a new version), or re-apply what was last deployed
// (undoing drift). Both print the run as `cwo run` does, with the same exit codes.
import { InvalidArgumentError, type Command } from 'commander'
import { ok } from '../client.ts'
import type { CommandContext } from '../context.ts'
import { settleRun } from '../runs/outcome.ts'
import { targetOptions, triggerData, triggerOptions, waitOptions, type RunFlags } from '../runs/options.ts'
import { graphChangesText } from '../runs/print.ts'
import { resolveWorkflowId } from '../workflow-ref.ts'

function versionNumber(v: string): number {
  const n = Number(v)
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('a version number: 1, 2, ...')
  return n
}

const EXITS = '\nExit codes: 0 the run completed (or, without --wait, is still running), 3 it failed or --wait timed out, 1 the API refused it.'

export function registerRollback(program: Command, ctx: CommandContext): void {
  const rollback = program.command('rollback')
    .description('restore a version\'s graph (recorded as a new version) and deploy it: fields someone changed on the cluster are taken back, objects the version lacks are pruned')
    .argument('<workflow>', 'id or name')
    .argument('<version>', 'the version to roll back to', versionNumber)
    .option('--dry-run', 'change nothing: the graph changes and each object\'s diff against the cluster (recorded in the run history as a dry run)')
    .addHelpText('after', `${EXITS}\n-o json prints {run, changes}: the run record (the final one with --wait) and the graph changes.`)
  waitOptions(triggerOptions(targetOptions(rollback)))
    .action(async (ref: string, version: number, o: RunFlags) => {
      const deadline = Date.now() + o.timeout * 1000
      const trigger_data = triggerData(o, ctx.io.env)
      const s = await ctx.session()
      const id = await resolveWorkflowId(s, ref)
      const { run, changes } = await ok(s.server, s.client.POST('/v1/api/workflows/{id}/rollback', {
        params: { path: { id } },
        body: { version, cluster: o.cluster, namespace: o.namespace, dry_run: o.dryRun === true, trigger_data },
      }))
      await settleRun(ctx, s, ref, run, {
        // A preview is only worth its diff: a dry run is always waited for.
        wait: o.wait === true || o.dryRun === true, deadline,
        document: (final) => ({ run: final, changes }),
        preface: graphChangesText(changes),
      })
    })

  const sync = program.command('sync')
    .description('re-apply what was last deployed to the cluster (the version of the last finished run there), taking back fields someone changed: what `cwo diff --drift` shows')
    .argument('<workflow>', 'id or name')
    .option('--dry-run', 'change nothing: each object says what the sync would change (recorded in the run history as a dry run)')
    .addHelpText('after', `${EXITS}\n-o json prints the run record (the final one with --wait).`)
  waitOptions(triggerOptions(targetOptions(sync)))
    .action(async (ref: string, o: RunFlags) => {
      const deadline = Date.now() + o.timeout * 1000
      const trigger_data = triggerData(o, ctx.io.env)
      const s = await ctx.session()
      const id = await resolveWorkflowId(s, ref)
      const run = await ok(s.server, s.client.POST('/v1/api/workflows/{id}/sync', {
        params: { path: { id } },
        body: { cluster: o.cluster, namespace: o.namespace, dry_run: o.dryRun === true, trigger_data },
      }))
      await settleRun(ctx, s, ref, run, { wait: o.wait === true || o.dryRun === true, deadline })
    })
}
