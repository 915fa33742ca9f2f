// Flags shared by the commands that start a run (run, rollback, sync): where it goes, its run-time values,
// and how long --wait waits.
import { InvalidArgumentError, type Command } from 'commander'
import { CliError, EXIT } from '../errors.ts'

export interface RunFlags {
  cluster?: string
  namespace?: string
  dryRun?: boolean
  wait?: boolean
  timeout: number
  env?: string[]
  secret?: string[]
}

export const DEFAULT_TIMEOUT_S = 600

export function seconds(v: string): number {
  const n = Number(v)
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('a number of seconds above 0')
  return n
}

const collect = (v: string, all: string[] | undefined) => [...(all ?? []), v]

export function targetOptions(cmd: Command): Command {
  return cmd
    .option('--cluster <name>', 'a cluster you may deploy to, id or name (default: the workflow\'s)')
    .option('-n, --namespace <ns>', 'put every namespaced object in this namespace (created if missing)')
}

export function waitOptions(cmd: Command): Command {
  return cmd
    .option('--wait', 'follow the run to its end; exit 0 only when it completed, 3 when it failed or --timeout passed')
    .option('--timeout <seconds>', 'how long --wait waits, from the start (the run goes on after it)', seconds, DEFAULT_TIMEOUT_S)
}

export function triggerOptions(cmd: Command): Command {
  return cmd
    .option('--env <node/KEY=VALUE>', 'an environment variable for one node\'s containers, this run only (repeatable)', collect)
    .option('--secret <node/KEY[=VALUE]>', 'a secret value for one secret node, this run only; without =VALUE it is read from $KEY, which keeps it out of shell history (repeatable)', collect)
}

type Values = Record<string, Record<string, string>>

/**
 * `--env`/`--secret` as the API's trigger_data ({<nodeId>: {KEY: value}}). The node id is what precedes the
 * last `/` before `=` (keys of environment variables and secrets cannot hold a `/`; node ids may).
 */
export function triggerData(flags: Pick<RunFlags, 'env' | 'secret'>, env: Record<string, string | undefined>): { secrets?: Values; envVars?: Values } | undefined {
  const parse = (items: string[] | undefined, flag: string, fromEnv: boolean): Values | undefined => {
    if (!items?.length) return undefined
    const out: Values = {}
    for (const item of items) {
      const eq = item.indexOf('=')
      const ref = eq < 0 ? item : item.slice(0, eq)
      const slash = ref.lastIndexOf('/')
      const node = ref.slice(0, slash)
      const key = ref.slice(slash + 1)
      if (slash <= 0 || !key) throw usage(`${flag} ${JSON.stringify(ref)}: expected node/KEY=VALUE`)
      let v: string | undefined = eq < 0 ? undefined : item.slice(eq + 1)
      if (v === undefined) {
        if (!fromEnv) throw usage(`${flag} ${ref}: expected node/KEY=VALUE`)
        v = env[key]
        if (v === undefined) throw usage(`${flag} ${ref}: $${key} is not set`)
      }
      ;(out[node] ??= {})[key] = v
    }
    return out
  }
  const envVars = parse(flags.env, '--env', false)
  const secrets = parse(flags.secret, '--secret', true)
  return envVars || secrets ? { ...(envVars && { envVars }), ...(secrets && { secrets }) } : undefined
}

function usage(message: string): CliError { return new CliError(message, EXIT.usage) }
