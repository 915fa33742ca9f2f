// cwo workflows list|get|create|apply -f FILE|export
import type { Command } from 'commander'
import { ok } from '../client.ts'
import type { CommandContext } from '../context.ts'
import { table } from '../output.ts'
import { resolveWorkflowId } from '../workflow-ref.ts'

export function registerWorkflows(program: Command, ctx: CommandContext): void {
  const workflows = program.command('workflows').alias('wf').description('list, show, create, apply and export workflows')

  workflows.command('list')
    .description('your workflows')
    .option('--search <text>', 'only those whose name or description matches')
    .option('--page <n>', 'page, from 1', (v) => Number(v))
    .option('--limit <n>', 'per page (at most 100)', (v) => Number(v))
    .action(async (o: { search?: string; page?: number; limit?: number }) => {
      const s = await ctx.session()
      const page = await ok(s.server, s.client.GET('/v1/api/workflows', { params: { query: { search: o.search, page: o.page, limit: o.limit } } }))
      ctx.print(page, () => table(page.workflows, [
        { header: 'id', value: (w) => w.id },
        { header: 'name', value: (w) => w.name },
        { header: 'status', value: (w) => w.status },
        { header: 'version', value: (w) => w.current_version },
        { header: 'nodes', value: (w) => w.node_count },
        { header: 'last run', value: (w) => w.last_run_at },
      ]))
    })

  workflows.command('get')
    .description('one workflow, whole')
    .argument('<workflow>', 'id or name')
    .action(async (ref: string) => {
      const s = await ctx.session()
      const id = await resolveWorkflowId(s, ref)
      const wf = await ok(s.server, s.client.GET('/v1/api/workflows/{id}', { params: { path: { id } } }))
      ctx.print(wf)
    })
}
