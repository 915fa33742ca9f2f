// Follows one build in its cluster: the pod (through the shared watch hub: one watch per cluster and
// namespace for all builds there) says which container runs and how each ended; each container's log is
// read to its end in the order the pod runs them; the Job says when the deadline hit or that the build is
// gone. Resolves with what happened; deciding what that means for the build is the service's part.
import type { KubeConfig } from '@kubernetes/client-node'
import type { WatchHub, StreamKey } from '../../kube/watch-hub.ts'
import { BUILD_CONTAINERS, BUILD_ID_LABEL, buildObjectName, type BuildContainer } from '../../kube/build-job.ts'
import { followContainerLog } from '../../kube/build-logs.ts'
import type { KubeObject } from '../../manifests/types.ts'

export type PodOutcome =
  | { kind: 'succeeded' }
  | { kind: 'failed'; container: BuildContainer | null; exitCode: number | null; reason: string | null; message: string | null }
  | { kind: 'deadline' }
  | { kind: 'gone' }
  | { kind: 'stopped' }

interface ContainerState { started: boolean; terminated: { exitCode: number; reason: string | null; message: string | null } | null }

export interface FollowerDeps {
  watch: WatchHub
  clusterKey: string
  kc: () => Promise<KubeConfig>
  namespace: string
  buildId: string
  maxLineBytes: number
  connectTimeoutMs: number
  /** How long the logs may take to drain once the pod has ended. */
  drainMs: number
  /** Last log time already kept (a resumed build): earlier lines are not delivered again. */
  sinceTime?: string
  onContainer(container: BuildContainer): void
  onLine(container: BuildContainer, line: string, timestamp: string | null): void
  /** A container cannot start (image pull, config): said once per reason, since the pod only waits for the deadline. */
  onWaiting(container: BuildContainer, reason: string, message: string): void
}

/** Waiting reasons that do not clear by themselves: the user should hear of them before the deadline fails the build. */
const STUCK = new Set(['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'CreateContainerConfigError', 'CreateContainerError'])

const MAX_LOG_RETRIES = 5

export class BuildFollower {
  private readonly abort = new AbortController()
  private readonly containers = new Map<BuildContainer, ContainerState>()
  private podName: string | null = null
  private podPhase: string | null = null
  private podGone = false
  private readonly told = new Set<string>()
  private jobState: 'running' | 'complete' | 'failed' | 'deadline' | 'gone' = 'running'
  private wake: (() => void) | null = null
  private readonly unsubscribe: Array<() => void> = []

  constructor(private readonly d: FollowerDeps) {}

  stop(): void { this.abort.abort(); this.poke() }

  private poke(): void {
    const w = this.wake
    this.wake = null
    w?.()
  }

  private changed(): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve
      if (this.abort.signal.aborted) resolve()
    })
  }

  private onPod(type: string, pod: KubeObject): void {
    if (pod.metadata?.labels?.[BUILD_ID_LABEL] !== this.d.buildId) return
    if (type === 'DELETED') {
      if (pod.metadata.name === this.podName) this.podGone = true
      this.poke()
      return
    }
    // backoffLimit 0: one pod per build; a replacement pod (node lost) takes over.
    if (this.podName !== pod.metadata.name) { this.podName = pod.metadata.name; this.podGone = false }
    const status = (pod as { status?: { phase?: string; initContainerStatuses?: unknown[]; containerStatuses?: unknown[] } }).status ?? {}
    this.podPhase = status.phase ?? null
    for (const cs of [...(status.initContainerStatuses ?? []), ...(status.containerStatuses ?? [])] as Array<{ name: string; state?: Record<string, { exitCode?: number; reason?: string; message?: string } | undefined> }>) {
      if (!(BUILD_CONTAINERS as readonly string[]).includes(cs.name)) continue
      const state = cs.state ?? {}
      const term = state.terminated
      const waiting = state.waiting
      if (waiting?.reason && STUCK.has(waiting.reason) && !this.told.has(`${cs.name}/${waiting.reason}`)) {
        this.told.add(`${cs.name}/${waiting.reason}`)
        this.d.onWaiting(cs.name as BuildContainer, waiting.reason, (waiting.message ?? '').slice(0, 500))
      }
      this.containers.set(cs.name as BuildContainer, {
        started: Boolean(state.running || term),
        terminated: term ? { exitCode: term.exitCode ?? -1, reason: term.reason ?? null, message: term.message ?? null } : null,
      })
    }
    this.poke()
  }

  private onJob(type: string, job: KubeObject): void {
    if (type === 'DELETED') this.jobState = 'gone'
    else {
      const conditions = ((job as { status?: { conditions?: Array<{ type: string; status: string; reason?: string }> } }).status?.conditions ?? []).filter((c) => c.status === 'True')
      const failed = conditions.find((c) => c.type === 'Failed')
      if (failed) this.jobState = failed.reason === 'DeadlineExceeded' ? 'deadline' : 'failed'
      else if (conditions.some((c) => c.type === 'Complete')) this.jobState = 'complete'
    }
    this.poke()
  }

  private podEnded(): boolean {
    return this.podPhase === 'Succeeded' || this.podPhase === 'Failed' || this.podGone || this.jobState !== 'running'
  }

  /** Follows until the build's pod has ended and its logs are read; `stop()` ends it early with `stopped`. */
  async run(): Promise<PodOutcome> {
    const podKey: StreamKey = { cluster: this.d.clusterKey, apiVersion: 'v1', kind: 'Pod', namespace: this.d.namespace }
    const jobKey: StreamKey = { cluster: this.d.clusterKey, apiVersion: 'batch/v1', kind: 'Job', namespace: this.d.namespace }
    const jobName = buildObjectName(this.d.buildId)
    this.unsubscribe.push(this.d.watch.subscribe(podKey, { name: '*', event: (t, o) => this.onPod(t, o) }))
    this.unsubscribe.push(this.d.watch.subscribe(jobKey, {
      name: jobName, event: (t, o) => this.onJob(t, o),
      synced: () => {
        if (!this.d.watch.object(jobKey, jobName)) this.jobState = 'gone'
        this.poke()
      },
    }))
    // Joined a stream that had listed already: what it holds now.
    if (this.d.watch.isSynced(podKey)) for (const pod of this.d.watch.objects(podKey)) this.onPod('ADDED', pod)
    const job = this.d.watch.object(jobKey, jobName)
    if (job) this.onJob('ADDED', job)
    try {
      await this.followLogs()
      while (!this.abort.signal.aborted && !this.podEnded()) await this.changed()
      return this.outcome()
    } finally {
      for (const off of this.unsubscribe) off()
    }
  }

  private async followLogs(): Promise<void> {
    let drainTimer: NodeJS.Timeout | null = null
    const drain = new AbortController()
    const onAbort = () => drain.abort()
    this.abort.signal.addEventListener('abort', onAbort, { once: true })
    try {
      for (const container of BUILD_CONTAINERS) {
        // Wait for the container to start, or for the pod to end without it.
        while (!this.abort.signal.aborted && !this.containers.get(container)?.started && !this.podEnded()) await this.changed()
        if (this.abort.signal.aborted) return
        if (!this.containers.get(container)?.started) continue
        this.d.onContainer(container)
        let sinceTime = this.d.sinceTime
        for (let attempt = 0; attempt < MAX_LOG_RETRIES && !drain.signal.aborted; attempt++) {
          // Once the pod has ended, its logs get a bounded time to drain (a kubelet gone away cannot hold us).
          if (this.podEnded() && !drainTimer) { drainTimer = setTimeout(() => drain.abort(), this.d.drainMs); drainTimer.unref() }
          let kc: KubeConfig
          // No connection now (credentials gone): the outcome still comes from the pod's status.
          try { kc = await this.d.kc() } catch { break }
          const end = await followContainerLog(kc, { namespace: this.d.namespace, pod: this.podName!, container }, (line, ts) => {
            if (ts) sinceTime = ts
            this.d.onLine(container, line, ts)
          }, { maxLineBytes: this.d.maxLineBytes, connectTimeoutMs: this.d.connectTimeoutMs, signal: drain.signal, ...(sinceTime && { sinceTime }) })
          if (end.ended) break
          if (this.podGone || end.status === 404) break
          // A broken stream of a container still running: resume after the last line read, once the pod says more.
          if (!this.containers.get(container)?.terminated && !this.podEnded()) await Promise.race([this.changed(), delay(500)])
        }
      }
    } finally {
      if (drainTimer) clearTimeout(drainTimer)
      this.abort.signal.removeEventListener('abort', onAbort)
    }
  }

  private outcome(): PodOutcome {
    if (this.abort.signal.aborted) return { kind: 'stopped' }
    if (this.jobState === 'deadline') return { kind: 'deadline' }
    if (this.podPhase === 'Succeeded' || (this.jobState === 'complete' && this.podPhase !== 'Failed')) return { kind: 'succeeded' }
    for (const c of BUILD_CONTAINERS) {
      const t = this.containers.get(c)?.terminated
      if (t && t.exitCode !== 0) return { kind: 'failed', container: c, exitCode: t.exitCode, reason: t.reason, message: t.message }
    }
    if (this.podPhase === 'Failed' || this.jobState === 'failed') return { kind: 'failed', container: null, exitCode: null, reason: null, message: null }
    return { kind: 'gone' }
  }
}

const delay = (ms: number) => new Promise<void>((resolve) => { const t = setTimeout(resolve, ms); t.unref() })
