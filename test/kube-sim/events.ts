import type { ObjectApi } from './api.ts'
import type { Registry } from './registry.ts'
import { ApiError } from './status.ts'
import { timestamp, type KObject } from './util.ts'

/**
 * Records core/v1 Events the way client-go's recorder does, including aggregation: a repeat of the
 * same reason and message for the same object bumps `count` and `lastTimestamp` instead of adding one.
 */
export class EventRecorder {
  private seq = 0
  private readonly recent = new Map<string, { namespace: string; name: string }>()

  constructor(private readonly api: ObjectApi, private readonly registry: Registry) {}

  record(obj: KObject, type: 'Normal' | 'Warning', reason: string, message: string, component: string, opts: { host?: string; fieldPath?: string } = {}): void {
    const rt = this.registry.find('', 'v1', 'events')!
    const namespace = obj.metadata.namespace ?? 'default'
    const key = `${obj.metadata.uid}|${reason}|${message}|${opts.fieldPath ?? ''}`
    const now = timestamp()
    try {
      const prev = this.recent.get(key)
      const existing = prev ? this.api.tryGet(rt, prev.namespace, prev.name) : undefined
      if (existing) {
        existing.count = (existing.count ?? 1) + 1
        existing.lastTimestamp = now
        this.api.update(rt, prev!.namespace, prev!.name, existing, { fieldManager: component })
        return
      }
      // Event names are `<object>.<hex nanoseconds>` on a real cluster; keep the shape and uniqueness.
      const name = `${obj.metadata.name}.${(BigInt(Date.now()) * 1000000n + BigInt(++this.seq)).toString(16)}`
      const involved: Record<string, string> = { kind: obj.kind ?? '', name: obj.metadata.name!, uid: obj.metadata.uid ?? '', apiVersion: obj.apiVersion ?? 'v1', resourceVersion: obj.metadata.resourceVersion ?? '' }
      if (obj.metadata.namespace) involved.namespace = obj.metadata.namespace
      if (opts.fieldPath) involved.fieldPath = opts.fieldPath
      this.api.create(rt, namespace, {
        metadata: { name, namespace },
        involvedObject: involved,
        reason, message, type, count: 1,
        source: opts.host ? { component, host: opts.host } : { component },
        firstTimestamp: now, lastTimestamp: now, eventTime: null,
        reportingComponent: component, reportingInstance: opts.host ?? '',
      }, { fieldManager: component })
      this.recent.set(key, { namespace, name })
      if (this.recent.size > 5000) this.recent.delete(this.recent.keys().next().value!)
    } catch (e) {
      // Events are best effort, as in client-go: a terminating namespace must not break a controller.
      if (!(e instanceof ApiError)) throw e
    }
  }
}
