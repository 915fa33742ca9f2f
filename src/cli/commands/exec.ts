// cwo exec RESOURCE [-c CONTAINER] [--pod POD] [-i] -- CMD [ARGS...]
import { text as readAll } from 'node:stream/consumers'
import type { Command } from 'commander'
import type { CommandContext } from '../context.ts'
import { CliError, EXIT } from '../errors.ts'
import { resolveResourceId, resourceFilterOptions, type ResourceFilters } from '../pods/resource-ref.ts'
import { runInTerminal } from '../pods/terminal.ts'

interface ExecOptions extends ResourceFilters { container?: string; pod?: string; stdin?: boolean }

export function registerExec(program: Command, ctx: CommandContext): void {
  resourceFilterOptions(program.command('exec')
    .description('run a command in a resource\'s pod (through the service\'s terminal) and exit with its exit code')
    .argument('<resource>', 'tracked resource id, or kind/name (deployment/web, pod/web-7d9f-abcde)')
    .argument('<command...>', 'the command and its arguments, after --')
    .option('-c, --container <name>', 'the container (default: the pod\'s first)')
    .option('--pod <name>', 'one of the workload\'s pods (default: a ready one, newest first)')
    .option('-i, --stdin', 'send what is piped to stdin to the command, then end-of-input'))
    .addHelpText('after', `
The command runs in the container's sh, in a terminal: its stderr comes merged into stdout. It is not an
interactive session (keystrokes are not forwarded): -i sends piped input, then end-of-input.
Exit code: the command's own; 1 when the session was refused or lost; 130 on Ctrl-C.
Example: cwo exec deployment/web -- cat /etc/hostname`)
    .action(async (ref: string, argv: string[], o: ExecOptions) => {
      if (!argv.length) throw new CliError('a command to run is required: cwo exec RESOURCE -- CMD [ARGS...]', EXIT.usage)
      const s = await ctx.session()
      const id = await resolveResourceId(s, ref, o)
      const stdin = o.stdin ? await readAll(ctx.io.stdin) : undefined
      const code = await runInTerminal(s, id, {
        argv, container: o.container, pod: o.pod, stdin, signal: ctx.io.signal,
        output: (text) => ctx.io.stdout.write(text),
        error: (message) => ctx.note(`cwo: ${message}`),
      })
      // As kubectl says it, on stderr; the exit code is the command's own.
      if (code !== 0) throw new CliError(`command terminated with exit code ${code}`, code)
    })
}
