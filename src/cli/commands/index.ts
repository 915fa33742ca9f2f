// Every command group, in the order `cwo --help` lists them.
import type { Command } from 'commander'
import type { CommandContext } from '../context.ts'
import { registerAuth } from './auth.ts'
import { registerClusters } from './clusters.ts'
import { registerWorkflows } from './workflows.ts'
import { registerRun } from './run.ts'
import { registerStatus } from './status.ts'
import { registerDiff } from './diff.ts'
import { registerRollback } from './rollback.ts'
import { registerLogs } from './logs.ts'
import { registerExec } from './exec.ts'
import { registerBuild } from './build.ts'
import { registerImport } from './import.ts'

export type RegisterCommands = (program: Command, ctx: CommandContext) => void

export const commandGroups: RegisterCommands[] = [
  registerAuth,
  registerClusters,
  registerWorkflows,
  registerRun,
  registerStatus,
  registerDiff,
  registerRollback,
  registerLogs,
  registerExec,
  registerBuild,
  registerImport,
]
