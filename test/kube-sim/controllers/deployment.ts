import { ApiError } from '../status.ts'
import type { StoreEvent } from '../store.ts'
import { clone, deepEqual, safeHash, type JsonObject, type KObject } from '../util.ts'
import { condition } from './replicaset.ts'
import { keyOf, ownedBy, ownerKeys, ownerRef, splitKey, type Controller, type ControllerContext } from './manager.ts'

const hashLabel = 'pod-template-hash'
const revisionAnn = 'deployment.kubernetes.io/revision'

/** `25%` of n, rounded up for surge and down for unavailability, as the deployment controller does. */
function resolve(v: unknown, n: number, roundUp: boolean): number {
  if (typeof v === 'number') return v
  if (typeof v === 'string' && v.endsWith('%')) {
    const x = (parseFloat(v) / 100) * n
    return roundUp ? Math.ceil(x) : Math.floor(x)
  }
  return Number(v ?? 0)
}

function templateWithoutHash(t: JsonObject | undefined): JsonObject {
  const c = clone(t ?? {})
  if (c.metadata?.labels) delete c.metadata.labels[hashLabel]
  return c
}

/**
 * Deployments → ReplicaSets: one ReplicaSet per distinct pod template, named `<deploy>-<hash>`,
 * rolled with maxSurge/maxUnavailable (or Recreate), revisions in annotations, status and conditions
 * that `kubectl rollout status` understands.
 */
export class DeploymentController implements Controller {
  readonly name = 'deployment-controller'
  readonly triggers: Controller['triggers'] = {
    'apps/deployments': (e: StoreEvent) => [keyOf(e.object)],
    'apps/replicasets': (e: StoreEvent) => ownerKeys(e, 'Deployment'),
  }

  constructor(private readonly ctx: ControllerContext) {}

  start(): void { for (const o of this.ctx.store.list('apps/deployments')) this.ctx.enqueue(this, keyOf(o)) }

  reconcile(key: string): void {
    const [ns, name] = splitKey(key)
    const dRt = this.ctx.rt('apps', 'deployments')
    const rsRt = this.ctx.rt('apps', 'replicasets')
    let d = this.ctx.api.tryGet(dRt, ns, name)
    if (!d || d.metadata.deletionTimestamp) return
    const replicas: number = d.spec?.replicas ?? 1
    let all = ownedBy(this.ctx, rsRt, ns, d.metadata.uid!)
    const maxRevision = Math.max(0, ...all.map((r) => Number(r.metadata.annotations?.[revisionAnn] ?? 0)))
    let newRs = all.find((r) => deepEqual(templateWithoutHash(r.spec?.template), templateWithoutHash(d!.spec?.template)))

    if (!newRs && !d.spec?.paused) {
      const hash = safeHash(templateWithoutHash(d.spec.template))
      const tmpl = clone(d.spec.template)
      tmpl.metadata ??= {}
      tmpl.metadata.labels = { ...(tmpl.metadata.labels ?? {}), [hashLabel]: hash }
      const selector = clone(d.spec.selector ?? {})
      selector.matchLabels = { ...(selector.matchLabels ?? {}), [hashLabel]: hash }
      const rs: KObject = {
        apiVersion: 'apps/v1', kind: 'ReplicaSet',
        metadata: {
          name: `${name}-${hash}`, namespace: ns, labels: tmpl.metadata.labels,
          annotations: { [revisionAnn]: String(maxRevision + 1), 'deployment.kubernetes.io/desired-replicas': String(replicas), 'deployment.kubernetes.io/max-replicas': String(replicas + resolve(d.spec.strategy?.rollingUpdate?.maxSurge, replicas, true)) },
          ownerReferences: [ownerRef(d)],
        },
        spec: { replicas: 0, selector, template: tmpl, ...(d.spec.minReadySeconds ? { minReadySeconds: d.spec.minReadySeconds } : {}) },
      }
      try {
        newRs = this.ctx.api.create(rsRt, ns, rs, { fieldManager: 'kube-controller-manager' })
      } catch (e) {
        if (e instanceof ApiError && e.code === 409) { this.ctx.after(this, key, 10); return }
        throw e
      }
      all = [...all, newRs]
    } else if (newRs && Number(newRs.metadata.annotations?.[revisionAnn] ?? 0) < maxRevision) {
      // Rolling back to an older template makes its ReplicaSet the newest revision again.
      newRs.metadata.annotations = { ...(newRs.metadata.annotations ?? {}), [revisionAnn]: String(maxRevision + 1) }
      newRs = this.ctx.api.update(rsRt, ns, newRs.metadata.name!, newRs, { fieldManager: 'kube-controller-manager' })
      all = all.map((r) => (r.metadata.uid === newRs!.metadata.uid ? newRs! : r))
    }
    const olds = all.filter((r) => r.metadata.uid !== newRs?.metadata.uid)

    if (newRs && d.metadata.annotations?.[revisionAnn] !== newRs.metadata.annotations?.[revisionAnn]) {
      d.metadata.annotations = { ...(d.metadata.annotations ?? {}), [revisionAnn]: newRs.metadata.annotations![revisionAnn] }
      d = this.ctx.api.update(dRt, ns, name, d, { fieldManager: 'kube-controller-manager' })
    }

    if (!d.spec?.paused && newRs) {
      const scale = (rs: KObject, to: number) => {
        const from = rs.spec?.replicas ?? 0
        if (from === to) return
        rs.spec.replicas = to
        rs.metadata.annotations = { ...(rs.metadata.annotations ?? {}), 'deployment.kubernetes.io/desired-replicas': String(replicas) }
        this.ctx.api.update(rsRt, ns, rs.metadata.name!, rs, { fieldManager: 'kube-controller-manager' })
        this.ctx.events.record(d!, 'Normal', 'ScalingReplicaSet', `Scaled ${to > from ? 'up' : 'down'} replica set ${rs.metadata.name} from ${from} to ${to}`, 'deployment-controller')
      }
      const oldPods = olds.reduce((n, r) => n + (r.status?.replicas ?? 0), 0)
      if (d.spec.strategy?.type === 'Recreate') {
        for (const r of olds) scale(r, 0)
        if (oldPods === 0) scale(newRs, replicas)
      } else {
        let maxSurge = resolve(d.spec.strategy?.rollingUpdate?.maxSurge, replicas, true)
        let maxUnavailable = resolve(d.spec.strategy?.rollingUpdate?.maxUnavailable, replicas, false)
        if (maxSurge === 0 && maxUnavailable === 0) maxUnavailable = 1
        if (maxUnavailable > replicas) maxUnavailable = replicas
        maxSurge = Math.max(0, maxSurge)
        const specTotal = all.reduce((n, r) => n + (r.spec?.replicas ?? 0), 0)
        const cur = newRs.spec?.replicas ?? 0
        if (cur > replicas) scale(newRs, replicas)
        else if (cur < replicas) {
          const room = replicas + maxSurge - Math.max(specTotal, all.reduce((n, r) => n + (r.status?.replicas ?? 0), 0))
          if (room > 0) scale(newRs, Math.min(replicas, cur + room))
        }
        // Scale old ReplicaSets down: unavailable pods go freely, available ones only above minAvailable.
        const minAvailable = replicas - maxUnavailable
        const available = all.reduce((n, r) => n + (r.status?.availableReplicas ?? 0), 0)
        let budget = Math.max(0, available - minAvailable)
        const newUnavailable = (newRs.spec?.replicas ?? 0) - (newRs.status?.availableReplicas ?? 0)
        budget = Math.max(0, budget - Math.max(0, newUnavailable - maxUnavailable))
        for (const r of [...olds].sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? ''))) {
          const have = r.spec?.replicas ?? 0
          if (!have) continue
          const unhealthy = Math.max(0, have - (r.status?.availableReplicas ?? 0))
          const healthyCut = Math.min(have - unhealthy, budget)
          budget -= healthyCut
          scale(r, have - unhealthy - healthyCut)
        }
      }
      // Keep revisionHistoryLimit old, empty ReplicaSets.
      const limit = d.spec?.revisionHistoryLimit ?? 10
      const empty = olds.filter((r) => (r.spec?.replicas ?? 0) === 0 && (r.status?.replicas ?? 0) === 0)
        .sort((a, b) => Number(a.metadata.annotations?.[revisionAnn] ?? 0) - Number(b.metadata.annotations?.[revisionAnn] ?? 0))
      for (const r of empty.slice(0, Math.max(0, empty.length - limit))) {
        try { this.ctx.api.delete(rsRt, ns, r.metadata.name!, {}) } catch (e) { if (!(e instanceof ApiError && e.code === 404)) throw e }
      }
    }
    this.updateStatus(d, ns, name)
  }

  private updateStatus(d: KObject, ns: string | undefined, name: string): void {
    const dRt = this.ctx.rt('apps', 'deployments')
    const rsRt = this.ctx.rt('apps', 'replicasets')
    const all = ownedBy(this.ctx, rsRt, ns, d.metadata.uid!)
    const newRs = all.find((r) => deepEqual(templateWithoutHash(r.spec?.template), templateWithoutHash(d.spec?.template)))
    const replicas: number = d.spec?.replicas ?? 1
    const sum = (f: (r: KObject) => number) => all.reduce((n, r) => n + f(r), 0)
    const total = sum((r) => r.status?.replicas ?? 0)
    const ready = sum((r) => r.status?.readyReplicas ?? 0)
    const available = sum((r) => r.status?.availableReplicas ?? 0)
    const updated = newRs?.status?.replicas ?? 0
    const maxUnavailable = d.spec?.strategy?.type === 'Recreate' ? 0 : resolve(d.spec?.strategy?.rollingUpdate?.maxUnavailable, replicas, false)
    const complete = updated === replicas && total === replicas && available === replicas && (newRs?.spec?.replicas ?? 0) === replicas
    const prev = d.status?.conditions as JsonObject[] | undefined
    const availableOk = available >= replicas - maxUnavailable
    const conditions: JsonObject[] = [
      condition(prev, 'Available', availableOk, availableOk ? 'MinimumReplicasAvailable' : 'MinimumReplicasUnavailable', availableOk ? 'Deployment has minimum availability.' : 'Deployment does not have minimum availability.', false),
    ]
    const deadline = (d.spec?.progressDeadlineSeconds ?? 600) * 1000
    const prevProgress = (prev ?? []).find((c) => c.type === 'Progressing')
    if (complete) conditions.push(condition(prev, 'Progressing', true, 'NewReplicaSetAvailable', `ReplicaSet "${newRs?.metadata.name}" has successfully progressed.`, false))
    else if (prevProgress && prevProgress.reason !== 'NewReplicaSetAvailable' && Date.now() - Date.parse(prevProgress.lastUpdateTime) > deadline) {
      conditions.push(condition(prev, 'Progressing', false, 'ProgressDeadlineExceeded', `ReplicaSet "${newRs?.metadata.name}" has timed out progressing.`, false))
    } else {
      const msg = `ReplicaSet "${newRs?.metadata.name ?? name}" is progressing.`
      conditions.push(condition(prev, 'Progressing', true, 'ReplicaSetUpdated', msg, prevProgress?.message !== msg || prevProgress?.status !== 'True'))
      this.ctx.after(this, `${ns ?? ''}/${name}`, deadline + 50)
    }
    const status: JsonObject = { observedGeneration: d.metadata.generation, replicas: total, updatedReplicas: updated, readyReplicas: ready, availableReplicas: available, unavailableReplicas: Math.max(0, replicas - available), conditions }
    for (const k of ['replicas', 'updatedReplicas', 'readyReplicas', 'availableReplicas', 'unavailableReplicas']) if (!status[k]) delete status[k]
    const fresh = this.ctx.api.get(dRt, ns, name)
    if (fresh.metadata.uid !== d.metadata.uid) return
    fresh.status = status
    this.ctx.api.update(dRt, ns, name, fresh, { fieldManager: 'kube-controller-manager', subresource: 'status' })
  }
}
