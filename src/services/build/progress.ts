// What a build's pod says about its progress: the container a line comes from names the phase (the git
// containers clone, the builder builds), and BuildKit's plain-progress lines say how far the build is and
// when the push starts. Pure functions over one line at a time, so the mapping is tested without a cluster.
import type { BuildContainer } from '../../kube/build-job.ts'

/** The spec's phases (clone, build, push); `status` says the same while running, in -ing words. */
export type BuildPhase = 'clone' | 'build' | 'push'
export type BuildStatus = 'pending' | 'cloning' | 'building' | 'pushing' | 'completed' | 'failed' | 'cancelled'
export const STATUS_OF_PHASE: Record<BuildPhase, BuildStatus> = { clone: 'cloning', build: 'building', push: 'pushing' }
export const TERMINAL_STATUSES = ['completed', 'failed', 'cancelled'] as const
export const isTerminal = (s: string): boolean => (TERMINAL_STATUSES as readonly string[]).includes(s)

/** Where each container starts on the 0–100 scale; BuildKit's steps fill the room up to the push. */
const CONTAINER_START: Record<BuildContainer, number> = { 'git-init': 2, 'git-fetch': 5, 'git-checkout': 20, build: 25 }
const BUILD_END = 80
const PUSH_START = 85
const PUSH_MANIFEST = 95

export const phaseOfContainer = (c: BuildContainer): BuildPhase => (c === 'build' ? 'build' : 'clone')

export interface Progress { phase: BuildPhase; progress: number }

/** Progress as a container starts. */
export function containerStarted(c: BuildContainer): Progress {
  return { phase: phaseOfContainer(c), progress: CONTAINER_START[c] }
}

const STEP = /^#\d+ \[(?:[^\]]*? )?(\d+)\/(\d+)\]/
const PUSHING = /^#\d+ (?:pushing layers|pushing manifest|exporting to image|exporting manifest|exporting config|exporting layers)/
const PUSH_MANIFEST_LINE = /^#\d+ pushing manifest for (\S+)@(sha256:[a-f0-9]{64})/

/**
 * The phase and progress a builder line implies, or null when it says nothing new. `exporting to image`
 * starts the push phase: from there on BuildKit writes layers and the manifest to the registry.
 */
export function builderLine(line: string): Progress | null {
  const step = STEP.exec(line)
  if (step) {
    const done = Number(step[1])
    const total = Number(step[2])
    if (total > 0 && done <= total) return { phase: 'build', progress: Math.round(CONTAINER_START.build + ((BUILD_END - CONTAINER_START.build) * (done - 1)) / total) }
    return null
  }
  if (PUSH_MANIFEST_LINE.test(line)) return { phase: 'push', progress: PUSH_MANIFEST }
  if (PUSHING.test(line)) return { phase: 'push', progress: PUSH_START }
  return null
}

/** The pushed reference and manifest digest, as BuildKit prints them. */
export function pushedManifest(line: string): { ref: string; digest: string } | null {
  const m = PUSH_MANIFEST_LINE.exec(line)
  return m ? { ref: m[1], digest: m[2] } : null
}

const EXPORTED_MANIFEST = /^#\d+ exporting manifest (sha256:[a-f0-9]{64})/
/** The manifest digest of an `exporting manifest` line (what is pushed when the push line is missing). */
export function exportedManifest(line: string): string | null {
  return EXPORTED_MANIFEST.exec(line)?.[1] ?? null
}

/** Lines that explain a failure: BuildKit's `ERROR:` and git's `fatal:`/`error:`. */
export function isErrorLine(line: string): boolean {
  return /^(?:#\d+ )?(?:ERROR|error|fatal):/.test(line.trim())
}

/** Whether a builder failure happened while pushing (its error names the push). */
export function failedWhilePushing(errorLine: string): boolean {
  return /failed to push|pushing|push access denied|unexpected status from (?:PUT|POST|HEAD) request/i.test(errorLine)
}

export interface BuildState { status: BuildStatus; phase: BuildPhase | null; progress: number }

const ORDER: BuildPhase[] = ['clone', 'build', 'push']

/** Monotonic: neither the phase nor the bar ever moves back (a late line of an earlier container changes nothing). */
export function advance(current: BuildState, next: Progress): BuildState {
  const at = current.phase === null ? -1 : ORDER.indexOf(current.phase)
  const phase = ORDER.indexOf(next.phase) > at ? next.phase : current.phase ?? next.phase
  return { status: STATUS_OF_PHASE[phase], phase, progress: Math.min(99, Math.max(current.progress, next.progress)) }
}
