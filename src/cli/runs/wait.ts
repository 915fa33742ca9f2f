// Waiting for a run's end (`run --wait`, `rollback --wait`, `sync --wait`): the workflow's event stream says
// when it ends (`complete` with its run_id), and the run record says how. The record is read again whenever
// the stream (re)connects and every few seconds, so an event missed (the run ended before the stream opened,
// a dropped connection past the replay window, a slow reader's lost events) cannot hang the wait.
import type { components } from '../api/openapi.ts'
import { ok } from '../client.ts'
import { CliError, EXIT } from '../errors.ts'
import type { Session } from '../session.ts'
import type { RunComplete } from './events.ts'
import { followStream, pause, type StreamEvent } from '../sse.ts'

export type Run = components['schemas']['Run']

export function isFinished(run: Run): boolean {
  return run.status === 'completed' || run.status === 'failed'
}

export interface WaitOptions {
  /** Ctrl-C. */
  signal: AbortSignal
  /** When to give up (Date.now() clock). */
  deadline: number
  /** How often the run record is read besides the stream (default 3 s). */
  pollMs?: number
  /** The workflow as the user named it, for the hint after a timeout. */
  workflowRef?: string
  /** Each event of the stream while waiting (progress for a person). */
  onEvent?: (e: StreamEvent) => void
}

export async function readRun(s: Session, workflowId: string, runId: string): Promise<Run> {
  return ok(s.server, s.client.GET('/v1/api/workflows/{id}/runs/{runId}', { params: { path: { id: workflowId, runId } } }))
}

/**
 * The run's record once it has ended. Throws CliError 130 on Ctrl-C, and CliError 3 at the deadline (the
 * run goes on: only the wait ends).
 */
export async function waitForRun(s: Session, workflowId: string, runId: string, o: WaitOptions): Promise<Run> {
  const stop = new AbortController()
  const onAbort = () => stop.abort()
  o.signal.addEventListener('abort', onAbort, { once: true })
  let finished: Run | undefined
  let failure: unknown
  const check = async () => {
    if (finished || stop.signal.aborted) return
    const run = await readRun(s, workflowId, runId)
    if (isFinished(run) && !finished) { finished = run; stop.abort() }
  }
  // Errors of a background read end the wait with that error (the server is gone, the run deleted).
  const background = () => { check().catch((err) => { failure ??= err; stop.abort() }) }
  const timer = setTimeout(() => stop.abort(), Math.max(0, o.deadline - Date.now()))
  const poller = setInterval(background, o.pollMs ?? 3000)
  try {
    try {
      for await (const e of followStream(s, `/v1/api/workflows/${encodeURIComponent(workflowId)}/status/stream`, { signal: stop.signal })) {
        // `metadata` opens every connection: what ended while no stream was open is in the record.
        o.onEvent?.(e)
        if (e.type === 'metadata') await check()
        else if (e.type === 'complete' && (e.data as RunComplete | null)?.run_id === runId) await check()
        if (finished) break
      }
    } catch (err) {
      if (o.signal.aborted) throw err
      // Our own stop (finished, deadline, a failed background read) ends the stream too. A stream that cannot
      // be opened or kept (429: too many open; a proxy that buffers SSE) leaves the record to tell, below;
      // an error that is the server's answer for the run itself (401, 404) comes back from that read.
    }
    // The stream ended for good, or never opened: the record alone tells, read until the deadline.
    while (!finished && !stop.signal.aborted) {
      await check()
      if (!finished) await pause(o.pollMs ?? 3000, stop.signal)
    }
  } finally {
    clearTimeout(timer)
    clearInterval(poller)
    o.signal.removeEventListener('abort', onAbort)
  }
  if (finished) return finished
  if (o.signal.aborted) throw new CliError('interrupted', EXIT.interrupted)
  if (failure) throw failure
  throw new CliError(`timed out waiting for run ${runId}; it goes on on the server (cwo status ${o.workflowRef ?? workflowId} -w follows it)`, EXIT.failed)
}

