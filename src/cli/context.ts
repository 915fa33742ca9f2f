// What every command's action gets: the streams, the chosen output format, and the session on demand.
import { CliError } from './errors.ts'
import type { CliIO } from './io.ts'
import { parseFormat, render, type Format } from './output.ts'
import { openSession, type Session } from './session.ts'

export interface GlobalOptions { server?: string; output?: string }

export class CommandContext {
  constructor(readonly io: CliIO, private readonly globals: () => GlobalOptions) {}

  get format(): Format { return parseFormat(this.globals().output ?? 'table') }

  get serverFlag(): string | undefined { return this.globals().server }

  session(needToken = true): Promise<Session> { return openSession(this.io, this.serverFlag, needToken) }

  /** Prints `value` in the chosen format; `asTable` is its table form. */
  print(value: unknown, asTable?: () => string): void { this.io.stdout.write(render(value, this.format, asTable)) }

  /** A line for a person (progress, confirmations): stderr, so stdout stays the data a script reads. */
  note(line: string): void { this.io.stderr.write(line.endsWith('\n') ? line : line + '\n') }

  fail(message: string, exitCode?: number): never { throw new CliError(message, exitCode) }
}
