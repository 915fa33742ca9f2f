import { ApiError } from '../status.ts'
import type { StoreEvent } from '../store.ts'
import { clone, timestamp, type JsonObject, type KObject } from '../util.ts'
import { isPodActive, isPodReady, keyOf, ownedBy, ownerKeys, ownerRef, splitKey, type Controller, type ControllerContext } from './manager.ts'

/** Keeps `spec.replicas` pods per ReplicaSet and reports their readiness in status. */
export class ReplicaSetController implements Controller {
  readonly name = 'replicaset-controller'
  readonly triggers: Controller['triggers'] = {
    'apps/replicasets': (e: StoreEvent) => [keyOf(e.object)],
    '/pods': (e: StoreEvent) => ownerKeys(e, 'ReplicaSet'),
  }

  constructor(private readonly ctx: ControllerContext) {}

  start(): void { for (const o of this.ctx.store.list('apps/replicasets')) this.ctx.enqueue(this, keyOf(o)) }

  reconcile(key: string): void {
    const [ns, name] = splitKey(key)
    const rsRt = this.ctx.rt('apps', 'replicasets')
    const podsRt = this.ctx.rt('', 'pods')
    const rs = this.ctx.api.tryGet(rsRt, ns, name)
    if (!rs || rs.metadata.deletionTimestamp) return
    const pods = ownedBy(this.ctx, podsRt, ns, rs.metadata.uid!).filter(isPodActive)
    const want = rs.spec?.replicas ?? 1
    if (pods.length < want) {
      for (let i = pods.length; i < want; i++) {
        const p = createPodFromTemplate(this.ctx, rs, `${name}-`)
        if (p) { pods.push(p); this.ctx.events.record(rs, 'Normal', 'SuccessfulCreate', `Created pod: ${p.metadata.name}`, 'replicaset-controller') }
      }
    } else if (pods.length > want) {
      // Delete the least useful pods first: unscheduled, then not ready, then the newest.
      const rank = (p: KObject) => (p.spec?.nodeName ? 1 : 0) + (p.status?.phase === 'Running' ? 1 : 0) + (isPodReady(p) ? 1 : 0)
      const victims = [...pods].sort((a, b) => rank(a) - rank(b) || (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? '')).slice(0, pods.length - want)
      for (const v of victims) {
        try { this.ctx.api.delete(podsRt, ns, v.metadata.name!, {}) } catch (e) { if (!(e instanceof ApiError && e.code === 404)) throw e }
        this.ctx.events.record(rs, 'Normal', 'SuccessfulDelete', `Deleted pod: ${v.metadata.name}`, 'replicaset-controller')
        pods.splice(pods.indexOf(v), 1)
      }
    }
    const ready = pods.filter(isPodReady).length
    const status: JsonObject = { replicas: pods.length, fullyLabeledReplicas: pods.length, readyReplicas: ready, availableReplicas: ready, observedGeneration: rs.metadata.generation }
    if (!ready) { delete status.readyReplicas; delete status.availableReplicas }
    if (!pods.length) delete status.fullyLabeledReplicas
    const fresh = this.ctx.api.get(rsRt, ns, name)
    fresh.status = { ...status, ...(fresh.status?.conditions ? { conditions: fresh.status.conditions } : {}) }
    this.ctx.api.update(rsRt, ns, name, fresh, { fieldManager: 'kube-controller-manager', subresource: 'status' })
  }
}

/** Creates a pod from an owner's pod template (controller ownerReference, template labels and spec). */
export function createPodFromTemplate(ctx: ControllerContext, owner: KObject, generateName: string, extra: { name?: string; labels?: Record<string, string>; annotations?: Record<string, string>; spec?: JsonObject } = {}): KObject | undefined {
  const tmpl = clone((owner.spec?.template ?? owner.spec?.jobTemplate?.spec?.template ?? {}) as JsonObject)
  const meta = (tmpl.metadata ?? {}) as JsonObject
  const pod: KObject = {
    apiVersion: 'v1', kind: 'Pod',
    metadata: {
      ...(extra.name ? { name: extra.name } : { generateName }),
      namespace: owner.metadata.namespace,
      labels: { ...(meta.labels ?? {}), ...(extra.labels ?? {}) },
      ownerReferences: [ownerRef(owner)],
    },
    spec: { ...(tmpl.spec ?? {}), ...(extra.spec ?? {}) },
  }
  const annotations = { ...(meta.annotations ?? {}), ...(extra.annotations ?? {}) }
  if (Object.keys(annotations).length) pod.metadata.annotations = annotations
  try {
    return ctx.api.create(ctx.rt('', 'pods'), owner.metadata.namespace, pod, { fieldManager: 'kube-controller-manager' })
  } catch (e) {
    // A terminating namespace or a racing name: the next reconcile sorts it out.
    if (e instanceof ApiError && (e.code === 403 || e.code === 409 || e.code === 404)) return undefined
    if (e instanceof ApiError && e.code === 422) {
      ctx.events.record(owner, 'Warning', 'FailedCreate', `Error creating: ${e.message}`, 'kube-controller-manager')
      return undefined
    }
    throw e
  }
}

export function condition(prev: JsonObject[] | undefined, type: string, ok: boolean, reason: string, message: string, bumpUpdate = true): JsonObject {
  const status = ok ? 'True' : 'False'
  const old = (prev ?? []).find((c) => c.type === type)
  const same = old && old.status === status && old.reason === reason
  const now = timestamp()
  return { type, status, lastUpdateTime: same && !bumpUpdate ? old.lastUpdateTime : same && old.message === message ? old.lastUpdateTime : now, lastTransitionTime: old && old.status === status ? old.lastTransitionTime : now, reason, message }
}
