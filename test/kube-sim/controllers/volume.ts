import { ApiError } from '../status.ts'
import type { StoreEvent } from '../store.ts'
import { parseQuantity, type JsonObject, type KObject } from '../util.ts'
import { keyOf, splitKey, type Controller, type ControllerContext } from './manager.ts'

/**
 * PersistentVolume binding: a Pending claim binds to a matching Available volume, or gets a volume
 * provisioned for it (`pvc-<claim uid>`, reclaim policy Delete). Deleting the claim releases or
 * deletes its volume per the reclaim policy.
 */
export class VolumeController implements Controller {
  readonly name = 'persistentvolume-binder'
  readonly triggers: Controller['triggers'] = {
    '/persistentvolumeclaims': (e: StoreEvent) => [keyOf(e.object), ...(e.type === 'DELETED' && e.object.spec?.volumeName ? [`pv:${e.object.spec.volumeName}`] : [])],
    '/persistentvolumes': (e: StoreEvent) => {
      const ref = (e.object.spec?.claimRef ?? e.old?.spec?.claimRef) as JsonObject | undefined
      return ref ? [`${ref.namespace}/${ref.name}`, `pv:${e.object.metadata.name}`] : [`pv:${e.object.metadata.name}`]
    },
  }

  constructor(private readonly ctx: ControllerContext) {}

  start(): void { for (const o of this.ctx.store.list('/persistentvolumeclaims')) this.ctx.enqueue(this, keyOf(o)) }

  reconcile(key: string): void {
    if (key.startsWith('pv:')) { this.reclaim(key.slice(3)); return }
    const [ns, name] = splitKey(key)
    const pvcRt = this.ctx.rt('', 'persistentvolumeclaims')
    const pvRt = this.ctx.rt('', 'persistentvolumes')
    const pvc = this.ctx.api.tryGet(pvcRt, ns, name)
    if (!pvc || pvc.metadata.deletionTimestamp || pvc.status?.phase === 'Bound') return
    // Creation timestamps have second precision, so the bind delay runs from when the claim was first seen.
    const firstSeen = this.seen.get(pvc.metadata.uid!) ?? Date.now()
    this.seen.set(pvc.metadata.uid!, firstSeen)
    const wait = firstSeen + this.ctx.timing.pvcBindMs - Date.now()
    if (wait > 0) { this.ctx.after(this, key, wait); return }
    const request = parseQuantity(pvc.spec?.resources?.requests?.storage)
    const modes = (pvc.spec?.accessModes ?? []) as string[]
    const cls = pvc.spec?.storageClassName ?? ''
    let pv: KObject | undefined
    if (pvc.spec?.volumeName) pv = this.ctx.api.tryGet(pvRt, undefined, pvc.spec.volumeName)
    else {
      pv = this.ctx.api.list(pvRt, undefined).items.find((v) => v.status?.phase === 'Available' && !v.spec?.claimRef && (v.spec?.storageClassName ?? '') === cls
        && parseQuantity(v.spec?.capacity?.storage) >= request && modes.every((m) => (v.spec?.accessModes ?? []).includes(m))
        && (!pvc.spec?.selector || Object.entries((pvc.spec.selector.matchLabels ?? {}) as Record<string, string>).every(([k, x]) => v.metadata.labels?.[k] === x)))
    }
    const claimRef = { kind: 'PersistentVolumeClaim', namespace: ns, name, uid: pvc.metadata.uid, apiVersion: 'v1', resourceVersion: pvc.metadata.resourceVersion }
    if (!pv) {
      if (!cls || pvc.spec?.volumeName) {
        this.ctx.events.record(pvc, 'Normal', 'FailedBinding', 'no persistent volumes available for this claim and no storage class is set', 'persistentvolume-controller')
        return
      }
      const pvName = `pvc-${pvc.metadata.uid}`
      this.ctx.events.record(pvc, 'Normal', 'Provisioning', `External provisioner is provisioning volume for claim "${ns}/${name}"`, 'kube-sim.io/hostpath')
      try {
        pv = this.ctx.api.create(pvRt, undefined, {
          metadata: { name: pvName, annotations: { 'pv.kubernetes.io/provisioned-by': 'kube-sim.io/hostpath' }, finalizers: ['kubernetes.io/pv-protection'] },
          spec: {
            capacity: { storage: pvc.spec?.resources?.requests?.storage ?? '1Gi' }, accessModes: modes, storageClassName: cls,
            persistentVolumeReclaimPolicy: 'Delete', volumeMode: pvc.spec?.volumeMode ?? 'Filesystem', hostPath: { path: `/var/lib/kube-sim/${pvName}`, type: 'DirectoryOrCreate' }, claimRef,
          },
        }, { fieldManager: 'kube-sim-provisioner' })
      } catch (e) {
        if (!(e instanceof ApiError && e.code === 409)) throw e
        pv = this.ctx.api.get(pvRt, undefined, pvName)
      }
      this.ctx.events.record(pvc, 'Normal', 'ProvisioningSucceeded', `Successfully provisioned volume ${pvName}`, 'kube-sim.io/hostpath')
    } else if (!pv.spec?.claimRef) {
      pv.spec.claimRef = claimRef
      pv = this.ctx.api.update(pvRt, undefined, pv.metadata.name!, pv, { fieldManager: 'kube-controller-manager' })
    }
    pv.status = { phase: 'Bound' }
    this.ctx.api.update(pvRt, undefined, pv.metadata.name!, pv, { fieldManager: 'kube-controller-manager', subresource: 'status' })
    const bound = this.ctx.api.get(pvcRt, ns, name)
    bound.spec.volumeName = pv.metadata.name
    bound.metadata.annotations = { ...(bound.metadata.annotations ?? {}), 'pv.kubernetes.io/bind-completed': 'yes', 'pv.kubernetes.io/bound-by-controller': 'yes' }
    const afterSpec = this.ctx.api.update(pvcRt, ns, name, bound, { fieldManager: 'kube-controller-manager' })
    afterSpec.status = { phase: 'Bound', accessModes: pv.spec.accessModes, capacity: pv.spec.capacity }
    this.ctx.api.update(pvcRt, ns, name, afterSpec, { fieldManager: 'kube-controller-manager', subresource: 'status' })
    this.seen.delete(pvc.metadata.uid!)
  }

  private readonly seen = new Map<string, number>()

  /** A volume whose claim is gone is deleted (policy Delete) or marked Released (Retain). */
  private reclaim(pvName: string): void {
    const pvRt = this.ctx.rt('', 'persistentvolumes')
    const pv = this.ctx.api.tryGet(pvRt, undefined, pvName)
    if (!pv) return
    if (pv.metadata.deletionTimestamp) {
      const ref = pv.spec?.claimRef
      const claimAlive = ref && this.ctx.store.get('/persistentvolumeclaims', ref.namespace, ref.name)?.metadata.uid === ref.uid
      if (!claimAlive && (pv.metadata.finalizers ?? []).includes('kubernetes.io/pv-protection')) {
        pv.metadata.finalizers = pv.metadata.finalizers!.filter((f) => f !== 'kubernetes.io/pv-protection')
        this.ctx.api.update(pvRt, undefined, pvName, pv, { fieldManager: 'kube-controller-manager' })
      }
      return
    }
    const ref = pv.spec?.claimRef
    if (!ref || pv.status?.phase !== 'Bound') return
    const claim = this.ctx.store.get('/persistentvolumeclaims', ref.namespace, ref.name)
    if (claim && claim.metadata.uid === ref.uid) return
    if (pv.spec.persistentVolumeReclaimPolicy === 'Delete') {
      try { this.ctx.api.delete(pvRt, undefined, pvName, {}) } catch (e) { if (!(e instanceof ApiError)) throw e }
    } else {
      pv.status = { phase: 'Released' }
      this.ctx.api.update(pvRt, undefined, pvName, pv, { fieldManager: 'kube-controller-manager', subresource: 'status' })
    }
  }
}
