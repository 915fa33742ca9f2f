// cwo logs RESOURCE [-f] [-c CONTAINER] [--pod POD] [--tail N] [--since SECONDS] [--timestamps]
import type { Command } from 'commander'
import type { CommandContext } from '../context.ts'
import { CliError, EXIT } from '../errors.ts'
import { resolveResourceId, resourceFilterOptions, type ResourceFilters } from '../pods/resource-ref.ts'
import { followStream } from '../sse.ts'
import type { LogLine, LogsError, LogsMetadata } from '../follow/events.ts'

interface LogsOptions extends ResourceFilters { follow?: boolean; container?: string; pod?: string; tail?: number; since?: number; timestamps?: boolean }

const integer = (name: string, min: number, max: number) => (v: string) => {
  const n = Number(v)
  if (!Number.isInteger(n) || n < min || n > max) throw new CliError(`${name} must be a whole number from ${min} to ${max}`, EXIT.usage)
  return n
}

export function registerLogs(program: Command, ctx: CommandContext): void {
  resourceFilterOptions(program.command('logs')
    .description('print the log of a resource\'s pod (a ready one, newest first, unless --pod); -f follows it')
    .argument('<resource>', 'tracked resource id, or kind/name (deployment/web, pod/web-7d9f-abcde, svc/web)')
    .option('-f, --follow', 'keep printing new lines until the log ends or Ctrl-C')
    .option('-c, --container <name>', 'the container (default: the pod\'s first)')
    .option('--pod <name>', 'one of the workload\'s pods')
    .option('--tail <n>', 'lines of history first (0-5000, default 100)', integer('--tail', 0, 5000))
    .option('--since <seconds>', 'only lines newer than this many seconds', integer('--since', 1, 31536000))
    .option('--timestamps', 'prefix each line with its time'))
    .addHelpText('after', '\nLines go to stdout as they are; with -o json, one JSON object per line ({pod, container, line, timestamp}).\nExit 1 when the log cannot be read (its error on stderr); 130 on Ctrl-C.')
    .action(async (ref: string, o: LogsOptions) => {
      const s = await ctx.session()
      const id = await resolveResourceId(s, ref, o)
      const json = ctx.format === 'json'
      let source: Partial<LogsMetadata> = {}
      let failure: string | undefined
      const stream = followStream(s, `/v1/api/resources/${encodeURIComponent(id)}/logs/stream`, {
        signal: ctx.io.signal,
        query: { follow: Boolean(o.follow), container: o.container, pod: o.pod, tail: o.tail, since_seconds: o.since, timestamps: o.timestamps },
      })
      for await (const e of stream) {
        if (e.type === 'metadata') source = e.data as LogsMetadata
        else if (e.type === 'log') {
          const d = e.data as LogLine
          ctx.io.stdout.write(json ? JSON.stringify({ pod: source.pod, container: source.container, ...d }) + '\n' : d.line + '\n')
        } else if (e.type === 'error') failure = (e.data as LogsError)?.error ?? 'the log could not be read'
        else if (e.type === 'complete') break
      }
      if (failure) throw new CliError(failure)
    })
}
