import type { ObjectLookup } from '../container-env.ts'
import { containerEnv } from '../container-env.ts'
import type { ContainerRuntime } from '../controllers/kubelet.ts'
import { repository } from '../images.ts'
import type { JsonObject, KObject } from '../util.ts'
import { runBuildkit } from './buildkit-container.ts'
import type { Engine, RunContext } from './engine.ts'
import { FailingBuilds } from './failing-builds.ts'
import { runGit } from './git-container.ts'
import { ContainerOutput } from './output.ts'
import { MountError, PodSandbox } from './sandbox.ts'

// Pods that contain a git or builder container run for real: the volumes are set up on the host, init
// containers run one after another (the first failure fails the pod, as with restartPolicy Never), then
// the app containers run side by side. Each container's runtime record (the kubelet's ContainerRuntime)
// moves creating → running → terminated with the process's exit code, and its output is its log.

export interface ProcessImages {
  /** Repository (any tag) or exact image of the git image; default `alpine/git`. */
  gitImage: string
  /** Repository (any tag) or exact image of the builder image; default `moby/buildkit`. */
  builderImage: string
}

export interface RunnerHooks {
  /** A container's state changed: the pod's status should be written. */
  changed(): void
  event(type: 'Normal' | 'Warning', reason: string, message: string, container?: { name: string; init: boolean }): void
}

const sameImage = (configured: string, image: string) => {
  if (image === configured) return true
  const repo = repository(image)
  return repo === configured || repo.endsWith(`/${configured}`) || repo === `docker.io/${configured}`
}

export class ProcessRuntime {
  readonly builds = new FailingBuilds()
  private readonly runners = new Set<PodRunner>()

  constructor(private readonly images: ProcessImages, private readonly lookup: (namespace: string) => ObjectLookup, private readonly timing: { podStartMs: number; jobRunMs: number }) {}

  engineFor(image: string | undefined): Engine | undefined {
    if (!image) return undefined
    if (sameImage(this.images.gitImage, image)) return runGit
    if (sameImage(this.images.builderImage, image)) return runBuildkit
    return undefined
  }

  handles(pod: KObject): boolean {
    return [...((pod.spec?.initContainers ?? []) as JsonObject[]), ...((pod.spec?.containers ?? []) as JsonObject[])].some((c) => this.engineFor(c.image) !== undefined)
  }

  start(pod: KObject, inits: ContainerRuntime[], containers: ContainerRuntime[], hooks: RunnerHooks, fallback: (c: ContainerRuntime) => number): PodRunner {
    const r = new PodRunner(this, pod, inits, containers, hooks, fallback, this.lookup(pod.metadata.namespace!), this.timing)
    this.runners.add(r)
    r.finished.then(() => undefined, () => undefined)
    return r
  }

  forget(r: PodRunner): void { this.runners.delete(r) }

  /** Kills every process and removes every sandbox (the simulator is closing). */
  async closeAll(): Promise<void> { await Promise.all([...this.runners].map((r) => r.dispose())) }
}

/** The image a pod builds: the `name=` of its builder container's `--output`, for FailingBuilds marks. */
function builtImage(rt: ProcessRuntime, pod: KObject): string {
  for (const c of [...((pod.spec?.initContainers ?? []) as JsonObject[]), ...((pod.spec?.containers ?? []) as JsonObject[])]) {
    if (rt.engineFor(c.image) !== runBuildkit) continue
    const args = [...((c.command ?? []) as string[]), ...((c.args ?? []) as string[])]
    for (let i = 0; i < args.length; i++) {
      const v = args[i] === '--output' || args[i] === '-o' ? args[i + 1] : args[i].startsWith('--output=') ? args[i].slice(9) : undefined
      const m = v ? /(?:^|,)name=([^,]+)/.exec(v) : null
      if (m) return m[1]
    }
  }
  return ''
}

export class PodRunner {
  readonly finished: Promise<void>
  private readonly abort = new AbortController()
  private sandbox?: PodSandbox
  private readonly buildRef: string

  constructor(
    private readonly rt: ProcessRuntime, private readonly pod: KObject, private readonly inits: ContainerRuntime[], private readonly containers: ContainerRuntime[],
    private readonly hooks: RunnerHooks, private readonly fallback: (c: ContainerRuntime) => number, private readonly lookup: ObjectLookup,
    private readonly timing: { podStartMs: number; jobRunMs: number },
  ) {
    this.buildRef = builtImage(rt, pod)
    this.finished = this.run().catch((e) => { if (!this.abort.signal.aborted) throw e })
  }

  get killed(): boolean { return this.abort.signal.aborted }

  kill(): void { this.abort.abort() }

  async dispose(): Promise<void> {
    this.kill()
    await this.finished.catch(() => undefined)
    this.sandbox?.dispose()
    this.rt.forget(this)
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const signal = this.abort.signal
      if (signal.aborted) return resolve()
      const t = setTimeout(() => { signal.removeEventListener('abort', done); resolve() }, ms)
      const done = () => { clearTimeout(t); resolve() }
      signal.addEventListener('abort', done, { once: true })
    })
  }

  private async run(): Promise<void> {
    await this.sleep(this.timing.podStartMs)
    let lastMountError = ''
    while (!this.killed && !this.sandbox) {
      try { this.sandbox = PodSandbox.create(this.pod, this.lookup) } catch (e) {
        if (!(e instanceof MountError)) throw e
        if (e.message !== lastMountError) this.hooks.event('Warning', 'FailedMount', e.message)
        lastMountError = e.message
        await this.sleep(Math.max(50, this.timing.podStartMs * 4))
      }
    }
    const specs = new Map<string, JsonObject>([
      ...((this.pod.spec?.initContainers ?? []) as JsonObject[]).map((c) => [`init/${c.name}`, c] as const),
      ...((this.pod.spec?.containers ?? []) as JsonObject[]).map((c) => [`app/${c.name}`, c] as const),
    ])
    for (const c of this.inits) {
      if (this.killed) return
      const code = await this.runOne(c, specs.get(`init/${c.name}`)!, true)
      if (code !== 0) return
    }
    if (this.killed) return
    await Promise.all(this.containers.map((c) => this.runOne(c, specs.get(`app/${c.name}`)!, false)))
  }

  private async runOne(c: ContainerRuntime, spec: JsonObject, init: boolean): Promise<number> {
    const who = { name: c.name, init }
    c.stage = 'running'
    c.startedAt = Date.now()
    c.output = new ContainerOutput()
    this.hooks.event('Normal', 'Pulled', `Successfully pulled image "${c.image}" in ${this.timing.podStartMs}ms (${this.timing.podStartMs}ms including waiting). Image size: 4194304 bytes.`, who)
    this.hooks.event('Normal', 'Created', `Created container: ${c.name}`, who)
    this.hooks.event('Normal', 'Started', `Started container ${c.name}`, who)
    this.hooks.changed()
    const engine = this.rt.engineFor(c.image)
    const signal = this.abort.signal
    let code: number
    try {
      if (engine) {
        const ctx: RunContext = {
          pod: this.pod, spec, env: containerEnv(this.lookup, this.pod, spec), paths: this.sandbox!.forContainer(spec), out: c.output, signal,
          enter: (phase) => this.rt.builds.enter(this.buildRef, phase, { namespace: this.pod.metadata.namespace!, pod: this.pod.metadata.name! }, signal),
          failure: () => this.rt.builds.failure(this.buildRef),
        }
        code = await engine(ctx)
      } else {
        c.output.line(`kube-sim: container ${c.name} started (image ${c.image})`)
        await this.sleep(this.timing.jobRunMs)
        code = this.killed ? 137 : this.fallback(c)
      }
    } catch (e) {
      c.output.line(`kube-sim: ${(e as Error).message}`)
      code = 1
    }
    if (this.killed) code = 137
    c.output.end()
    c.stage = 'terminated'
    c.finishedAt = Date.now()
    c.exitCode = code
    c.lastTerminated = { exitCode: code, startedAt: c.startedAt, finishedAt: c.finishedAt }
    if (!this.killed) this.hooks.changed()
    return code
  }
}
