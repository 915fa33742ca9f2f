// Placeholder so the command tree compiles while this group is written (issue 27); replaced by the real one.
import type { Command } from 'commander'
import type { CommandContext } from '../context.ts'

export function registerExec(_program: Command, _ctx: CommandContext): void {}
