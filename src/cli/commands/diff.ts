// cwo diff WORKFLOW: what a run would change on the cluster (a dry run's per-object diff), or with --drift
// what changed on the cluster since the last run. Exit 0 when nothing differs, 4 when something does.
import type { Command } from 'commander'
import { ok } from '../client.ts'
import type { CommandContext } from '../context.ts'
import { CliError, EXIT } from '../errors.ts'
import { changedNodes, clean, diffText, driftedObjectCount, driftText } from '../runs/print.ts'
import { DEFAULT_TIMEOUT_S, seconds, targetOptions, triggerData, triggerOptions } from '../runs/options.ts'
import { isFinished, waitForRun } from '../runs/wait.ts'
import { resolveWorkflowId } from '../workflow-ref.ts'

interface DiffFlags { cluster?: string; namespace?: string; drift?: boolean; force: boolean; timeout: number; env?: string[]; secret?: string[] }

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`

export function registerDiff(program: Command, ctx: CommandContext): void {
  const diff = program.command('diff')
    .description('what a run would change on the cluster: each object a run would create or change, with its fields (- live, + what the run applies)')
    .argument('<workflow>', 'id or name')
    .option('--drift', 'instead: what changed on the cluster since the last run (- as applied, + live now), as GET /drift reports it')
    .option('--no-force', 'compare as a plain `cwo run` would apply: a field someone else (kubectl) changed then shows as a conflict, not as a difference')
    .option('--timeout <seconds>', 'how long to wait for the dry run', seconds, DEFAULT_TIMEOUT_S)
    .addHelpText('after', [
      '',
      'The comparison is a dry run of the workflow (every write sent with dryRun=All: nothing changes on the',
      'cluster). The API records it in the run history as a dry run; it is not counted as a run.',
      'Objects a run would prune (those that left the graph) are not listed.',
      '',
      'Exit codes: 0 nothing would change (or, with --drift, nothing drifted), 4 something would (or drifted),',
      '1 the API refused it or the dry run failed. -o json prints the dry run record (or the drift report) whole.',
    ].join('\n'))
  triggerOptions(targetOptions(diff))
    .action(async (ref: string, o: DiffFlags) => {
      const deadline = Date.now() + o.timeout * 1000
      const trigger_data = triggerData(o, ctx.io.env)
      const s = await ctx.session()
      const id = await resolveWorkflowId(s, ref)
      if (o.drift) {
        if (o.cluster || o.namespace) throw new CliError('--drift reads every cluster the workflow was deployed to: it takes no --cluster or --namespace', EXIT.usage)
        const drift = await ok(s.server, s.client.GET('/v1/api/workflows/{id}/drift', { params: { path: { id } } }))
        const count = driftedObjectCount(drift)
        ctx.print(drift, () => driftText(drift))
        if (count === 0) { ctx.note('no drift: the cluster is as the last run left it'); return }
        throw new CliError(`${plural(count, 'object')} drifted`, EXIT.differs)
      }
      let run = await ok(s.server, s.client.POST('/v1/api/workflows/{id}/run', {
        params: { path: { id } },
        body: { cluster: o.cluster, namespace: o.namespace, dry_run: true, force: o.force, trigger_data },
      }))
      if (!isFinished(run)) run = await waitForRun(s, id, run.id, { signal: ctx.io.signal, deadline, workflowRef: ref })
      const changed = changedNodes(run)
      ctx.print(run, () => diffText(changed))
      if (run.status === 'failed') throw new CliError(`dry run ${run.id} failed: ${clean(run.error ?? 'no error recorded')}`)
      if (changed.length === 0) { ctx.note(`no differences: a run would change nothing (${plural(run.nodes.length, 'object')} compared)`); return }
      throw new CliError(`${plural(changed.length, 'object')} would change`, EXIT.differs)
    })
}
