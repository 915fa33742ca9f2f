// Image builds (issue 15, API.md §8): the request checks access and input and records the build; the build
// itself runs as a Job in the user's cluster (build-job.ts) and this service follows it in the background:
// the pod's containers and logs give status, phase and progress; the pushed digest is confirmed against the
// registry before the build is called completed; everything kept or sent is masked first. A restart
// re-attaches to builds still running (their Jobs keep going meanwhile); a cancel is final.
import { Heartbeat, staleBefore } from './heartbeat.ts'
import { endingAfter } from '../events/ending-subscription.ts'
import { coalescingWriter, type CoalescingWriter } from './coalescing-writer.ts'
import type { KubeConfig } from '@kubernetes/client-node'
import { BadRequest, Conflict, NotFound, Unavailable, AppError } from '../errors.ts'
import type { EventBus } from '../events/bus.ts'
import type { StreamEvent, StreamHub, Subscription, SubscribeOptions } from '../events/stream-hub.ts'
import type { OutboundPolicy } from '../net/outbound-policy.ts'
import { confirmManifest, type RegistryCredentials } from '../net/registry-client.ts'
import type { Registry } from '../repositories/registries.ts'
import type { Workflow } from '../repositories/workflows.ts'
import type { SaveGraph } from './workflow-service.ts'
import { BuildRepository, RUNNING_STATUSES, toBuild, type Build, type BuildDoc, type BuildOutcome } from '../repositories/builds.ts'
import type { Page, PageRequest } from '../repositories/pagination.ts'
import { WatchHub } from '../kube/watch-hub.ts'
import { BUILD_SELECTOR, buildJob, buildObjectName, buildSecret, dockerConfigJson, type BuildContainer, type BuildJobConfig } from '../kube/build-job.ts'
import { createBuildObjects, deleteBuildObjects, describeBuildClusterError, readBuildJob } from '../kube/build-cluster.ts'
import { checkBuildRequest, type StartBuild } from './build/request.ts'
import { buildMask, loginForms } from './build/masking.ts'
import { BuildLog, type BuildLogLine } from './build/build-log.ts'
import { BuildFollower, type PodOutcome } from './build/follower.ts'
import {
  advance, builderLine, containerStarted, exportedManifest, failedWhilePushing, isErrorLine, isTerminal, phaseOfContainer, pushedManifest,
  type BuildPhase, type BuildState, type BuildStatus,
} from './build/progress.ts'
import type { Redact } from './run-redaction.ts'

export type { StartBuild }

interface Logger { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void; error(obj: object, msg?: string): void }

/** The Job's deadline is derived from timeoutMs, so it is not configured separately. */
export interface BuildConfig extends Omit<BuildJobConfig, 'activeDeadlineSeconds'> {
  timeoutMs: number
  logMaxLines: number
  logMaxBytes: number
  maxLineBytes: number
  heartbeatMs: number
  requestTimeoutMs: number
  backoff: { baseMs: number; maxMs: number }
  /** How often a cluster whose build watches wait in backoff is probed (0: never). */
  probeIntervalMs?: number
  /** How long a finished pod's logs may take to drain. */
  drainMs?: number
}

export interface BuildServiceDeps {
  builds: BuildRepository
  clusters: { kubeConfigFor(userId: string, ref: string, need: 'deployer' | 'viewer'): Promise<{ kc: KubeConfig; cluster: { id: string; name: string } }> }
  registries: { credentialsFor(id: string): Promise<{ registry: Registry; credentials: RegistryCredentials | null }> }
  workflows: { get(ownerId: string, id: string): Promise<Workflow>; save(ownerId: string, id: string, graph: SaveGraph): Promise<Workflow> }
  policy: OutboundPolicy
  /** The SSE hub; created after the services, so asked for on each publish. */
  hub: () => StreamHub | undefined
  bus: EventBus
  log: Logger
  config: BuildConfig
  /** Registry requests (the digest check); injectable for tests. */
  fetch?: typeof fetch
}

/** One build this process follows. */
interface Active {
  doc: BuildDoc
  kc: KubeConfig
  registry: Registry
  credentials: RegistryCredentials | null
  mask: Redact
  log: BuildLog
  state: BuildState
  lastError: Partial<Record<BuildContainer, string>>
  pushed: { ref: string; digest: string } | null
  exported: string | null
  follower: BuildFollower | null
  stopped: boolean
  /** The terminal event once published (a stream opened after it replays it). */
  terminal: { type: 'complete' | 'failed' | 'cancelled'; data: object } | null
  saver: CoalescingWriter
  done: Promise<void>
}

const STREAM_PREFIX = 'build:'
export const buildKey = (id: string) => `${STREAM_PREFIX}${id}`
const FINAL_EVENTS = new Set(['complete', 'failed', 'cancelled'])
const GONE = 'the build\'s Job is gone from the cluster (deleted by someone, or removed after BUILD_TTL_AFTER_FINISHED_S) before its outcome was recorded; start the build again'

export class BuildService {
  private readonly active = new Map<string, Active>()
  private readonly watch: WatchHub
  private readonly instanceId: string
  private readonly heartbeat: Heartbeat
  private readonly attaching = new Set<Promise<void>>()
  /** Ids of the builds in `attaching`, which the sweep does not claim again. */
  private readonly reattaching = new Set<string>()
  private closing = false

  constructor(private readonly deps: BuildServiceDeps) {
    this.heartbeat = new Heartbeat({
      periodMs: this.deps.config.heartbeatMs,
      // A build another replica took over meanwhile is let go here. Builds still being re-attached are not beaten:
      // their claim already holds them alive for the re-attach's longest time (reattachAliveUntil).
      beat: async (at) => { for (const id of await this.deps.builds.heartbeat([...this.active.keys()], at, this.instanceId)) this.letGo(id) },
      sweep: () => this.sweep(),
      onError: (err) => this.deps.log.warn({ err: { message: String((err as Error)?.message) } }, 'build heartbeat failed'),
    })
    this.instanceId = deps.builds.newId()
    this.watch = new WatchHub({
      labelSelector: BUILD_SELECTOR,
      backoff: deps.config.backoff,
      ...(deps.config.probeIntervalMs !== undefined && { probeIntervalMs: deps.config.probeIntervalMs }),
      requestTimeoutMs: deps.config.requestTimeoutMs,
      // The key names the owner and the cluster id: the connection is the owner's, whoever reads the stream.
      connect: async (key) => { const [owner, cluster] = key.split('\n'); return (await deps.clusters.kubeConfigFor(owner, cluster, 'viewer')).kc },
      onReconnect: (info) => deps.log.warn({ namespace: info.namespace, kind: info.kind, attempt: info.attempt, delay_ms: info.delayMs }, 'build watch reconnecting'),
    })
  }

  // Reads

  async get(ownerId: string, id: string): Promise<Build> {
    const build = await this.deps.builds.get(ownerId, id)
    if (!build) throw new NotFound('build')
    return build
  }

  list(ownerId: string, req: PageRequest, filter: { status?: BuildStatus; workflow_id?: string }): Promise<Page<Build>> {
    return this.deps.builds.list(ownerId, req, filter)
  }

  // Start

  async start(ownerId: string, body: StartBuild): Promise<Build> {
    if (this.closing) throw new Unavailable('the service is shutting down; start the build again in a moment')
    const checked = checkBuildRequest(body)
    const { registry, credentials } = await this.registryFor(body.registry_id)
    if (body.workflow_id !== undefined && body.node_id !== undefined) {
      const wf = await this.deps.workflows.get(ownerId, body.workflow_id)
      if (!wf.nodes.some((n) => n.id === body.node_id)) throw new BadRequest(`body/node_id: the workflow has no node "${body.node_id}"`)
    }
    const repo = await this.deps.policy.check(body.repo_url, 'repo_url')
    if (repo.hash) throw new BadRequest('repo_url must not have a fragment')
    const { kc, cluster } = await this.deps.clusters.kubeConfigFor(ownerId, body.cluster, 'deployer')

    const id = this.deps.builds.newId()
    const now = new Date()
    const doc: BuildDoc = {
      _id: id, owner_id: ownerId, repo_url: body.repo_url, branch: checked.branch, commit: checked.commit, context_dir: checked.contextDir,
      dockerfile: checked.dockerfile, build_args: checked.buildArgs, registry_id: registry.id, image_name: checked.imageName, image_tag: checked.imageTag,
      cluster: cluster.name, cluster_id: cluster.id, namespace: checked.namespace, workflow_id: body.workflow_id ?? null, node_id: body.node_id ?? null,
      status: 'pending', phase: null, progress: 0, image_ref: `${registry.host}/${checked.imageName}:${checked.imageTag}`, image_digest: null, error: null,
      node_updated: body.workflow_id ? false : null, job_name: buildObjectName(id), logs: [], logs_truncated: false,
      created_at: now, started_at: null, finished_at: null, updated_at: now, instance_id: this.instanceId, heartbeat_at: now,
    }
    const build = await this.deps.builds.create(doc)
    this.deps.bus.emit('build.changed', { owner_id: ownerId, build_id: id, status: 'pending' })
    this.launch(doc, kc, registry, credentials, true)
    return build
  }

  private async registryFor(id: string): Promise<{ registry: Registry; credentials: RegistryCredentials | null }> {
    try {
      return await this.deps.registries.credentialsFor(id)
    } catch (err) {
      if (err instanceof AppError) throw err
      throw new Conflict('the registry\'s stored credentials cannot be opened with the current encryption keys; an admin must store them again')
    }
  }

  /** Settles when the build ends here (or this process stops following it); for tests and shutdown. */
  finished(id: string): Promise<void> {
    return this.active.get(id)?.done ?? Promise.resolve()
  }

  private launch(doc: BuildDoc, kc: KubeConfig, registry: Registry, credentials: RegistryCredentials | null, fresh: boolean): void {
    const configJson = dockerConfigJson(registry.host, credentials)
    const mask = buildMask(loginForms(credentials, configJson))
    const run: Active = {
      doc, kc, registry, credentials, mask,
      log: new BuildLog(this.deps.config.logMaxLines, this.deps.config.logMaxBytes, doc.logs, doc.logs_truncated),
      state: { status: doc.status, phase: doc.phase, progress: doc.progress },
      lastError: {}, pushed: null, exported: null, follower: null, stopped: false, terminal: null,
      saver: this.saver(doc._id, () => run), done: Promise.resolve(),
    }
    this.active.set(doc._id, run)
    run.done = this.execute(run, fresh, configJson).catch((err: unknown) => {
      this.deps.log.error({ build_id: doc._id, err: { message: mask(String((err as Error)?.message ?? err)) } }, 'build follow-up failed')
    }).finally(() => { if (this.active.get(doc._id) === run) this.active.delete(doc._id) })
  }

  // The background part

  private async execute(run: Active, fresh: boolean, configJson: string): Promise<void> {
    const { doc } = run
    if (fresh) {
      const spec = {
        buildId: doc._id, namespace: doc.namespace, repoUrl: doc.repo_url, branch: doc.branch, commit: doc.commit, contextDir: doc.context_dir,
        dockerfile: doc.dockerfile, buildArgs: doc.build_args, imageRef: doc.image_ref!, insecureRegistry: run.registry.url.startsWith('http://'),
      }
      try {
        await createBuildObjects(run.kc, buildSecret(spec, configJson), buildJob(spec, this.jobConfig()), this.deps.config.requestTimeoutMs)
      } catch (err) {
        await this.finish(run, { status: 'failed', error: run.mask(`the cluster did not take the build Job: ${describeBuildClusterError(err)}`) })
        return
      }
      const started = await this.deps.builds.progress(doc._id, { started_at: new Date() })
      if (!started) {
        // Cancelled while the Job was being created: the cancel could not delete what did not exist yet.
        await deleteBuildObjects(run.kc, doc.namespace, doc._id, this.deps.config.requestTimeoutMs).catch(() => undefined)
        return
      }
      this.publishRecord(started)
    }
    if (run.stopped) return
    const lastTime = run.log.lines().at(-1)?.timestamp
    const follower = new BuildFollower({
      watch: this.watch, clusterKey: `${doc.owner_id}\n${doc.cluster_id}`, kc: async () => run.kc, namespace: doc.namespace, buildId: doc._id,
      maxLineBytes: this.deps.config.maxLineBytes, connectTimeoutMs: this.deps.config.requestTimeoutMs, drainMs: this.deps.config.drainMs ?? 5000,
      ...(!fresh && lastTime && { sinceTime: lastTime }),
      onContainer: (c) => this.move(run, containerStarted(c)),
      onLine: (c, line, ts) => this.line(run, c, line, ts),
      onWaiting: (c, reason, message) => this.line(run, c, `container ${c} cannot start: ${reason}${message ? `: ${message}` : ''} (the build fails at its deadline unless this clears)`, null),
    })
    run.follower = follower
    const outcome = await follower.run()
    await run.saver.flush()
    if (outcome.kind === 'stopped') return
    await this.conclude(run, outcome)
  }

  private jobConfig(): BuildJobConfig {
    const c = this.deps.config
    return { ...c, activeDeadlineSeconds: Math.max(1, Math.ceil(c.timeoutMs / 1000)) }
  }

  private publish(id: string, type: string, data: unknown): void {
    this.deps.hub()?.publish(buildKey(id), type, data)
  }

  /**
   * The record again as `metadata` once a timestamp it lacked exists: `started_at` when the Job is made,
   * `finished_at` at the end. A stream opened while the build was pending got it without them, and a page
   * shows when the build started and how long it ran (or has run) from the record, not from `progress`.
   */
  private publishRecord(doc: BuildDoc): void {
    this.publish(doc._id, 'metadata', toBuild({ ...doc, logs: [] }))
  }

  private move(run: Active, next: { phase: BuildPhase; progress: number }): void {
    const state = advance(run.state, next)
    if (state.status === run.state.status && state.progress === run.state.progress) return
    const statusChanged = state.status !== run.state.status
    run.state = state
    this.publish(run.doc._id, 'progress', { ...state })
    run.saver.touch()
    if (statusChanged) this.deps.bus.emit('build.changed', { owner_id: run.doc.owner_id, build_id: run.doc._id, status: state.status })
  }

  private line(run: Active, container: BuildContainer, raw: string, timestamp: string | null): void {
    const line = run.mask(raw)
    if (container === 'build') {
      const pushed = pushedManifest(line)
      if (pushed) run.pushed = pushed
      run.exported = exportedManifest(line) ?? run.exported
      const next = builderLine(line)
      if (next) this.move(run, next)
    }
    if (isErrorLine(line)) run.lastError[container] = line.trim()
    const phase = container === 'build' ? (run.state.phase === 'push' ? 'push' : 'build') : phaseOfContainer(container)
    const entry: BuildLogLine = { phase, line, timestamp: timestamp ?? new Date().toISOString() }
    run.log.add(entry)
    this.publish(run.doc._id, 'log', entry)
    run.saver.touch()
  }

  /** Writes progress and log at most one write at a time, the newest state last; a refused write means the build ended elsewhere (cancelled). */
  private saver(id: string, current: () => Active): CoalescingWriter {
    return coalescingWriter(async () => {
      const run = current()
      // Only while this process holds the build: one that lost it to another replica must not overwrite that one's log.
      const doc = await this.deps.builds.progress(id, { ...run.state, logs: run.log.lines(), logs_truncated: run.log.truncated }, this.instanceId)
      if (!doc && !run.terminal) run.follower?.stop()
    })
  }

  private async conclude(run: Active, outcome: Exclude<PodOutcome, { kind: 'stopped' }>): Promise<void> {
    const seconds = Math.round(this.deps.config.timeoutMs / 1000)
    const limit = seconds < 120 ? `${seconds} s` : `${Math.round(seconds / 6) / 10} min`
    const at = run.state.phase
    switch (outcome.kind) {
      case 'deadline':
        return this.finish(run, { status: 'failed', error: `the build ran longer than ${limit} (BUILD_TIMEOUT_MS) and was stopped`, phase: at })
      case 'gone':
        return this.finish(run, { status: 'failed', error: 'the build\'s Job or pod was deleted from the cluster before it finished', phase: at })
      case 'failed': {
        const c = outcome.container
        if (!c) return this.finish(run, { status: 'failed', error: 'the build pod failed before any container ran (check the namespace\'s quotas and the images)', phase: at })
        const last = run.lastError[c] ?? null
        const phase: BuildPhase = c === 'build' ? (at === 'push' || (last !== null && failedWhilePushing(last)) ? 'push' : 'build') : 'clone'
        const what = c === 'build' ? (phase === 'push' ? 'the push' : 'the build') : `git (${c.slice(4)})`
        const why = outcome.reason === 'OOMKilled'
          ? `the builder ran out of memory (BUILD_MEMORY_LIMIT ${this.deps.config.memoryLimit})`
          : last ?? (outcome.message ? run.mask(outcome.message) : outcome.reason ?? 'no error line in the log')
        return this.finish(run, { status: 'failed', error: `${what} failed (exit code ${outcome.exitCode}): ${why}`, phase })
      }
      case 'succeeded':
        return this.confirm(run)
    }
  }

  /** The builder says it pushed; the registry must agree before the build is completed. */
  private async confirm(run: Active): Promise<void> {
    const { doc } = run
    const printed = run.pushed?.digest ?? run.exported
    if (!printed) return this.finish(run, { status: 'failed', phase: 'push', error: 'the builder finished without reporting a pushed manifest digest; the image cannot be confirmed' })
    const check = await confirmManifest(run.registry.url, doc.image_name, doc.image_tag, run.credentials, {
      policy: this.deps.policy, expected: printed, timeoutMs: this.deps.config.requestTimeoutMs, ...(this.deps.fetch && { fetch: this.deps.fetch }),
    })
    if (!check.ok) return this.finish(run, { status: 'failed', phase: 'push', error: `the pushed image could not be confirmed: ${run.mask(check.message)}` })
    if (check.digest !== printed) {
      return this.finish(run, { status: 'failed', phase: 'push', error: `the registry holds ${check.digest} for ${doc.image_ref}, not the ${printed} the builder pushed (pushed over since?)` })
    }
    return this.finish(run, { status: 'completed', phase: 'push', image_digest: printed })
  }

  private async finish(run: Active, end: { status: 'completed' | 'failed'; error?: string; phase?: BuildPhase | null; image_digest?: string }): Promise<void> {
    const { doc } = run
    await run.saver.flush()
    const phase = end.phase !== undefined ? end.phase : run.state.phase
    const progress = end.status === 'completed' ? 100 : run.state.progress
    const error = end.error ? run.mask(end.error) : null
    if (error) run.log.add({ phase: phase ?? 'clone', line: `Build failed: ${error}`, timestamp: new Date().toISOString() })
    const outcome: BuildOutcome = {
      status: end.status, error, finished_at: new Date(), phase, progress, logs: run.log.lines(), logs_truncated: run.log.truncated,
      ...(end.image_digest && { image_digest: end.image_digest }),
    }
    const finished = await this.deps.builds.finish(doc._id, outcome)
    // Ended meanwhile (cancelled): that outcome stands, whatever the pod reported.
    if (!finished) return
    run.state = { status: end.status, phase, progress }
    if (end.status === 'completed' && doc.workflow_id && doc.node_id) await this.pinNodeImage(run, `${finished.image_ref}@${end.image_digest}`)
    if (error) this.publish(doc._id, 'log', run.log.lines().at(-1))
    this.publish(doc._id, 'progress', { ...run.state })
    this.publishRecord(finished)
    run.terminal = end.status === 'completed'
      ? { type: 'complete', data: { image_ref: finished.image_ref, image_digest: end.image_digest } }
      : { type: 'failed', data: { error, phase } }
    this.publish(doc._id, run.terminal.type, run.terminal.data)
    this.deps.bus.emit('build.changed', { owner_id: doc.owner_id, build_id: doc._id, status: end.status })
    this.deps.log.info({ build_id: doc._id, status: end.status, phase }, `build ${doc._id} ${end.status}`)
    // The login leaves the cluster now; the Job stays (without it) for inspection until its TTL.
    await deleteBuildObjects(run.kc, doc.namespace, doc._id, this.deps.config.requestTimeoutMs, { job: false }).catch((err: unknown) => {
      this.deps.log.warn({ build_id: doc._id, err: { message: run.mask(describeBuildClusterError(err)) } }, 'the build\'s credentials Secret could not be deleted (the Job owns it: it goes with the Job)')
    })
  }

  /** The workflow node's image, digest-pinned; only this node changes, and only when the owner still owns the workflow. */
  private async pinNodeImage(run: Active, pinned: string): Promise<void> {
    const { doc } = run
    let updated = false
    try {
      const wf = await this.deps.workflows.get(doc.owner_id, doc.workflow_id!)
      if (wf.nodes.some((n) => n.id === doc.node_id)) {
        const nodes = wf.nodes.map((n) => (n.id === doc.node_id ? { ...n, data: { ...(n.data ?? {}), image: pinned } } : n))
        await this.deps.workflows.save(doc.owner_id, wf.id, { nodes, edges: wf.edges })
        updated = true
      }
    } catch (err) {
      this.deps.log.warn({ build_id: doc._id, workflow_id: doc.workflow_id, err: { message: String((err as Error)?.message) } }, 'the built image could not be set on the workflow node')
    }
    await this.deps.builds.setNodeUpdated(doc._id, updated)
    if (!updated) {
      const entry: BuildLogLine = { phase: 'push', line: `the workflow node "${doc.node_id}" was not updated (the workflow or node is gone, or no longer yours)`, timestamp: new Date().toISOString() }
      run.log.add(entry)
      this.publish(doc._id, 'log', entry)
    }
  }

  // Cancel

  async cancel(ownerId: string, id: string): Promise<Build> {
    const current = await this.get(ownerId, id)
    if (isTerminal(current.status)) throw new Conflict(`the build has already ${current.status === 'cancelled' ? 'been cancelled' : current.status === 'completed' ? 'completed' : 'failed'}`)
    const finished = await this.deps.builds.finish(id, { status: 'cancelled', error: null, finished_at: new Date() }, ownerId)
    if (!finished) {
      const now = await this.get(ownerId, id)
      throw new Conflict(`the build has already ${now.status === 'cancelled' ? 'been cancelled' : now.status}`)
    }
    const run = this.active.get(id)
    if (run) {
      run.terminal = { type: 'cancelled', data: {} }
      run.state = { ...run.state, status: 'cancelled' }
      run.follower?.stop()
    }
    this.publish(id, 'progress', { status: 'cancelled', phase: finished.phase, progress: finished.progress })
    this.publishRecord(finished)
    this.publish(id, 'cancelled', {})
    this.deps.bus.emit('build.changed', { owner_id: ownerId, build_id: id, status: 'cancelled' })
    let error: string | null = null
    try {
      const kc = run?.kc ?? (await this.deps.clusters.kubeConfigFor(ownerId, finished.cluster_id, 'viewer')).kc
      await deleteBuildObjects(kc, finished.namespace, id, this.deps.config.requestTimeoutMs)
    } catch (err) {
      error = `cancelled, but the Job could not be deleted from the cluster (it stops at its deadline): ${err instanceof AppError ? err.message : describeBuildClusterError(err)}`
      this.deps.log.warn({ build_id: id, err: { message: error } }, 'cancelling a build: the Job could not be deleted')
      await this.deps.builds.setError(id, error)
    }
    return { ...toBuild({ ...finished, logs: [] }), ...(error && { error }) }
  }

  // Streams

  /**
   * The hub serveStream reads a build from: a subscriber first gets what is kept (the log so far, and the
   * terminal event of a finished build), then what happens next; the stream ends after a terminal event.
   * `metadata` must be awaited before iterating (serveStream does): it loads the record (404 when not the caller's).
   */
  stream(ownerId: string, id: string): { key: string; hub: StreamHub; metadata: () => Promise<Build> } {
    const key = buildKey(id)
    let stored: BuildDoc | null = null
    const metadata = async () => {
      stored = await this.deps.builds.withLogs(ownerId, id)
      if (!stored) throw new NotFound('build')
      return toBuild(stored)
    }
    const service = this
    const hub: StreamHub = {
      publish: (k, type, data) => service.deps.hub()?.publish(k, type, data),
      subscriberCount: (k) => service.deps.hub()?.subscriberCount(k) ?? 0,
      close: () => undefined,
      subscribe: (k: string, opts: SubscribeOptions = {}): Subscription => {
        const real = service.deps.hub()!.subscribe(k, opts)
        const resumed = opts.lastEventId !== undefined && real.since === opts.lastEventId
        // Taken now, in the same tick as the subscription: every kept line was published at or before `since`.
        const run = service.active.get(id)
        const snapshot = run && { lines: run.log.lines(), state: { ...run.state }, terminal: run.terminal }
        const replay = (): StreamEvent[] => {
          const at = real.since
          const ev = (type: string, data: unknown): StreamEvent => ({ id: at, type, data })
          if (snapshot) {
            const out = resumed ? [] : snapshot.lines.map((l) => ev('log', l))
            if (snapshot.terminal) out.push(ev(snapshot.terminal.type, snapshot.terminal.data))
            else if (!resumed) out.push(ev('progress', snapshot.state))
            return out
          }
          if (!stored) return []
          const out = resumed ? [] : stored.logs.map((l) => ev('log', l))
          const terminal = terminalEvent(stored)
          if (terminal) out.push(ev(terminal.type, terminal.data))
          else if (!resumed) out.push(ev('progress', { status: stored.status, phase: stored.phase, progress: stored.progress }))
          return out
        }
        return endingAfter(real, FINAL_EVENTS, replay)
      },
    }
    return { key, hub, metadata }
  }

  // Start-up, heartbeats, shutdown

  /** Re-attaches builds no live process follows (at start-up, then every heartbeat period), and marks this process's builds alive. */
  async recover(): Promise<number> {
    const count = await this.sweep()
    this.heartbeat.start()
    return count
  }

  private async sweep(): Promise<number> {
    if (this.closing) return 0
    const abandoned = await this.deps.builds.abandoned(this.instanceId, staleBefore(this.deps.config.heartbeatMs))
    let taken = 0
    for (const doc of abandoned) {
      // The claim is conditional on the build's holder and heartbeat being as read: of replicas sweeping at
      // once, one takes it over; the others see it unmatched and leave it.
      if (this.active.has(doc._id) || this.reattaching.has(doc._id) || !(await this.deps.builds.claim(doc._id, doc, this.instanceId, this.reattachAliveUntil()))) continue
      taken++
      // In the background: an unreachable cluster must not hold up start-up (each call waits up to its timeout).
      this.reattaching.add(doc._id)
      const attaching: Promise<void> = this.reattach(doc)
        .catch((err: unknown) => this.deps.log.error({ build_id: doc._id, err: { message: String((err as Error)?.message) } }, 'a build could not be re-attached'))
        .finally(() => { this.attaching.delete(attaching); this.reattaching.delete(doc._id) })
      this.attaching.add(attaching)
    }
    return taken
  }

  /**
   * A re-attach reads the cluster's credentials, the registry's and the Job (each bounded by the request
   * timeout); the claim counts as alive for that long plus the usual staleness window, after which the
   * launched build's own beats take over (a process that dies mid-re-attach is taken for dead that much later).
   */
  private reattachAliveUntil(): Date {
    return new Date(Date.now() + 2 * this.deps.config.requestTimeoutMs)
  }

  private async reattach(doc: BuildDoc): Promise<void> {
    const stub = async (error: string) => {
      const finished = await this.deps.builds.finish(doc._id, { status: 'failed', error, finished_at: new Date(), logs: [...doc.logs, { phase: doc.phase ?? 'clone', line: `Build failed: ${error}`, timestamp: new Date().toISOString() }] })
      if (!finished) return
      this.publishRecord(finished)
      this.publish(doc._id, 'failed', { error, phase: doc.phase })
      this.deps.bus.emit('build.changed', { owner_id: doc.owner_id, build_id: doc._id, status: 'failed' })
      this.deps.log.warn({ build_id: doc._id }, `build ${doc._id} could not be re-attached after a restart: ${error}`)
    }
    let kc: KubeConfig
    try {
      kc = (await this.deps.clusters.kubeConfigFor(doc.owner_id, doc.cluster_id, 'viewer')).kc
    } catch (err) {
      return stub(`interrupted: the service restarted and the build's cluster can no longer be reached (${err instanceof AppError ? err.message : 'connection failed'})`)
    }
    let registry: Registry
    let credentials: RegistryCredentials | null = null
    try {
      ({ registry, credentials } = await this.deps.registries.credentialsFor(doc.registry_id))
    } catch {
      return stub('interrupted: the service restarted and the build\'s registry is gone, so the pushed image cannot be confirmed')
    }
    let job
    try {
      job = await readBuildJob(kc, doc.namespace, doc._id, this.deps.config.requestTimeoutMs)
    } catch (err) {
      return stub(`interrupted: the service restarted and the build's Job could not be read: ${describeBuildClusterError(err)}`)
    }
    if (!job) {
      if (doc.status === 'pending' && !doc.started_at) return stub('interrupted: the service stopped before the build Job was created; start the build again')
      return stub(`interrupted: ${GONE}`)
    }
    if (this.closing) { await this.deps.builds.release([doc._id]); return }
    this.deps.log.info({ build_id: doc._id, status: doc.status }, `build ${doc._id} re-attached after a restart`)
    this.launch(doc, kc, registry, credentials, false)
  }

  /** Another replica took this build over (this process was silent too long): stop following it, write nothing more. */
  private letGo(id: string): void {
    const run = this.active.get(id)
    if (!run || run.stopped) return
    run.stopped = true
    run.follower?.stop()
    this.deps.log.warn({ build_id: id }, `build ${id} was taken over by another replica while this one was unresponsive: no longer followed here`)
  }

  /** Shutdown: stop following (the Jobs go on in their clusters) and hand the builds to the next process at once. */
  async close(): Promise<void> {
    this.closing = true
    this.heartbeat.stop()
    await Promise.allSettled([...this.attaching])
    const runs = [...this.active.values()]
    for (const run of runs) { run.stopped = true; run.follower?.stop() }
    await Promise.allSettled(runs.map((r) => r.done))
    await this.deps.builds.release(runs.map((r) => r.doc._id)).catch(() => undefined)
    this.watch.close()
  }
}

function terminalEvent(doc: Pick<BuildDoc, 'status' | 'error' | 'phase' | 'image_ref' | 'image_digest'>): { type: string; data: object } | null {
  if (doc.status === 'completed') return { type: 'complete', data: { image_ref: doc.image_ref, image_digest: doc.image_digest } }
  if (doc.status === 'failed') return { type: 'failed', data: { error: doc.error, phase: doc.phase } }
  if (doc.status === 'cancelled') return { type: 'cancelled', data: {} }
  return null
}


export { RUNNING_STATUSES }
