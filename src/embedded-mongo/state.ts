// The shared runtime state command handlers work on.
import type { Catalog } from './catalog.ts'
import type { CursorRegistry } from './cursors.ts'
import type { Storage } from './storage/storage.ts'
import type { Doc } from './values.ts'

export interface Logger {
  info(msg: string): void
  warn(msg: string): void
  error(msg: string): void
}

/** Counters a test can read to tell whether an operation scanned the collection. */
export interface ServerStats {
  /** Documents a filter was evaluated against, across all commands (the TTL sweeper is not counted). */
  docsExamined: number
  /** General (mingo) filters compiled by the read path; plain equality lookups do not add to it. */
  filtersCompiled: number
  /** Aggregations answered by counting the matched documents instead of running mingo (see count-pipeline.ts). */
  countShortcuts: number
  commands: number
  /** Server CPU time per command name: message decode, handler and reply encode (not the journal wait). */
  commandTimings: Map<string, { count: number; totalMs: number }>
}

export interface ServerState {
  catalog: Catalog
  cursors: CursorRegistry
  storage: Storage
  stats: ServerStats
  logger: Logger | undefined
  startedAt: number
  connections: () => number
}

export interface CommandContext {
  state: ServerState
  db: string
  connectionId: number
}

export type CommandHandler = (cmd: Doc, ctx: CommandContext) => Doc
