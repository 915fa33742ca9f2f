import type { StoreEvent } from '../store.ts'
import { labelsMatchSelector, timestamp, type JsonObject } from '../util.ts'
import { isPodReady, keyOf, splitKey, type Controller, type ControllerContext } from './manager.ts'

function resolve(v: unknown, n: number): number {
  if (typeof v === 'string' && v.endsWith('%')) return Math.ceil((parseFloat(v) / 100) * n)
  return Number(v ?? 0)
}

/** PodDisruptionBudget status: expected/healthy pod counts and how many disruptions are allowed. */
export class PdbController implements Controller {
  readonly name = 'disruption-controller'
  readonly triggers: Controller['triggers']

  constructor(private readonly ctx: ControllerContext) {
    this.triggers = {
      'policy/poddisruptionbudgets': (e: StoreEvent) => [keyOf(e.object)],
      '/pods': (e: StoreEvent) => ctx.store.list('policy/poddisruptionbudgets', e.object.metadata.namespace).map(keyOf),
    }
  }

  start(): void { for (const o of this.ctx.store.list('policy/poddisruptionbudgets')) this.ctx.enqueue(this, keyOf(o)) }

  reconcile(key: string): void {
    const [ns, name] = splitKey(key)
    const rt = this.ctx.rt('policy', 'poddisruptionbudgets')
    const pdb = this.ctx.api.tryGet(rt, ns, name)
    if (!pdb || pdb.metadata.deletionTimestamp) return
    const pods = this.ctx.store.list('/pods', ns).filter((p) => !p.metadata.deletionTimestamp && labelsMatchSelector(p.metadata.labels, pdb.spec?.selector))
    const expected = pods.length
    const healthy = pods.filter(isPodReady).length
    const desired = pdb.spec?.minAvailable !== undefined ? resolve(pdb.spec.minAvailable, expected) : Math.max(0, expected - resolve(pdb.spec?.maxUnavailable ?? 0, expected))
    const allowed = Math.max(0, healthy - desired)
    const prev = ((pdb.status?.conditions ?? []) as JsonObject[]).find((c) => c.type === 'DisruptionAllowed')
    const ok = allowed > 0
    pdb.status = {
      observedGeneration: pdb.metadata.generation, disruptionsAllowed: allowed, currentHealthy: healthy, desiredHealthy: desired, expectedPods: expected,
      conditions: [{ type: 'DisruptionAllowed', status: ok ? 'True' : 'False', reason: ok ? 'SufficientPods' : 'InsufficientPods', message: '', observedGeneration: pdb.metadata.generation, lastTransitionTime: prev && prev.status === (ok ? 'True' : 'False') ? prev.lastTransitionTime : timestamp() }],
    }
    this.ctx.api.update(rt, ns, name, pdb, { fieldManager: 'kube-controller-manager', subresource: 'status' })
  }
}
