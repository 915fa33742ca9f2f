import { containerUsage } from '../metrics.ts'
import { ApiError } from '../status.ts'
import type { StoreEvent } from '../store.ts'
import { labelsMatchSelector, parseQuantity, timestamp, type JsonObject, type KObject } from '../util.ts'
import { keyOf, splitKey, type Controller, type ControllerContext } from './manager.ts'

export const utilizationAnnotation = 'kube-sim.io/cpu-utilization'

/**
 * HorizontalPodAutoscaler (autoscaling/v2): reads the target's scale, computes CPU utilization from
 * the simulated metrics (or the HPA annotation `kube-sim.io/cpu-utilization: "<percent>"`), and
 * scales within [minReplicas, maxReplicas] using the documented ratio formula with a 10% tolerance.
 */
export class HpaController implements Controller {
  readonly name = 'horizontal-pod-autoscaler'
  readonly triggers: Controller['triggers'] = {
    'autoscaling/horizontalpodautoscalers': (e: StoreEvent) => [keyOf(e.object)],
  }

  constructor(private readonly ctx: ControllerContext) {}

  start(): void { for (const o of this.ctx.store.list('autoscaling/horizontalpodautoscalers')) this.ctx.enqueue(this, keyOf(o)) }

  reconcile(key: string): void {
    const [ns, name] = splitKey(key)
    const hpaRt = this.ctx.rt('autoscaling', 'horizontalpodautoscalers')
    const hpa = this.ctx.api.tryGet(hpaRt, ns, name)
    if (!hpa || hpa.metadata.deletionTimestamp) return
    this.ctx.after(this, key, this.ctx.timing.hpaSyncMs)
    const ref = hpa.spec?.scaleTargetRef as JsonObject | undefined
    const targetRt = ref ? this.ctx.registry.byKind(ref.apiVersion ?? 'apps/v1', ref.kind) : undefined
    const now = timestamp()
    const prev = (hpa.status?.conditions ?? []) as JsonObject[]
    const cond = (type: string, ok: boolean, reason: string, message: string) => ({ type, status: ok ? 'True' : 'False', lastTransitionTime: prev.find((c) => c.type === type && c.status === (ok ? 'True' : 'False'))?.lastTransitionTime ?? now, reason, message })
    let target: KObject | undefined
    try { target = targetRt && this.ctx.api.getScale(targetRt, ns, ref!.name) } catch (e) { if (!(e instanceof ApiError)) throw e }
    if (!targetRt || !target) {
      this.writeStatus(hpa, { currentReplicas: 0, desiredReplicas: 0, conditions: [cond('AbleToScale', false, 'FailedGetScale', `the HPA controller was unable to get the target's current scale: ${ref?.kind}/${ref?.name} not found`)] })
      return
    }
    const current: number = target.spec.replicas ?? 0
    const min: number = hpa.spec?.minReplicas ?? 1
    const max: number = hpa.spec?.maxReplicas ?? current
    const metric = ((hpa.spec?.metrics ?? []) as JsonObject[]).find((m) => m.type === 'Resource' && m.resource?.name === 'cpu')
    const targetUtil: number | undefined = metric?.resource?.target?.averageUtilization
    const util = this.utilization(hpa, ns, target.status?.selector ?? '')
    let desired = current
    if (targetUtil && util !== undefined && current > 0) {
      const ratio = util / targetUtil
      if (Math.abs(ratio - 1) > 0.1) desired = Math.ceil(current * ratio)
    }
    const limited = desired < min || desired > max
    desired = Math.min(max, Math.max(min, desired))
    if (current === 0) desired = 0 // scaling from zero is disabled, as upstream
    if (desired !== current) {
      this.ctx.api.updateScale(targetRt, ns, ref!.name, { spec: { replicas: desired } }, { fieldManager: 'horizontal-pod-autoscaler' })
      this.ctx.events.record(hpa, 'Normal', 'SuccessfulRescale', `New size: ${desired}; reason: ${util !== undefined && targetUtil ? `cpu resource utilization (percentage of request) ${desired > current ? 'above' : 'below'} target` : 'Current number of replicas below Spec.MinReplicas'}`, 'horizontal-pod-autoscaler')
    }
    const status: JsonObject = {
      currentReplicas: current, desiredReplicas: desired,
      conditions: [
        cond('AbleToScale', true, 'ReadyForNewScale', 'recommended size matches current size'),
        util !== undefined && targetUtil ? cond('ScalingActive', true, 'ValidMetricFound', 'the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)') : cond('ScalingActive', false, 'FailedGetResourceMetric', 'the HPA was unable to compute the replica count: failed to get cpu utilization'),
        cond('ScalingLimited', limited, limited ? (desired === max ? 'TooManyReplicas' : 'TooFewReplicas') : 'DesiredWithinRange', limited ? 'the desired replica count is beyond the allowed range' : 'the desired count is within the acceptable range'),
      ],
    }
    if (desired !== current) status.lastScaleTime = now
    else if (hpa.status?.lastScaleTime) status.lastScaleTime = hpa.status.lastScaleTime
    if (util !== undefined) status.currentMetrics = [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: util, averageValue: `${Math.round(util)}m` } } }]
    this.writeStatus(hpa, status)
  }

  private utilization(hpa: KObject, ns: string | undefined, selector: string): number | undefined {
    const forced = hpa.metadata.annotations?.[utilizationAnnotation]
    if (forced !== undefined) return Number(forced)
    const labels = Object.fromEntries(selector.split(',').filter((p) => p.includes('=')).map((p) => p.split('=') as [string, string]))
    const pods = this.ctx.store.list('/pods', ns).filter((p) => p.status?.phase === 'Running' && labelsMatchSelector(p.metadata.labels, { matchLabels: labels }))
    let used = 0
    let requested = 0
    for (const p of pods) {
      for (const c of (p.spec?.containers ?? []) as JsonObject[]) {
        const req = parseQuantity(c.resources?.requests?.cpu)
        if (!req) return undefined
        requested += req
        used += containerUsage(p, c.name).cpu
      }
    }
    return requested ? Math.round((used / requested) * 100) : undefined
  }

  private writeStatus(hpa: KObject, status: JsonObject): void {
    const hpaRt = this.ctx.rt('autoscaling', 'horizontalpodautoscalers')
    const fresh = this.ctx.api.get(hpaRt, hpa.metadata.namespace, hpa.metadata.name!)
    fresh.status = { observedGeneration: hpa.metadata.generation, ...status }
    this.ctx.api.update(hpaRt, hpa.metadata.namespace, hpa.metadata.name!, fresh, { fieldManager: 'horizontal-pod-autoscaler', subresource: 'status' })
  }
}
