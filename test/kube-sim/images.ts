// How a simulated container behaves is decided by its image. Tests mark images explicitly through
// KubeSim.failingImages, or use the naming convention (so plain YAML manifests can opt in too):
//   image contains "fail-pull"    → ErrImagePull, then ImagePullBackOff; the pod stays Pending
//   image contains "crashloop"    → starts, exits 1, CrashLoopBackOff with a growing restartCount
//   image contains "never-ready"  → Running but never Ready (readiness probe failures)
//   image contains "fail-job"     → runs, then exits 1 (for Job pods: the pod Fails)
export type ImageBehaviour = 'ok' | 'pull-failure' | 'crash-loop' | 'never-ready' | 'exit-failure'

const conventions: [RegExp, ImageBehaviour][] = [
  [/fail-pull|imagepullbackoff/i, 'pull-failure'],
  [/crashloop/i, 'crash-loop'],
  [/never-ready/i, 'never-ready'],
  [/fail-job/i, 'exit-failure'],
]

/** Strips the tag/digest so `app:1.2` and `app` can be marked together. */
export function repository(image: string): string {
  const at = image.indexOf('@')
  const noDigest = at >= 0 ? image.slice(0, at) : image
  const slash = noDigest.lastIndexOf('/')
  const colon = noDigest.lastIndexOf(':')
  return colon > slash ? noDigest.slice(0, colon) : noDigest
}

export class ImagePolicy {
  private readonly marked = new Map<string, ImageBehaviour>()

  /** Marks an exact image reference, or a repository (no tag) to cover every tag of it. */
  mark(image: string, b: ImageBehaviour): void { this.marked.set(image, b) }
  unmark(image: string): void { this.marked.delete(image) }

  behaviour(image: string | undefined): ImageBehaviour {
    if (!image) return 'pull-failure'
    const explicit = this.marked.get(image) ?? this.marked.get(repository(image))
    if (explicit) return explicit
    for (const [re, b] of conventions) if (re.test(image)) return b
    return 'ok'
  }
}
