// Every command group, in the order `cwo --help` lists them.
import type { Command } from 'commander'
import type { CommandContext } from '../context.ts'
import { registerWorkflows } from './workflows.ts'

export type RegisterCommands = (program: Command, ctx: CommandContext) => void

export const commandGroups: RegisterCommands[] = [
  registerWorkflows,
]
