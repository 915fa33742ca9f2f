import { repository } from '../images.ts'

// Test controls over simulated image builds, keyed by the image being built (the `name=` of the
// builder's `--output`): fail at a phase, slow every phase down, or hold a phase until the test releases
// it — `reached` tells the test the build is now in that phase, so cancel-during-phase tests need no sleeps.

export type BuildPhase = 'clone' | 'build' | 'push'
export interface HeldBuild { namespace: string; pod: string; image: string; phase: BuildPhase }
export interface BuildHold {
  /** Resolves once a matching build is held at the phase (the first one, if several). */
  reached: Promise<HeldBuild>
  /** Lets every build held here (and later ones) go on. */
  release(): void
}

interface Hold { mark: string; phase: BuildPhase; released: Promise<void>; release(): void; resolveReached(h: HeldBuild): void }

/** `mark` covers `ref` when equal, or when it is `ref` without its tag/digest, with or without the registry host. */
export function imageMatches(mark: string, ref: string): boolean {
  if (!mark || !ref) return false
  const withoutHost = (r: string) => { const i = r.indexOf('/'); return i > 0 && /[.:]|^localhost$/.test(r.slice(0, i)) ? r.slice(i + 1) : r }
  const candidates = [ref, repository(ref), withoutHost(ref), repository(withoutHost(ref))]
  return candidates.includes(mark)
}

export class FailingBuilds {
  private readonly failAt = new Map<string, 'build' | 'push'>()
  private readonly delays = new Map<string, number>()
  private holds: Hold[] = []

  /** The build of this image fails at `phase`: a RUN step exits 2, or the registry push fails. */
  at(image: string, phase: 'build' | 'push'): void { this.failAt.set(image, phase) }
  /** Every phase (clone, build, push) of this image's builds takes at least `ms` longer. */
  slow(image: string, ms: number): void { this.delays.set(image, ms) }
  /** Holds builds of this image when they reach `phase` until `release()`. */
  hold(image: string, phase: BuildPhase): BuildHold {
    let resolveReached!: (h: HeldBuild) => void
    const reached = new Promise<HeldBuild>((r) => { resolveReached = r })
    let release!: () => void
    const released = new Promise<void>((r) => { release = r })
    const h: Hold = { mark: image, phase, released, resolveReached, release: () => { this.holds = this.holds.filter((x) => x !== h); release() } }
    this.holds.push(h)
    return { reached, release: h.release }
  }
  /** Forgets marks for one image, or all marks (releasing every hold) without an argument. */
  clear(image?: string): void {
    for (const m of [this.failAt, this.delays]) for (const k of [...m.keys()]) if (image === undefined || k === image) m.delete(k)
    for (const h of [...this.holds]) if (image === undefined || h.mark === image) h.release()
  }

  failure(ref: string): 'build' | 'push' | undefined {
    for (const [mark, phase] of this.failAt) if (imageMatches(mark, ref)) return phase
    return undefined
  }

  /** Called by a build as it enters a phase: waits out delays and holds, or until `signal` aborts. */
  async enter(ref: string, phase: BuildPhase, where: { namespace: string; pod: string }, signal: AbortSignal): Promise<void> {
    const aborted = new Promise<void>((resolve) => { if (signal.aborted) resolve(); else signal.addEventListener('abort', () => resolve(), { once: true }) })
    const delay = [...this.delays].find(([mark]) => imageMatches(mark, ref))?.[1]
    if (delay) {
      let timer: NodeJS.Timeout | undefined
      await Promise.race([new Promise<void>((r) => { timer = setTimeout(r, delay) }), aborted])
      clearTimeout(timer)
    }
    for (const h of this.holds.filter((x) => x.phase === phase && imageMatches(x.mark, ref))) {
      if (signal.aborted) return
      h.resolveReached({ ...where, image: ref, phase })
      await Promise.race([h.released, aborted])
    }
  }
}
