// cwo workflows list|get|create|apply -f FILE|export|delete
import { readFile, writeFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { text as readAll } from 'node:stream/consumers'
import type { Command } from 'commander'
import type { components } from '../api/openapi.ts'
import { ok } from '../client.ts'
import type { CommandContext } from '../context.ts'
import { CliError, EXIT } from '../errors.ts'
import { table } from '../output.ts'
import type { Session } from '../session.ts'
import { parseWorkflowFile, sameGraph, stringifyWorkflowFile, toWorkflowFile, withLiveKeysOf, type WorkflowFile } from '../workflow-file.ts'
import { findWorkflowByName, resolveWorkflowId } from '../workflow-ref.ts'

type Workflow = components['schemas']['Workflow']

const positiveInt = (flag: string) => (v: string): number => {
  const n = Number(v)
  if (!Number.isInteger(n) || n < 1) throw new CliError(`${flag} must be a whole number from 1, not ${JSON.stringify(v)}`, EXIT.usage)
  return n
}

/**
 * The name of the workflow's cluster: what a file says. `cluster_id` holds what was given (an id or a
 * name); a cluster since deleted or no longer shared keeps the stored reference.
 */
async function clusterName(s: Session, ref: string | null): Promise<string | null> {
  if (ref === null) return null
  const { data, response } = await s.client.GET('/v1/api/clusters/{name}', { params: { path: { name: ref } } })
    .catch(() => ({ data: undefined, response: undefined }))
  return response?.ok && data ? data.name : ref
}

function summary(wf: Workflow, cluster: string | null): string {
  const lines = [
    ['id', wf.id], ['name', wf.name], ['description', wf.description], ['status', wf.status],
    ['cluster', cluster ?? '(your default)'], ['version', String(wf.current_version)],
    ['runs', `${wf.run_count} (${wf.success_count} succeeded, ${wf.failure_count} failed)`], ['last run', wf.last_run_at ?? 'never'],
    ['auto sync', String(wf.auto_sync)], ['updated', wf.updated_at],
  ].map(([k, v]) => `${(k + ':').padEnd(13)}${v.replace(/[\r\n]+/g, ' ')}`)
  const nodes = wf.nodes.length
    ? '\n' + table(wf.nodes, [
      { header: 'node', value: (n) => n.id },
      { header: 'type', value: (n) => n.type },
      { header: 'name', value: (n) => n.data?.name ?? n.data?.label },
      { header: 'status', value: (n) => (n.data?._status as { state?: string } | undefined)?.state },
    ])
    : '\nno nodes\n'
  return lines.join('\n') + '\n' + nodes
}

export type ApplyResult = 'created' | 'configured' | 'unchanged'

/**
 * Makes the caller's workflow of the file's name what the file says. A new one is created and its graph
 * saved; an existing one gets a save only when its graph differs, and an update only when description or
 * cluster do. Nothing differs: nothing is written. Like the canvas's save, apply records no version: every
 * run records the version it deploys (API.md §3), so versions stay the history of what was deployed,
 * without a second copy of each graph.
 */
export async function applyWorkflowFile(s: Session, file: WorkflowFile): Promise<{ result: ApplyResult; workflow: Workflow }> {
  const graph = { nodes: file.nodes, edges: file.edges }
  const existing = await findWorkflowByName(s, file.name)
  if (existing === null) {
    const created = await ok(s.server, s.client.POST('/v1/api/workflows', { body: { name: file.name, description: file.description, cluster_id: file.cluster ?? null } }))
    try {
      await ok(s.server, s.client.POST('/v1/api/workflows/{id}/save', { params: { path: { id: created.id } }, body: graph }))
    } catch (err) {
      // The file as a whole or nothing: a graph the API refuses leaves no empty workflow behind.
      await s.client.DELETE('/v1/api/workflows/{id}', { params: { path: { id: created.id } } }).catch(() => undefined)
      throw err
    }
    return { result: 'created', workflow: await ok(s.server, s.client.GET('/v1/api/workflows/{id}', { params: { path: { id: created.id } } })) }
  }
  const path = { params: { path: { id: existing } } }
  const current = await ok(s.server, s.client.GET('/v1/api/workflows/{id}', path))
  const graphChanged = !sameGraph(file, current)
  const cluster = file.cluster ?? null
  const fieldsChanged = current.description !== file.description || (cluster !== current.cluster_id && cluster !== await clusterName(s, current.cluster_id))
  if (!graphChanged && !fieldsChanged) return { result: 'unchanged', workflow: current }
  if (fieldsChanged) await ok(s.server, s.client.PUT('/v1/api/workflows/{id}', { ...path, body: { description: file.description, cluster_id: cluster } }))
  if (graphChanged) {
    try {
      // The live status the watchers wrote stays: it describes what is deployed until the next run changes it.
      await ok(s.server, s.client.POST('/v1/api/workflows/{id}/save', { ...path, body: { nodes: withLiveKeysOf(file.nodes, current.nodes), edges: file.edges } }))
    } catch (err) {
      // A graph the API refuses: the description and cluster go back to what they were, so nothing of the file is applied.
      if (fieldsChanged) await s.client.PUT('/v1/api/workflows/{id}', { ...path, body: { description: current.description, cluster_id: current.cluster_id } }).catch(() => undefined)
      throw err
    }
  }
  return { result: 'configured', workflow: await ok(s.server, s.client.GET('/v1/api/workflows/{id}', path)) }
}

export function registerWorkflows(program: Command, ctx: CommandContext): void {
  const workflows = program.command('workflows').alias('wf').description('list, show, create, apply, export and delete workflows')

  workflows.command('list')
    .description('your workflows')
    .option('--search <text>', 'only those whose name or description matches')
    .option('--page <n>', 'page, from 1', positiveInt('--page'))
    .option('--limit <n>', 'per page (at most 100)', positiveInt('--limit'))
    .action(async (o: { search?: string; page?: number; limit?: number }) => {
      const s = await ctx.session()
      const page = await ok(s.server, s.client.GET('/v1/api/workflows', { params: { query: { search: o.search, page: o.page, limit: o.limit } } }))
      ctx.print(page, () => table(page.workflows, [
        { header: 'id', value: (w) => w.id },
        { header: 'name', value: (w) => w.name },
        { header: 'status', value: (w) => w.status },
        { header: 'version', value: (w) => w.current_version },
        { header: 'nodes', value: (w) => w.node_count },
        { header: 'last run', value: (w) => w.last_run_at ?? 'never' },
      ]))
      const shown = (page.page - 1) * page.limit + page.workflows.length
      if (ctx.format === 'table' && page.total === 0) ctx.note(o.search ? `no workflow matches ${JSON.stringify(o.search)}` : 'no workflows yet: cwo workflows apply -f FILE creates one')
      else if (ctx.format === 'table' && shown < page.total) ctx.note(`${page.workflows.length} of ${page.total} shown: --page ${page.page + 1} for more`)
    })

  workflows.command('get')
    .description('one workflow: a summary and its nodes (-o yaml or json: whole)')
    .argument('<workflow>', 'id or name')
    .action(async (ref: string) => {
      const s = await ctx.session()
      const id = await resolveWorkflowId(s, ref)
      const wf = await ok(s.server, s.client.GET('/v1/api/workflows/{id}', { params: { path: { id } } }))
      const cluster = ctx.format === 'table' ? await clusterName(s, wf.cluster_id) : null
      ctx.print(wf, () => summary(wf, cluster))
    })

  workflows.command('create')
    .description('a new, empty workflow (apply -f creates one from a file)')
    .requiredOption('--name <name>', 'its name')
    .option('--description <text>', 'what it is for')
    .option('--cluster <name>', 'the cluster its runs deploy to (default: your default cluster)')
    .action(async (o: { name: string; description?: string; cluster?: string }) => {
      const s = await ctx.session()
      const wf = await ok(s.server, s.client.POST('/v1/api/workflows', { body: { name: o.name, description: o.description, cluster_id: o.cluster ?? null } }))
      ctx.note(`workflow/${wf.name} created`)
      ctx.print(wf, () => `${wf.id}\n`)
    })

  workflows.command('apply')
    .description('create or update the workflow a file describes (YAML, apiVersion cwo/v1, kind Workflow)')
    .requiredOption('-f, --filename <file>', 'the workflow file; - reads stdin')
    .action(async (o: { filename: string }) => {
      const source = o.filename === '-' ? 'stdin' : o.filename
      let text: string
      try {
        text = o.filename === '-' ? await readAll(ctx.io.stdin) : await readFile(resolve(ctx.io.cwd, o.filename), 'utf8')
      } catch (err) {
        throw new CliError(`cannot read ${source}: ${(err as NodeJS.ErrnoException).code ?? 'unreadable'}`, EXIT.usage)
      }
      const file = parseWorkflowFile(text, source)
      const s = await ctx.session()
      const { result, workflow } = await applyWorkflowFile(s, file)
      const line = `workflow/${workflow.name} ${result}`
      if (ctx.format === 'table') ctx.io.stdout.write(line + '\n')
      else {
        ctx.note(line)
        ctx.print(workflow)
      }
    })

  workflows.command('export')
    .description('the workflow as a file for apply -f (live status left out)')
    .argument('<workflow>', 'id or name')
    .option('-f, --filename <file>', 'write it to this file instead of stdout')
    .action(async (ref: string, o: { filename?: string }) => {
      const s = await ctx.session()
      const id = await resolveWorkflowId(s, ref)
      const wf = await ok(s.server, s.client.GET('/v1/api/workflows/{id}', { params: { path: { id } } }))
      const file = toWorkflowFile(wf, await clusterName(s, wf.cluster_id))
      const text = ctx.format === 'json' ? JSON.stringify(file, null, 2) + '\n' : stringifyWorkflowFile(file)
      if (!o.filename || o.filename === '-') {
        ctx.io.stdout.write(text)
        return
      }
      try {
        await writeFile(resolve(ctx.io.cwd, o.filename), text)
      } catch (err) {
        throw new CliError(`cannot write ${o.filename}: ${(err as NodeJS.ErrnoException).code ?? 'unwritable'}`)
      }
      ctx.note(`workflow/${wf.name} exported to ${o.filename}`)
    })

  workflows.command('delete')
    .description('delete a workflow with its versions and run history (what it deployed stays in the cluster)')
    .argument('<workflow>', 'id or name')
    .option('--yes', 'really delete it')
    .action(async (ref: string, o: { yes?: boolean }) => {
      if (!o.yes) throw new CliError(`deleting ${ref} cannot be undone: add --yes`, EXIT.usage)
      const s = await ctx.session()
      const id = await resolveWorkflowId(s, ref)
      await ok(s.server, s.client.DELETE('/v1/api/workflows/{id}', { params: { path: { id } } }))
      ctx.note(`workflow/${ref} deleted`)
    })
}
