import type { ObjectApi } from '../api.ts'
import type { EventRecorder } from '../events.ts'
import type { ImagePolicy } from '../images.ts'
import type { Registry } from '../registry.ts'
import type { ResourceType } from '../resources.ts'
import { ApiError } from '../status.ts'
import type { Store, StoreEvent } from '../store.ts'
import type { KObject } from '../util.ts'

/** Durations of simulated work. Defaults are tens of milliseconds so tests run fast. */
export interface Timing {
  /** Pod bound to a node → containers created (image pulled). */
  podStartMs: number
  /** Container running → Ready. */
  podReadyMs: number
  /** How long a Job pod's container runs before it exits. */
  jobRunMs: number
  /** Upper bound on how long a deleted pod stays Terminating (its grace period is used when shorter). */
  podTerminateMs: number
  /** Base back-off between crash-loop restarts (doubles per restart, like the kubelet's 10s..5m). */
  crashBackoffMs: number
  /** PVC Pending → Bound. */
  pvcBindMs: number
  /** LoadBalancer Service / Ingress → external address assigned. */
  loadBalancerMs: number
  /** Interval between generated log lines of a running container. */
  logIntervalMs: number
  /** Real milliseconds that one minute of cron time takes (60000 = real time). */
  cronMinuteMs: number
  /** HPA evaluation period. */
  hpaSyncMs: number
}

export const defaultTiming: Timing = {
  podStartMs: 30,
  podReadyMs: 30,
  jobRunMs: 60,
  podTerminateMs: 30,
  crashBackoffMs: 100,
  pvcBindMs: 20,
  loadBalancerMs: 30,
  logIntervalMs: 100,
  cronMinuteMs: 60_000,
  hpaSyncMs: 500,
}

export interface ControllerContext {
  api: ObjectApi
  store: Store
  registry: Registry
  timing: Timing
  images: ImagePolicy
  events: EventRecorder
  nodes(): KObject[]
  /** Resource type of a built-in, by group and plural. */
  rt(group: string, plural: string): ResourceType
  /** Re-runs a controller's reconcile for `key` after `ms` (timers are released on close). */
  after(c: Controller, key: string, ms: number): void
  enqueue(c: Controller, key: string): void
}

export interface Controller {
  readonly name: string
  /** Storage keys (`group/plural`) this controller listens to, mapped to the reconcile keys an event touches. */
  readonly triggers: Record<string, (e: StoreEvent) => string[]>
  reconcile(key: string): void
  /** Called when the manager starts, to enqueue existing objects. */
  start?(): void
  stop?(): void
}

/**
 * Runs controllers off store events through a deduplicating queue, one reconcile at a time, like
 * kube-controller-manager's workqueues. Conflicts (another writer got there first) are retried.
 */
export class ControllerManager {
  private readonly controllers: Controller[] = []
  private readonly queue = new Map<string, { c: Controller; key: string; attempts: number }>()
  private readonly timers = new Set<NodeJS.Timeout>()
  private readonly delayed = new Map<string, { timer: NodeJS.Timeout; due: number }>()
  private scheduled = false
  private closed = false
  private unsubscribe?: () => void
  private immediate?: NodeJS.Immediate

  constructor(private readonly store: Store) {}

  add(c: Controller): void { this.controllers.push(c) }

  start(): void {
    this.unsubscribe = this.store.subscribe((e) => this.onEvent(e))
    for (const c of this.controllers) c.start?.()
  }

  close(): void {
    this.closed = true
    this.unsubscribe?.()
    for (const c of this.controllers) c.stop?.()
    for (const t of this.timers) clearTimeout(t)
    this.timers.clear()
    this.delayed.clear()
    if (this.immediate) clearImmediate(this.immediate)
    this.queue.clear()
  }

  private onEvent(e: StoreEvent): void {
    for (const c of this.controllers) {
      const f = c.triggers[e.key]
      if (!f) continue
      for (const k of f(e)) this.enqueue(c, k)
    }
  }

  enqueue(c: Controller, key: string, attempts = 0): void {
    if (this.closed) return
    const id = `${c.name}\u0000${key}`
    if (!this.queue.has(id)) this.queue.set(id, { c, key, attempts })
    this.schedule()
  }

  after(c: Controller, key: string, ms: number): void {
    if (this.closed) return
    const id = `${c.name}\u0000${key}`
    const due = Date.now() + Math.max(0, ms)
    const existing = this.delayed.get(id)
    // One pending timer per key, the earliest wins; later requests are covered by that reconcile.
    if (existing && existing.due <= due) return
    if (existing) { clearTimeout(existing.timer); this.timers.delete(existing.timer) }
    const t = setTimeout(() => { this.timers.delete(t); this.delayed.delete(id); this.enqueue(c, key) }, Math.max(0, ms))
    t.unref()
    this.timers.add(t)
    this.delayed.set(id, { timer: t, due })
  }

  private schedule(): void {
    if (this.scheduled || this.closed) return
    this.scheduled = true
    // setImmediate, not a microtask: lets the HTTP response that caused the change go out first.
    this.immediate = setImmediate(() => this.drain())
  }

  private drain(): void {
    this.scheduled = false
    let budget = 500
    while (this.queue.size && budget-- > 0 && !this.closed) {
      const [id, item] = this.queue.entries().next().value!
      this.queue.delete(id)
      try {
        item.c.reconcile(item.key)
      } catch (e) {
        const retriable = e instanceof ApiError && (e.code === 409 || e.code === 404)
        if (retriable && item.attempts < 20) {
          const t = setTimeout(() => { this.timers.delete(t); this.enqueue(item.c, item.key, item.attempts + 1) }, 5 * (item.attempts + 1))
          t.unref()
          this.timers.add(t)
        } else if (!(e instanceof ApiError)) {
          process.emitWarning(`kube-sim controller ${item.c.name} failed on ${item.key}: ${(e as Error).stack ?? String(e)}`)
        }
      }
    }
    if (this.queue.size) this.schedule()
  }
}

/** `ns/name` reconcile key of an object. */
export function keyOf(o: KObject): string { return `${o.metadata.namespace ?? ''}/${o.metadata.name}` }

export function splitKey(k: string): [string | undefined, string] {
  const i = k.indexOf('/')
  const ns = k.slice(0, i)
  return [ns || undefined, k.slice(i + 1)]
}

/** Keys of the controlling owners of kind `kind` referenced by the event's object (before and after). */
export function ownerKeys(e: StoreEvent, kind: string): string[] {
  const out = new Set<string>()
  for (const o of [e.object, e.old]) {
    if (!o) continue
    for (const r of o.metadata.ownerReferences ?? []) if (r.kind === kind && r.controller) out.add(`${o.metadata.namespace ?? ''}/${r.name}`)
  }
  return [...out]
}

export function controllerRef(o: KObject): { kind: string; name: string; uid: string } | undefined {
  return o.metadata.ownerReferences?.find((r) => r.controller)
}

export function ownerRef(o: KObject): { apiVersion: string; kind: string; name: string; uid: string; controller: true; blockOwnerDeletion: true } {
  return { apiVersion: o.apiVersion!, kind: o.kind!, name: o.metadata.name!, uid: o.metadata.uid!, controller: true, blockOwnerDeletion: true }
}

export function isPodReady(p: KObject): boolean {
  return ((p.status?.conditions ?? []) as { type: string; status: string }[]).some((c) => c.type === 'Ready' && c.status === 'True')
}

export function isPodActive(p: KObject): boolean {
  return !p.metadata.deletionTimestamp && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed'
}

/** Owned objects of `rt` in a namespace, by the owner's uid. */
export function ownedBy(ctx: ControllerContext, rt: ResourceType, ns: string | undefined, uid: string): KObject[] {
  return ctx.store.list(`${rt.group}/${rt.plural}`, ns).filter((o) => o.metadata.ownerReferences?.some((r) => r.uid === uid && r.controller))
    .map((o) => ctx.api.present(rt, o))
}
