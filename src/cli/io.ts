// What a command reads and writes: the process's own streams when run as `cwo`, captured ones in tests.
import type { Readable } from 'node:stream'

export interface CliIO {
  stdout: { write(text: string): unknown }
  stderr: { write(text: string): unknown }
  stdin: Readable
  env: Record<string, string | undefined>
  cwd: string
  /** Aborted on Ctrl-C (SIGINT): followers stop and the command exits 130. */
  signal: AbortSignal
  /** Whether stdout is a terminal (tables then; JSON lines otherwise where a command streams). */
  isTTY: boolean
}
