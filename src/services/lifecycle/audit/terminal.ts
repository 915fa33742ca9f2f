// The audit side of one terminal session (API.md §12): an entry when the shell is connected
// (`resource.exec`, session phase `open`, status 101) and one when the session ends (phase `close`: the
// exit code, bytes typed in and bytes of output, and how long it lasted). What went through the terminal
// is counted, never kept. A session refused before its shell connected (not yours, a shell outside the
// allowlist, the user's session limit, the cluster refusing) leaves one `open` entry with the refusal's
// status and outcome instead; one the client left before that leaves one with status 499 (failed).
import type { AuditOutcome } from '../../../repositories/audit.ts'
import type { AuditRecorder, NewAuditEntry } from './recorder.ts'
import { outcomeOf } from './outcome.ts'

export const TERMINAL_ACTION = 'resource.exec'
/** The status of a session the client closed before its shell was connected (nginx's "client closed request"). */
export const CLIENT_GONE = 499

export interface TerminalAuditContext {
  actor_id: string | null
  actor_email: string | null
  resource_id: string
  ip: string | null
  request_id: string | null
}

export class TerminalAudit {
  private bytesIn = 0
  private bytesOut = 0
  private openedAt: number | null = null
  private settled = false

  constructor(private readonly recorder: AuditRecorder, private readonly ctx: TerminalAuditContext, private readonly now: () => number = Date.now) {}

  input(text: string): void { this.bytesIn += Buffer.byteLength(text) }
  output(text: string): void { this.bytesOut += Buffer.byteLength(text) }

  /** The shell is connected. */
  opened(): void {
    if (this.settled || this.openedAt !== null) return
    this.openedAt = this.now()
    this.write(outcomeOf(101), 101, { phase: 'open' })
  }

  /** Refused before the shell connected, with the HTTP status the refusal stands for. */
  refused(status: number): void {
    if (this.settled || this.openedAt !== null) return
    this.settled = true
    this.write(outcomeOf(status), status, { phase: 'open' })
  }

  /** The session ended, however it did; `exitCode` is the shell's when it exited. */
  ended(exitCode: number | null): void {
    if (this.settled) return
    this.settled = true
    if (this.openedAt === null) { this.write('failed', CLIENT_GONE, { phase: 'open' }); return }
    this.write('ok', 101, {
      phase: 'close', exit_code: exitCode, bytes_in: this.bytesIn, bytes_out: this.bytesOut, duration_ms: Math.max(0, this.now() - this.openedAt),
    })
  }

  private write(outcome: AuditOutcome, status: number, session: NonNullable<NewAuditEntry['session']>): void {
    const { resource_id, ...who } = this.ctx
    this.recorder.record({ ...who, action: TERMINAL_ACTION, target_type: 'resource', target_id: resource_id, subject_id: null, outcome, status, session })
  }
}
