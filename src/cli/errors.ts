// Exit codes scripts can rely on (API.md §13): 0 only when the command did what it says.

export const EXIT = {
  ok: 0,
  /** The API refused the request, or it could not be reached. */
  error: 1,
  /** Bad flags or arguments (commander's own code for usage errors). */
  usage: 2,
  /** The run, build or import it waited for ended other than completed. */
  failed: 3,
  /** `cwo diff`: the cluster differs from the workflow (0 when it matches). */
  differs: 4,
  /** Interrupted (Ctrl-C) while following. */
  interrupted: 130,
} as const

/** A failure worth one line on stderr: the API's own message, never a stack. */
export class CliError extends Error {
  constructor(message: string, readonly exitCode: number = EXIT.error) {
    super(message)
  }
}
