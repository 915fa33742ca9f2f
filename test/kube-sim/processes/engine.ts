import type { JsonObject, KObject } from '../util.ts'
import type { BuildPhase } from './failing-builds.ts'
import type { ContainerOutput } from './output.ts'
import type { ContainerPaths } from './sandbox.ts'

/** What a container that runs for real gets: its spec, environment, paths, output, and a kill signal. */
export interface RunContext {
  pod: KObject
  spec: JsonObject
  env: Record<string, string>
  paths: ContainerPaths
  out: ContainerOutput
  signal: AbortSignal
  /** Waits out test holds and delays for the pod's build at this phase (see FailingBuilds). */
  enter(phase: BuildPhase): Promise<void>
  /** The FailingBuilds mark for the pod's build, if any. */
  failure(): 'build' | 'push' | undefined
}

/** Runs a container to completion and returns its exit code. */
export type Engine = (ctx: RunContext) => Promise<number>
