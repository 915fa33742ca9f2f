// What `run`, `rollback` and `sync` do with the run the API answered: wait for its end when asked, print
// it, and exit as scripts expect (0 completed or still running without --wait, 3 failed or timed out).
import type { CommandContext } from '../context.ts'
import { CliError, EXIT } from '../errors.ts'
import type { Session } from '../session.ts'
import type { StreamEvent } from '../sse.ts'
import type { NodeUpdate } from './events.ts'
import { clean, diffText, outcomeLines, summaryLine } from './print.ts'
import { isFinished, waitForRun, type Run } from './wait.ts'

/** What an object of the run just did, as the apply reports it (node_update with an action), for stderr. */
function progressLine(e: StreamEvent): string | null {
  if (e.type !== 'node_update') return null
  const d = e.data as NodeUpdate | null
  if (!d?.status?.action) return null
  return clean(`  ${d.kind} of node ${d.node_id}: ${d.status.action}, ${d.status.state}${d.status.message ? ` (${d.status.message})` : ''}`)
}

export interface SettleOptions {
  wait: boolean
  /** When --wait gives up (Date.now() clock). */
  deadline: number
  /** The document -o json|yaml prints for this run (rollback wraps it with its graph changes). */
  document?: (run: Run) => unknown
  /** What the table form prints before the run (rollback: its graph changes). */
  preface?: string
}

export async function settleRun(ctx: CommandContext, s: Session, workflowRef: string, started: Run, o: SettleOptions): Promise<Run> {
  let run = started
  if (o.wait && !isFinished(run)) {
    ctx.note(`${run.dry_run ? 'dry run' : 'run'} ${run.id} ${run.status}; waiting for its end`)
    run = await waitForRun(s, run.workflow_id, run.id, {
      signal: ctx.io.signal, deadline: o.deadline, workflowRef,
      onEvent: (e) => { const line = progressLine(e); if (line) ctx.note(line) },
    })
  }
  ctx.print(o.document ? o.document(run) : run, () => {
    if (!isFinished(run)) return `${o.preface ?? ''}${summaryLine(run)}`
    return `${o.preface ?? ''}${run.dry_run ? diffText(run.nodes) : outcomeLines(run)}${summaryLine(run)}`
  })
  if (!isFinished(run)) ctx.note(`it goes on on the server: cwo status ${workflowRef} -w follows it`)
  if (run.status === 'failed') throw new CliError(`${run.dry_run ? 'dry run' : 'run'} ${run.id} failed: ${clean(run.error ?? 'no error recorded')}`, EXIT.failed)
  return run
}
