import { ApiError } from '../status.ts'
import type { StoreEvent } from '../store.ts'
import { clone, safeHash, type JsonObject, type KObject } from '../util.ts'
import { isPodReady, keyOf, ownedBy, ownerKeys, ownerRef, splitKey, type Controller, type ControllerContext } from './manager.ts'
import { createPodFromTemplate } from './replicaset.ts'

const revisionLabel = 'controller-revision-hash'

/**
 * StatefulSets: pods `<name>-<ordinal>` with stable PVCs `<template>-<name>-<ordinal>` from
 * volumeClaimTemplates, created in order (OrderedReady) or all at once (Parallel), scaled down from
 * the highest ordinal, rolled one pod at a time from the highest ordinal down to the partition.
 */
export class StatefulSetController implements Controller {
  readonly name = 'statefulset-controller'
  readonly triggers: Controller['triggers'] = {
    'apps/statefulsets': (e: StoreEvent) => [keyOf(e.object)],
    '/pods': (e: StoreEvent) => ownerKeys(e, 'StatefulSet'),
  }

  constructor(private readonly ctx: ControllerContext) {}

  start(): void { for (const o of this.ctx.store.list('apps/statefulsets')) this.ctx.enqueue(this, keyOf(o)) }

  reconcile(key: string): void {
    const [ns, name] = splitKey(key)
    const stsRt = this.ctx.rt('apps', 'statefulsets')
    const podsRt = this.ctx.rt('', 'pods')
    const sts = this.ctx.api.tryGet(stsRt, ns, name)
    if (!sts || sts.metadata.deletionTimestamp) return
    const replicas: number = sts.spec?.replicas ?? 1
    const parallel = sts.spec?.podManagementPolicy === 'Parallel'
    const updateRevision = `${name}-${safeHash(sts.spec.template)}`
    const currentRevision: string = sts.status?.currentRevision ?? updateRevision
    const partition: number = sts.spec?.updateStrategy?.rollingUpdate?.partition ?? 0
    const onDelete = sts.spec?.updateStrategy?.type === 'OnDelete'
    const pods = ownedBy(this.ctx, podsRt, ns, sts.metadata.uid!)
    const byOrdinal = new Map<number, KObject>()
    for (const p of pods) {
      const m = new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-(\\d+)$`).exec(p.metadata.name!)
      if (m) byOrdinal.set(Number(m[1]), p)
    }
    const healthy = (p: KObject | undefined) => !!p && !p.metadata.deletionTimestamp && isPodReady(p)
    let blocked = false
    for (let i = 0; i < replicas; i++) {
      const p = byOrdinal.get(i)
      if (p) {
        if (!healthy(p) && !parallel) blocked = true
        continue
      }
      if (blocked) break
      const revision = i < partition && currentRevision !== updateRevision ? currentRevision : updateRevision
      this.ensureClaims(sts, i)
      const created = this.createPod(sts, i, revision)
      if (created) byOrdinal.set(i, created)
      if (!parallel) blocked = true
    }
    // Scale down from the highest ordinal, one at a time unless Parallel.
    const extra = [...byOrdinal.keys()].filter((i) => i >= replicas).sort((a, b) => b - a)
    for (const i of extra) {
      const p = byOrdinal.get(i)!
      if (p.metadata.deletionTimestamp) { if (!parallel) break; continue }
      this.deletePod(sts, p)
      if (!parallel) break
    }
    // Rolling update: replace the highest-ordinal outdated pod once every pod is Ready.
    if (!onDelete && !extra.length) {
      const all = [...byOrdinal.entries()].filter(([i]) => i < replicas)
      const allReady = all.length === replicas && all.every(([, p]) => healthy(p))
      const outdated = all.filter(([i, p]) => i >= partition && p.metadata.labels?.[revisionLabel] !== updateRevision).sort((a, b) => b[0] - a[0])
      if (allReady && outdated.length) this.deletePod(sts, outdated[0][1])
    }
    const live = [...byOrdinal.values()].filter((p) => !p.metadata.deletionTimestamp)
    const updated = live.filter((p) => p.metadata.labels?.[revisionLabel] === updateRevision).length
    const ready = live.filter(isPodReady).length
    const done = updated === replicas && live.length === replicas
    const status: JsonObject = {
      observedGeneration: sts.metadata.generation, replicas: live.length, readyReplicas: ready, currentReplicas: done ? updated : live.length - updated,
      updatedReplicas: updated, availableReplicas: ready, currentRevision: done ? updateRevision : currentRevision, updateRevision, collisionCount: 0,
    }
    for (const k of ['readyReplicas', 'currentReplicas', 'updatedReplicas']) if (!status[k]) delete status[k]
    const fresh = this.ctx.api.get(stsRt, ns, name)
    fresh.status = status
    this.ctx.api.update(stsRt, ns, name, fresh, { fieldManager: 'kube-controller-manager', subresource: 'status' })
  }

  private ensureClaims(sts: KObject, i: number): void {
    const pvcRt = this.ctx.rt('', 'persistentvolumeclaims')
    const ns = sts.metadata.namespace
    const deleteWithSet = sts.spec?.persistentVolumeClaimRetentionPolicy?.whenDeleted === 'Delete'
    for (const t of (sts.spec?.volumeClaimTemplates ?? []) as JsonObject[]) {
      const claim = `${t.metadata?.name}-${sts.metadata.name}-${i}`
      if (this.ctx.api.tryGet(pvcRt, ns, claim)) continue
      const pvc: KObject = {
        metadata: { name: claim, namespace: ns, labels: { ...(sts.spec.selector?.matchLabels ?? {}), ...(t.metadata?.labels ?? {}) }, ...(deleteWithSet ? { ownerReferences: [ownerRef(sts)] } : {}) },
        spec: clone(t.spec ?? {}),
      }
      try { this.ctx.api.create(pvcRt, ns, pvc, { fieldManager: 'kube-controller-manager' }) } catch (e) { if (!(e instanceof ApiError && e.code === 409)) throw e }
      this.ctx.events.record(sts, 'Normal', 'SuccessfulCreate', `create Claim ${claim} Pod ${sts.metadata.name}-${i} in StatefulSet ${sts.metadata.name} success`, 'statefulset-controller')
    }
  }

  private createPod(sts: KObject, i: number, revision: string): KObject | undefined {
    const podName = `${sts.metadata.name}-${i}`
    const tmplSpec = clone(sts.spec.template?.spec ?? {})
    const volumes = [...((tmplSpec.volumes ?? []) as JsonObject[])]
    for (const t of (sts.spec?.volumeClaimTemplates ?? []) as JsonObject[]) {
      if (!volumes.some((v) => v.name === t.metadata?.name)) volumes.push({ name: t.metadata?.name, persistentVolumeClaim: { claimName: `${t.metadata?.name}-${sts.metadata.name}-${i}` } })
    }
    const spec: JsonObject = { ...tmplSpec, hostname: podName }
    if (volumes.length) spec.volumes = volumes
    if (sts.spec?.serviceName) spec.subdomain = sts.spec.serviceName
    const p = createPodFromTemplate(this.ctx, sts, '', {
      name: podName,
      labels: { [revisionLabel]: revision, 'statefulset.kubernetes.io/pod-name': podName, 'apps.kubernetes.io/pod-index': String(i) },
      spec,
    })
    if (p) this.ctx.events.record(sts, 'Normal', 'SuccessfulCreate', `create Pod ${podName} in StatefulSet ${sts.metadata.name} successful`, 'statefulset-controller')
    return p
  }

  private deletePod(sts: KObject, p: KObject): void {
    try { this.ctx.api.delete(this.ctx.rt('', 'pods'), p.metadata.namespace, p.metadata.name!, {}) } catch (e) { if (!(e instanceof ApiError && e.code === 404)) throw e }
    this.ctx.events.record(sts, 'Normal', 'SuccessfulDelete', `delete Pod ${p.metadata.name} in StatefulSet ${sts.metadata.name} successful`, 'statefulset-controller')
  }
}
