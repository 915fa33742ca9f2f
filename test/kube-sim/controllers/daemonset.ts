import { ApiError } from '../status.ts'
import type { StoreEvent } from '../store.ts'
import { safeHash, type JsonObject, type KObject } from '../util.ts'
import { isPodReady, keyOf, ownedBy, ownerKeys, splitKey, type Controller, type ControllerContext } from './manager.ts'
import { createPodFromTemplate } from './replicaset.ts'

const revisionLabel = 'controller-revision-hash'

/** One pod per eligible node (nodeSelector honoured, pinned with spec.nodeName), rolled node by node. */
export class DaemonSetController implements Controller {
  readonly name = 'daemonset-controller'
  readonly triggers: Controller['triggers']

  constructor(private readonly ctx: ControllerContext) {
    this.triggers = {
      'apps/daemonsets': (e: StoreEvent) => [keyOf(e.object)],
      '/pods': (e: StoreEvent) => ownerKeys(e, 'DaemonSet'),
      '/nodes': () => ctx.store.list('apps/daemonsets').map(keyOf),
    }
  }

  start(): void { for (const o of this.ctx.store.list('apps/daemonsets')) this.ctx.enqueue(this, keyOf(o)) }

  reconcile(key: string): void {
    const [ns, name] = splitKey(key)
    const dsRt = this.ctx.rt('apps', 'daemonsets')
    const podsRt = this.ctx.rt('', 'pods')
    const ds = this.ctx.api.tryGet(dsRt, ns, name)
    if (!ds || ds.metadata.deletionTimestamp) return
    const revision = safeHash(ds.spec.template)
    const wanted = (ds.spec.template?.spec?.nodeSelector ?? {}) as Record<string, string>
    const nodes = this.ctx.nodes().filter((n) => Object.entries(wanted).every(([k, v]) => n.metadata.labels?.[k] === v))
    const pods = ownedBy(this.ctx, podsRt, ns, ds.metadata.uid!).filter((p) => !p.metadata.deletionTimestamp)
    const onNode = (n: string) => pods.filter((p) => p.spec?.nodeName === n)
    for (const n of nodes) {
      if (onNode(n.metadata.name!).length) continue
      const p = createPodFromTemplate(this.ctx, ds, `${name}-`, { labels: { [revisionLabel]: revision, 'pod-template-generation': String(ds.metadata.generation ?? 1) }, spec: { nodeName: n.metadata.name } })
      if (p) { pods.push(p); this.ctx.events.record(ds, 'Normal', 'SuccessfulCreate', `Created pod: ${p.metadata.name}`, 'daemonset-controller') }
    }
    const eligible = new Set(nodes.map((n) => n.metadata.name))
    const del = (p: KObject) => {
      try { this.ctx.api.delete(podsRt, ns, p.metadata.name!, {}) } catch (e) { if (!(e instanceof ApiError && e.code === 404)) throw e }
      this.ctx.events.record(ds, 'Normal', 'SuccessfulDelete', `Deleted pod: ${p.metadata.name}`, 'daemonset-controller')
      pods.splice(pods.indexOf(p), 1)
    }
    for (const p of [...pods]) if (!eligible.has(p.spec?.nodeName)) del(p)
    if (ds.spec?.updateStrategy?.type !== 'OnDelete') {
      const maxUnavailable = Number(ds.spec?.updateStrategy?.rollingUpdate?.maxUnavailable ?? 1) || 1
      const unavailable = pods.filter((p) => !isPodReady(p)).length
      const outdated = pods.filter((p) => p.metadata.labels?.[revisionLabel] !== revision)
      for (const p of outdated.slice(0, Math.max(0, maxUnavailable - unavailable))) del(p)
    }
    const ready = pods.filter(isPodReady).length
    const updated = pods.filter((p) => p.metadata.labels?.[revisionLabel] === revision).length
    const status: JsonObject = {
      observedGeneration: ds.metadata.generation, desiredNumberScheduled: nodes.length, currentNumberScheduled: pods.length, numberMisscheduled: 0,
      numberReady: ready, numberAvailable: ready, numberUnavailable: Math.max(0, nodes.length - ready), updatedNumberScheduled: updated,
    }
    for (const k of ['numberAvailable', 'numberUnavailable', 'updatedNumberScheduled']) if (!status[k]) delete status[k]
    const fresh = this.ctx.api.get(dsRt, ns, name)
    fresh.status = status
    this.ctx.api.update(dsRt, ns, name, fresh, { fieldManager: 'kube-controller-manager', subresource: 'status' })
  }
}
