import type { ImageBehaviour } from '../images.ts'
import type { ContainerOutput } from '../processes/output.ts'
import type { PodRunner, ProcessRuntime } from '../processes/pod-runner.ts'
import { ApiError } from '../status.ts'
import type { StoreEvent } from '../store.ts'
import { fnv32, timestamp, type JsonObject, type KObject } from '../util.ts'
import { keyOf, splitKey, type Controller, type ControllerContext } from './manager.ts'

// The scheduler and every node's kubelet in one controller. It binds pods to nodes and walks each
// container through a scripted lifecycle chosen by its image (see images.ts): no process runs, and the
// state here is what logs and exec read to stay consistent with what `get pod` shows. The exception is
// a pod with a git or builder container (see processes/): its containers run for real, init containers
// first, and their states and output come from those runs.

type Stage = 'creating' | 'pull-error' | 'pull-backoff' | 'running' | 'crash-backoff' | 'terminated'

export interface ContainerRuntime {
  name: string
  image: string
  behaviour: ImageBehaviour
  stage: Stage
  /** Epoch ms when the current (or last) run started. */
  startedAt?: number
  finishedAt?: number
  exitCode?: number
  ready: boolean
  restarts: number
  /** When the next scripted transition is due. */
  due: number
  lastTerminated?: { exitCode: number; startedAt: number; finishedAt: number }
  /** What a container that really runs printed (its log); absent for scripted containers. */
  output?: ContainerOutput
}

interface PodRuntime {
  uid: string; containers: ContainerRuntime[]; node: string; ip: string; startedAt: number; killing: boolean
  /** Init containers that really run (pods with a runner only; others report init containers as done). */
  initContainers: ContainerRuntime[]
  runner?: PodRunner
}

export class Kubelet implements Controller {
  readonly name = 'kubelet'
  readonly triggers: Controller['triggers']
  private readonly pods = new Map<string, PodRuntime>()
  private readonly ipCounters = new Map<string, number>()

  constructor(private readonly ctx: ControllerContext, private readonly processes?: ProcessRuntime) {
    const self = this
    this.triggers = {
      '/pods': (e: StoreEvent) => [keyOf(e.object)],
      '/nodes': () => {
        // A node appearing may make pending pods schedulable.
        return self.ctx.store.list('/pods').filter((p) => !p.spec?.nodeName).map(keyOf)
      },
    }
  }

  start(): void { for (const p of this.ctx.store.list('/pods')) this.ctx.enqueue(this, keyOf(p)) }

  /** Runtime view of a container, for logs and exec. */
  container(podUid: string, name: string): ContainerRuntime | undefined {
    const rtm = this.pods.get(podUid)
    return rtm?.containers.find((c) => c.name === name) ?? rtm?.initContainers.find((c) => c.name === name)
  }

  /** Kills every process of the pods that run for real and removes their files. */
  async close(): Promise<void> {
    await Promise.all([...this.pods.values()].map((p) => p.runner?.dispose()))
    await this.processes?.closeAll()
  }

  reconcile(key: string): void {
    const [ns, name] = splitKey(key)
    const podsRt = this.ctx.rt('', 'pods')
    const pod = this.ctx.api.tryGet(podsRt, ns, name)
    const knownUid = this.byKey.get(key)
    if (knownUid && knownUid !== pod?.metadata.uid) { void this.pods.get(knownUid)?.runner?.dispose(); this.pods.delete(knownUid); this.killAt.delete(knownUid); this.byKey.delete(key) }
    if (!pod) return
    if (pod.metadata.deletionTimestamp) { this.terminate(pod); return }
    if (!pod.spec?.nodeName) { this.schedule(pod); return }
    if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return
    let rtm = this.pods.get(pod.metadata.uid!)
    const now = Date.now()
    if (!rtm) {
      rtm = this.admit(pod, now)
      this.pods.set(pod.metadata.uid!, rtm)
      this.byKey.set(key, pod.metadata.uid!)
      this.writeStatus(pod, rtm)
      this.after(pod, rtm)
      return
    }
    let changed = false
    for (const c of rtm.containers) if (c.due <= now) changed = this.step(pod, rtm, c, now) || changed
    if (changed) this.writeStatus(pod, rtm)
    this.after(pod, rtm)
  }

  private after(pod: KObject, rtm: PodRuntime): void {
    const due = Math.min(...rtm.containers.map((c) => c.due))
    if (Number.isFinite(due)) this.ctx.after(this, keyOf(pod), Math.max(1, due - Date.now()))
  }

  private schedule(pod: KObject): void {
    const podsRt = this.ctx.rt('', 'pods')
    const wanted = (pod.spec?.nodeSelector ?? {}) as Record<string, string>
    const nodes = this.ctx.nodes().filter((n) => {
      const ready = ((n.status?.conditions ?? []) as JsonObject[]).some((c) => c.type === 'Ready' && c.status === 'True')
      return ready && !n.spec?.unschedulable && Object.entries(wanted).every(([k, v]) => n.metadata.labels?.[k] === v)
    })
    if (!nodes.length) {
      const already = ((pod.status?.conditions ?? []) as JsonObject[]).some((c) => c.type === 'PodScheduled' && c.reason === 'Unschedulable')
      if (!already) {
        const total = this.ctx.nodes().length
        const msg = `0/${total} nodes are available: ${total} node(s) didn't match Pod's node affinity/selector. preemption: 0/${total} nodes are available: ${total} Preemption is not helpful for scheduling.`
        pod.status = { ...(pod.status ?? {}), phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: msg, lastProbeTime: null, lastTransitionTime: timestamp() }] }
        this.ctx.api.update(podsRt, pod.metadata.namespace, pod.metadata.name!, pod, { fieldManager: 'kube-scheduler', subresource: 'status' })
        this.ctx.events.record(pod, 'Warning', 'FailedScheduling', msg, 'default-scheduler')
      }
      return
    }
    const load = new Map<string, number>()
    for (const p of this.ctx.store.list('/pods')) if (p.spec?.nodeName) load.set(p.spec.nodeName, (load.get(p.spec.nodeName) ?? 0) + 1)
    nodes.sort((a, b) => (load.get(a.metadata.name!) ?? 0) - (load.get(b.metadata.name!) ?? 0) || a.metadata.name!.localeCompare(b.metadata.name!))
    const node = nodes[0].metadata.name!
    const bound = { ...pod, spec: { ...pod.spec, nodeName: node } }
    const after = this.ctx.api.update(podsRt, pod.metadata.namespace, pod.metadata.name!, bound, { fieldManager: 'kube-scheduler' })
    after.status = { ...(after.status ?? {}), conditions: [{ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: timestamp() }] }
    this.ctx.api.update(podsRt, pod.metadata.namespace, pod.metadata.name!, after, { fieldManager: 'kube-scheduler', subresource: 'status' })
    this.ctx.events.record(after, 'Normal', 'Scheduled', `Successfully assigned ${pod.metadata.namespace}/${pod.metadata.name} to ${node}`, 'default-scheduler')
  }

  private admit(pod: KObject, now: number): PodRuntime {
    const node = pod.spec.nodeName as string
    const idx = this.ctx.nodes().findIndex((n) => n.metadata.name === node)
    const n = (this.ipCounters.get(node) ?? 1) + 1
    this.ipCounters.set(node, n)
    const ip = `10.244.${Math.max(0, idx)}.${n % 250 + 2}`
    const containers = ((pod.spec.containers ?? []) as JsonObject[]).map((c): ContainerRuntime => ({
      name: c.name, image: c.image, behaviour: this.ctx.images.behaviour(c.image), stage: 'creating', ready: false, restarts: 0, due: now + this.ctx.timing.podStartMs,
    }))
    if (this.processes?.handles(pod)) return this.admitProcesses(pod, node, ip, now)
    for (const c of containers) this.ctx.events.record(pod, 'Normal', 'Pulling', `Pulling image "${c.image}"`, 'kubelet', { host: node, fieldPath: `spec.containers{${c.name}}` })
    return { uid: pod.metadata.uid!, containers, node, ip, startedAt: now, killing: false, initContainers: [] }
  }

  private admitProcesses(pod: KObject, node: string, ip: string, now: number): PodRuntime {
    const make = (c: JsonObject): ContainerRuntime => ({ name: c.name, image: c.image, behaviour: this.ctx.images.behaviour(c.image), stage: 'creating', ready: false, restarts: 0, due: Infinity })
    const rtm: PodRuntime = {
      uid: pod.metadata.uid!, node, ip, startedAt: now, killing: false,
      initContainers: ((pod.spec.initContainers ?? []) as JsonObject[]).map(make), containers: ((pod.spec.containers ?? []) as JsonObject[]).map(make),
    }
    const fieldPath = (c?: { name: string; init: boolean }) => (c ? { fieldPath: `spec.${c.init ? 'initContainers' : 'containers'}{${c.name}}` } : {})
    for (const c of [...rtm.initContainers, ...rtm.containers]) this.ctx.events.record(pod, 'Normal', 'Pulling', `Pulling image "${c.image}"`, 'kubelet', { host: node, ...fieldPath({ name: c.name, init: rtm.initContainers.includes(c) }) })
    rtm.runner = this.processes!.start(pod, rtm.initContainers, rtm.containers, {
      // Written at once (never from inside a reconcile: runs advance on timers and process exits), so
      // every state a container passes through — even a git init that takes milliseconds — is seen.
      changed: () => {
        const fresh = this.ctx.api.tryGet(this.ctx.rt('', 'pods'), pod.metadata.namespace, pod.metadata.name!)
        if (fresh && fresh.metadata.uid === rtm.uid && this.pods.get(rtm.uid) === rtm) this.writeStatus(fresh, rtm)
      },
      event: (type, reason, message, c) => this.ctx.events.record(pod, type, reason, message, 'kubelet', { host: node, ...fieldPath(c) }),
    }, (c) => (c.behaviour === 'exit-failure' || c.behaviour === 'crash-loop' ? 1 : 0))
    return rtm
  }

  private restartPolicy(pod: KObject): string { return pod.spec?.restartPolicy ?? 'Always' }

  private backoff(c: ContainerRuntime): number {
    const base = this.ctx.timing.crashBackoffMs
    return Math.min(base * 2 ** Math.max(0, c.restarts - 1), base * 30)
  }

  /** Advances one container's script. Returns whether anything visible changed. */
  private step(pod: KObject, rtm: PodRuntime, c: ContainerRuntime, now: number): boolean {
    const t = this.ctx.timing
    const ev = (type: 'Normal' | 'Warning', reason: string, msg: string) => this.ctx.events.record(pod, type, reason, msg, 'kubelet', { host: rtm.node, fieldPath: `spec.containers{${c.name}}` })
    const run = () => {
      c.stage = 'running'
      c.startedAt = now
      c.finishedAt = undefined
      c.exitCode = undefined
      if (c.restarts === 0) ev('Normal', 'Pulled', `Successfully pulled image "${c.image}" in ${t.podStartMs}ms (${t.podStartMs}ms including waiting). Image size: 4194304 bytes.`)
      else ev('Normal', 'Pulled', `Container image "${c.image}" already present on machine`)
      ev('Normal', 'Created', `Created container: ${c.name}`)
      ev('Normal', 'Started', `Started container ${c.name}`)
      const jobLike = this.restartPolicy(pod) !== 'Always'
      if (c.behaviour === 'crash-loop') c.due = now + t.podReadyMs
      else if (c.behaviour === 'exit-failure' || jobLike) c.due = now + t.jobRunMs
      else if (c.behaviour === 'never-ready') c.due = now + t.podReadyMs
      else c.due = now + t.podReadyMs
    }
    const exit = (code: number) => {
      c.stage = 'terminated'
      c.finishedAt = now
      c.exitCode = code
      c.ready = false
      c.lastTerminated = { exitCode: code, startedAt: c.startedAt ?? now, finishedAt: now }
      const policy = this.restartPolicy(pod)
      if (policy === 'Always' || (policy === 'OnFailure' && code !== 0)) {
        c.restarts++
        c.stage = 'crash-backoff'
        c.due = now + this.backoff(c)
        ev('Warning', 'BackOff', `Back-off restarting failed container ${c.name} in pod ${pod.metadata.name}_${pod.metadata.namespace}(${pod.metadata.uid})`)
      } else c.due = Infinity
    }
    switch (c.stage) {
      case 'creating':
        if (c.behaviour === 'pull-failure') {
          c.stage = 'pull-error'
          ev('Warning', 'Failed', `Failed to pull image "${c.image}": rpc error: code = NotFound desc = failed to pull and unpack image "${c.image}": not found`)
          ev('Warning', 'Failed', 'Error: ErrImagePull')
          c.due = now + t.crashBackoffMs
          return true
        }
        run()
        return true
      case 'pull-error':
        c.stage = 'pull-backoff'
        ev('Normal', 'BackOff', `Back-off pulling image "${c.image}"`)
        ev('Warning', 'Failed', 'Error: ImagePullBackOff')
        c.due = Infinity
        return true
      case 'pull-backoff':
        c.due = Infinity
        return false
      case 'running': {
        if (c.behaviour === 'crash-loop') { exit(1); return true }
        const jobLike = this.restartPolicy(pod) !== 'Always'
        if (c.behaviour === 'exit-failure') { exit(1); return true }
        if (jobLike) { exit(0); return true }
        if (c.behaviour === 'never-ready') {
          ev('Warning', 'Unhealthy', 'Readiness probe failed: HTTP probe failed with statuscode: 503')
          c.due = Infinity
          return false
        }
        if (!c.ready) { c.ready = true; c.due = Infinity; return true }
        c.due = Infinity
        return false
      }
      case 'crash-backoff':
        run()
        return true
      case 'terminated':
        c.due = Infinity
        return false
    }
    return false
  }

  private containerStatus(c: ContainerRuntime, pod: KObject): JsonObject {
    const ts = (ms?: number) => (ms ? timestamp(ms) : null)
    let state: JsonObject
    switch (c.stage) {
      case 'creating': state = { waiting: { reason: 'ContainerCreating' } }; break
      case 'pull-error': state = { waiting: { reason: 'ErrImagePull', message: `failed to pull and unpack image "${c.image}": not found` } }; break
      case 'pull-backoff': state = { waiting: { reason: 'ImagePullBackOff', message: `Back-off pulling image "${c.image}"` } }; break
      case 'running': state = { running: { startedAt: ts(c.startedAt) } }; break
      case 'crash-backoff': state = { waiting: { reason: 'CrashLoopBackOff', message: `back-off ${Math.round(this.backoff(c) / 1000) || 1}s restarting failed container=${c.name} pod=${pod.metadata.name}_${pod.metadata.namespace}(${pod.metadata.uid})` } }; break
      case 'terminated': state = { terminated: { exitCode: c.exitCode ?? 0, reason: c.exitCode ? 'Error' : 'Completed', startedAt: ts(c.startedAt), finishedAt: ts(c.finishedAt), containerID: this.containerId(pod, c) } }; break
    }
    const hash = fnv32(c.image).toString(16).padStart(8, '0')
    const s: JsonObject = {
      name: c.name, image: c.image, imageID: c.stage === 'creating' || c.stage.startsWith('pull') ? '' : `docker.io/library/${c.image.split(':')[0]}@sha256:${hash.repeat(8)}`,
      ready: c.ready, restartCount: c.restarts, started: c.stage === 'running', state, lastState: {},
    }
    if (c.stage === 'running' || c.stage === 'terminated' || c.stage === 'crash-backoff') s.containerID = this.containerId(pod, c)
    if (c.lastTerminated && c.restarts > 0) s.lastState = { terminated: { exitCode: c.lastTerminated.exitCode, reason: c.lastTerminated.exitCode ? 'Error' : 'Completed', startedAt: ts(c.lastTerminated.startedAt), finishedAt: ts(c.lastTerminated.finishedAt), containerID: this.containerId(pod, c) } }
    return s
  }

  private containerId(pod: KObject, c: ContainerRuntime): string {
    const h = (n: number) => fnv32(`${pod.metadata.uid}/${c.name}/${n}`).toString(16).padStart(8, '0')
    return `containerd://${h(c.restarts)}${h(c.restarts + 1)}${h(c.restarts + 2)}${h(c.restarts + 3)}${h(c.restarts + 4)}${h(c.restarts + 5)}${h(c.restarts + 6)}${h(c.restarts + 7)}`
  }

  private writeStatus(pod: KObject, rtm: PodRuntime): void {
    const cs = rtm.containers
    const allReady = cs.every((c) => c.ready)
    const ran = cs.some((c) => c.startedAt !== undefined)
    const allDone = cs.every((c) => c.stage === 'terminated')
    let phase = 'Pending'
    if (allDone) phase = cs.every((c) => c.exitCode === 0) ? 'Succeeded' : 'Failed'
    else if (ran) phase = 'Running'
    // Real init containers: the pod stays Pending until they all succeed, and fails with the first that
    // does not (restart policy Never — the only one a build pod uses).
    const inits = rtm.initContainers
    const initsDone = inits.every((c) => c.stage === 'terminated' && c.exitCode === 0)
    const initFailed = inits.some((c) => c.stage === 'terminated' && c.exitCode !== 0)
    if (initFailed) phase = 'Failed'
    else if (!initsDone) phase = 'Pending'
    const incomplete = inits.filter((c) => !(c.stage === 'terminated' && c.exitCode === 0)).map((c) => c.name)
    const prev = (pod.status?.conditions ?? []) as JsonObject[]
    const cond = (type: string, ok: boolean, reason?: string, message?: string): JsonObject => {
      const status = ok ? 'True' : 'False'
      const old = prev.find((c) => c.type === type)
      const c: JsonObject = { type, status, lastProbeTime: null, lastTransitionTime: old && old.status === status ? old.lastTransitionTime : timestamp() }
      if (!ok && reason) { c.reason = reason; c.message = message }
      if (ok && allDone && (type === 'Ready' || type === 'ContainersReady')) { c.status = 'False'; c.reason = 'PodCompleted' }
      return c
    }
    const notReady = cs.filter((c) => !c.ready).map((c) => c.name)
    const msg = `containers with unready status: [${notReady.join(' ')}]`
    const created = [...inits, ...cs].some((c) => c.stage !== 'creating')
    const status: JsonObject = {
      ...(pod.status ?? {}),
      phase,
      conditions: [
        cond('PodReadyToStartContainers', created && !allDone && !initFailed),
        cond('Initialized', initsDone, 'ContainersNotInitialized', `containers with incomplete status: [${incomplete.join(' ')}]`),
        cond('Ready', allReady, 'ContainersNotReady', msg),
        cond('ContainersReady', allReady, 'ContainersNotReady', msg),
        cond('PodScheduled', true),
      ],
      hostIP: this.nodeIp(rtm.node), hostIPs: [{ ip: this.nodeIp(rtm.node) }],
      podIP: rtm.ip, podIPs: [{ ip: rtm.ip }],
      startTime: pod.status?.startTime ?? timestamp(rtm.startedAt),
      containerStatuses: cs.map((c) => (c.stage === 'creating' && !initsDone ? { ...this.containerStatus(c, pod), state: { waiting: { reason: 'PodInitializing' } } } : this.containerStatus(c, pod))),
    }
    if (rtm.runner) {
      if (inits.length) {
        status.initContainerStatuses = inits.map((c) => {
          const s = this.containerStatus(c, pod)
          return { ...s, ready: c.stage === 'terminated' && c.exitCode === 0, ...(c.stage === 'creating' ? { state: { waiting: { reason: 'PodInitializing' } } } : {}) }
        })
      }
    } else if ((pod.spec?.initContainers ?? []).length) {
      status.initContainerStatuses = (pod.spec.initContainers as JsonObject[]).map((c) => ({
        name: c.name, image: c.image, imageID: '', ready: true, restartCount: 0, started: false,
        state: { terminated: { exitCode: 0, reason: 'Completed', startedAt: timestamp(rtm.startedAt), finishedAt: timestamp(rtm.startedAt) } }, lastState: {},
      }))
    }
    const podsRt = this.ctx.rt('', 'pods')
    try {
      const fresh = this.ctx.api.get(podsRt, pod.metadata.namespace, pod.metadata.name!)
      if (fresh.metadata.uid !== pod.metadata.uid || fresh.metadata.deletionTimestamp) return
      fresh.status = status
      this.ctx.api.update(podsRt, pod.metadata.namespace, pod.metadata.name!, fresh, { fieldManager: 'kubelet', subresource: 'status' })
    } catch (e) {
      if (!(e instanceof ApiError && e.code === 404)) throw e
    }
  }

  nodeIp(node: string): string {
    const n = this.ctx.nodes().find((x) => x.metadata.name === node)
    return ((n?.status?.addresses ?? []) as JsonObject[]).find((a) => a.type === 'InternalIP')?.address ?? '172.18.0.2'
  }

  private terminate(pod: KObject): void {
    const uid = pod.metadata.uid!
    let at = this.killAt.get(uid)
    if (at === undefined) {
      const rtm = this.pods.get(uid)
      rtm?.runner?.kill()
      for (const c of [...(rtm?.initContainers ?? []), ...(rtm?.containers ?? [])]) {
        const kind = rtm!.initContainers.includes(c) ? 'initContainers' : 'containers'
        if (c.stage === 'running') this.ctx.events.record(pod, 'Normal', 'Killing', `Stopping container ${c.name}`, 'kubelet', { host: rtm!.node, fieldPath: `spec.${kind}{${c.name}}` })
      }
      // The grace period is honoured only up to the simulated termination time, so tests stay fast.
      at = Date.now() + Math.min((pod.metadata.deletionGracePeriodSeconds ?? 0) * 1000, this.ctx.timing.podTerminateMs)
      this.killAt.set(uid, at)
    }
    const wait = at - Date.now()
    if (wait > 0) { this.ctx.after(this, keyOf(pod), wait); return }
    this.killAt.delete(uid)
    void this.pods.get(uid)?.runner?.dispose()
    this.pods.delete(uid)
    try {
      this.ctx.api.delete(this.ctx.rt('', 'pods'), pod.metadata.namespace, pod.metadata.name!, { gracePeriodSeconds: 0, preconditions: { uid } })
    } catch (e) {
      if (!(e instanceof ApiError && (e.code === 404 || e.code === 409))) throw e
    }
  }

  private readonly killAt = new Map<string, number>()
  private readonly byKey = new Map<string, string>()
}
