// cwo status WORKFLOW [-w]: each node's live status; -w follows the workflow's event stream until the next
// run ends (exit 0 completed, 3 failed) or Ctrl-C (130).
import type { Command } from 'commander'
import YAML from 'yaml'
import type { components } from '../api/openapi.ts'
import { ok } from '../client.ts'
import type { CommandContext } from '../context.ts'
import { CliError, EXIT } from '../errors.ts'
import { table } from '../output.ts'
import type { NodeStatusPayload, NodeUpdate, RunComplete, StatusChange, StreamError } from '../runs/events.ts'
import { clean } from '../runs/print.ts'
import { readRun } from '../runs/wait.ts'
import { followStream, type StreamEvent } from '../sse.ts'
import { resolveWorkflowId } from '../workflow-ref.ts'

type Workflow = components['schemas']['Workflow']
type CanvasNode = components['schemas']['CanvasNode']
type LiveStatus = Partial<NodeStatusPayload>

const liveStatus = (n: CanvasNode): LiveStatus => {
  const s = (n.data as { _status?: unknown } | undefined)?._status
  return s && typeof s === 'object' ? s as LiveStatus : {}
}

/** One row per node: what it is, and what the cluster says of it now (empty before any run). */
export function statusTable(wf: Workflow): string {
  const c = (v: unknown) => (typeof v === 'string' ? clean(v) : v)
  return table(wf.nodes ?? [], [
    { header: 'node', value: (n) => c(n.id) },
    { header: 'type', value: (n) => c(n.type) },
    { header: 'name', value: (n) => c((n.data as { name?: unknown } | undefined)?.name) },
    { header: 'state', value: (n) => { const s = liveStatus(n); return c(s.state === 'drifted' && s.live_state ? `drifted (${s.live_state})` : s.state) } },
    { header: 'ready', value: (n) => c(liveStatus(n).ready) },
    { header: 'message', value: (n) => c(liveStatus(n).message) },
  ])
}

/** The line a follower prints for an event, or null for one it does not show. */
function eventLine(e: StreamEvent): string | null {
  if (!e.data || typeof e.data !== 'object') return null
  switch (e.type) {
    case 'node_update': {
      const { node_id, kind, status: st } = e.data as NodeUpdate
      return `${node_id} ${kind}: ${st.state}${st.ready ? ` ${st.ready}` : ''}${st.action ? ` (${st.action})` : ''}${st.message ? `, ${st.message}` : ''}`
    }
    case 'status_change': {
      const d = e.data as StatusChange
      return `${d.node_id} ${d.kind}/${d.name}${d.namespace ? ` (${d.namespace})` : ''}: ${d.old_status} -> ${d.new_status}${d.message ? `, ${d.message}` : ''}`
    }
    case 'error': return `error: ${(e.data as StreamError).error}`
    case 'complete': { const d = e.data as RunComplete; return `run ${d.run_id} ${d.status}` }
    default: return null
  }
}

export function registerStatus(program: Command, ctx: CommandContext): void {
  program.command('status')
    .description('each node\'s live status: state, ready replicas, message')
    .argument('<workflow>', 'id or name')
    .option('-w, --watch', 'then follow it: one line per node update or status change (JSON lines with -o json) until the next run ends; exit 0 when it completed, 3 when it failed, 130 on Ctrl-C')
    .action(async (ref: string, o: { watch?: boolean }) => {
      const s = await ctx.session()
      const id = await resolveWorkflowId(s, ref)
      if (!o.watch) {
        const wf = await ok(s.server, s.client.GET('/v1/api/workflows/{id}', { params: { path: { id } } }))
        ctx.print(wf, () => statusTable(wf))
        return
      }
      const out = (text: string) => ctx.io.stdout.write(text.endsWith('\n') ? text : text + '\n')
      // JSON lines, or a YAML document per event; a table's line otherwise.
      const emit = (e: StreamEvent, text: () => string) => out(ctx.format === 'json' ? JSON.stringify({ event: e.type, data: e.data })
        : ctx.format === 'yaml' ? `---\n${YAML.stringify({ event: e.type, data: e.data })}` : text())
      let opened = false
      for await (const e of followStream(s, `/v1/api/workflows/${encodeURIComponent(id)}/status/stream`, { signal: ctx.io.signal })) {
        // Every (re)connection starts with `metadata`: the first is the snapshot; the later ones repeat it.
        if (e.type === 'metadata') {
          if (!opened) emit(e, () => statusTable(e.data as Workflow))
          opened = true
          continue
        }
        const raw = eventLine(e)
        if (raw === null) continue
        const line = clean(raw)
        emit(e, () => line)
        if (e.type !== 'complete') continue
        const { run_id: runId, status } = e.data as RunComplete
        // A dry run (someone's `cwo diff`) changes nothing: the run this follows is a real one.
        const run = await readRun(s, id, runId)
        if (run.dry_run) continue
        if (status === 'completed') return
        throw new CliError(`run ${runId} ${status}${run.error ? `: ${clean(run.error)}` : ''}`, EXIT.failed)
      }
      throw new CliError('the server ended the stream')
    })
}
