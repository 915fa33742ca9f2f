// cwo run WORKFLOW [--cluster] [--namespace] [--dry-run] [--wait [--timeout S]] [--env|--secret node/KEY=VALUE]
import type { Command } from 'commander'
import { ok } from '../client.ts'
import type { CommandContext } from '../context.ts'
import { settleRun } from '../runs/outcome.ts'
import { targetOptions, triggerData, triggerOptions, waitOptions, type RunFlags } from '../runs/options.ts'
import { resolveWorkflowId } from '../workflow-ref.ts'

export function registerRun(program: Command, ctx: CommandContext): void {
  const run = program.command('run')
    .description('deploy a workflow to a cluster (or dry-run it) and print the run; with --wait, each object\'s outcome and the final status')
    .argument('<workflow>', 'id or name')
    .option('--dry-run', 'change nothing: each object says what a run would do, and its diff (recorded in the run history as a dry run)')
    .option('--force', 'take over fields another field manager (kubectl, an operator) owns instead of failing the node')
    .option('--no-prune', 'keep the objects of earlier runs that left the graph')
    .addHelpText('after', '\nExit codes: 0 the run completed (or, without --wait, is still running), 3 it failed or --wait timed out, 1 the API refused it.\n-o json prints the run record (the final one with --wait).')
  waitOptions(triggerOptions(targetOptions(run)))
    .action(async (ref: string, o: RunFlags & { force?: boolean; prune: boolean }) => {
      const deadline = Date.now() + o.timeout * 1000
      const trigger_data = triggerData(o, ctx.io.env)
      const s = await ctx.session()
      const id = await resolveWorkflowId(s, ref)
      const started = await ok(s.server, s.client.POST('/v1/api/workflows/{id}/run', {
        params: { path: { id } },
        body: {
          cluster: o.cluster, namespace: o.namespace, dry_run: o.dryRun === true, trigger_data,
          ...(o.force && { force: true }), ...(!o.prune && { prune: false }),
        },
      }))
      // A preview is only worth its diff: a dry run is always waited for.
      await settleRun(ctx, s, ref, started, { wait: o.wait === true || o.dryRun === true, deadline })
    })
}
