// The `cwo` command tree. Each group of commands registers itself from src/cli/commands/; the program is
// built per invocation, so tests run it in-process with their own streams.
import { Command, CommanderError, Option } from 'commander'
import { APP_VERSION } from '../app-info.ts'
import { CommandContext, type GlobalOptions } from './context.ts'
import { CliError, EXIT } from './errors.ts'
import type { CliIO } from './io.ts'
import { FORMATS } from './output.ts'
import { commandGroups } from './commands/index.ts'

export function buildProgram(io: CliIO): Command {
  const program = new Command('cwo')
  program
    .description('Command-line client of the Cluster Workflow Orchestration Service: workflows as files, runs, live status, logs, a shell in a pod.')
    .version(APP_VERSION, '-V, --version')
    .addOption(new Option('-s, --server <url>', 'the server (default: $CWO_SERVER, then the server of the last login, then http://localhost:3000)'))
    .addOption(new Option('-o, --output <format>', 'output format').choices(FORMATS).default('table'))
    .showHelpAfterError('(cwo --help lists the commands)')
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
    })
    .exitOverride()
  const ctx = new CommandContext(io, () => program.opts<GlobalOptions>())
  for (const register of commandGroups) register(program, ctx)
  // Subcommands report usage errors the same way and never exit the process themselves.
  const inherit = (cmd: Command) => { for (const c of cmd.commands) { c.exitOverride().configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) }); inherit(c) } }
  inherit(program)
  return program
}

/** Runs `cwo` with these arguments (without the program name) and answers its exit code. */
export async function runCli(argv: string[], io: CliIO): Promise<number> {
  const program = buildProgram(io)
  try {
    await program.parseAsync(argv, { from: 'user' })
    return EXIT.ok
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end here too; commander has already printed what it had to say.
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return EXIT.ok
      return EXIT.usage
    }
    if (err instanceof CliError) {
      io.stderr.write(`cwo: ${err.message}\n`)
      return err.exitCode
    }
    // A bug of ours: say so in one line, without the stack (CWO_DEBUG=1 shows it).
    io.stderr.write(`cwo: unexpected error: ${(err as Error)?.message ?? String(err)}\n`)
    if (io.env.CWO_DEBUG) io.stderr.write(`${(err as Error)?.stack ?? ''}\n`)
    return EXIT.error
  }
}
