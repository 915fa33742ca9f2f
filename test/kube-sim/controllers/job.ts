import { ApiError } from '../status.ts'
import type { StoreEvent } from '../store.ts'
import { timestamp, type JsonObject, type KObject } from '../util.ts'
import { isPodReady, keyOf, ownedBy, ownerKeys, splitKey, type Controller, type ControllerContext } from './manager.ts'
import { createPodFromTemplate } from './replicaset.ts'

/**
 * Jobs run pods (up to `parallelism`) until `completions` succeed, or fail once more pods failed than
 * `backoffLimit` allows or `activeDeadlineSeconds` passes. Conditions are those of Kubernetes 1.31+
 * (SuccessCriteriaMet/FailureTarget, then Complete/Failed). `ttlSecondsAfterFinished` is honoured.
 */
export class JobController implements Controller {
  readonly name = 'job-controller'
  readonly triggers: Controller['triggers'] = {
    'batch/jobs': (e: StoreEvent) => [keyOf(e.object)],
    '/pods': (e: StoreEvent) => ownerKeys(e, 'Job'),
  }

  constructor(private readonly ctx: ControllerContext) {}

  start(): void { for (const o of this.ctx.store.list('batch/jobs')) this.ctx.enqueue(this, keyOf(o)) }

  reconcile(key: string): void {
    const [ns, name] = splitKey(key)
    const jobsRt = this.ctx.rt('batch', 'jobs')
    const podsRt = this.ctx.rt('', 'pods')
    const job = this.ctx.api.tryGet(jobsRt, ns, name)
    if (!job || job.metadata.deletionTimestamp) return
    const conds = (job.status?.conditions ?? []) as JsonObject[]
    const finished = conds.find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True')
    if (finished) { this.ttl(job, key); return }
    const spec = job.spec as JsonObject
    const pods = ownedBy(this.ctx, podsRt, ns, job.metadata.uid!)
    const active = pods.filter((p) => !p.metadata.deletionTimestamp && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed')
    const succeeded = pods.filter((p) => p.status?.phase === 'Succeeded').length
    const failed = pods.filter((p) => p.status?.phase === 'Failed').length
    const now = timestamp()
    const status: JsonObject = { ...(job.status ?? {}) }
    const killActive = () => { for (const p of active) try { this.ctx.api.delete(podsRt, ns, p.metadata.name!, {}) } catch (e) { if (!(e instanceof ApiError)) throw e } }
    const cond = (type: string, reason: string, message: string) => ({ type, status: 'True', lastProbeTime: now, lastTransitionTime: now, reason, message })

    if (spec.suspend) {
      killActive()
      if (!conds.some((c) => c.type === 'Suspended' && c.status === 'True')) status.conditions = [...conds.filter((c) => c.type !== 'Suspended'), cond('Suspended', 'JobSuspended', 'Job suspended')]
      Object.assign(status, { active: 0 })
      this.write(job, status)
      return
    }
    status.startTime ??= now
    if (conds.some((c) => c.type === 'Suspended' && c.status === 'True')) status.conditions = conds.map((c) => (c.type === 'Suspended' ? { ...c, status: 'False', reason: 'JobResumed', message: 'Job resumed', lastTransitionTime: now } : c))
    const completions: number | undefined = spec.completions ?? undefined
    const parallelism: number = spec.parallelism ?? 1
    const backoffLimit: number = spec.backoffLimit ?? 6
    const deadline = spec.activeDeadlineSeconds !== undefined && Date.parse(status.startTime) + spec.activeDeadlineSeconds * 1000 <= Date.now()
    const complete = completions !== undefined ? succeeded >= completions : succeeded > 0 && active.length === 0
    if (complete) {
      status.conditions = [...(status.conditions ?? conds), cond('SuccessCriteriaMet', 'CompletionsReached', 'Reached expected number of succeeded pods'), cond('Complete', 'CompletionsReached', 'Reached expected number of succeeded pods')]
      status.completionTime = now
      killActive()
      this.ctx.events.record(job, 'Normal', 'Completed', 'Job completed', 'job-controller')
    } else if (failed > backoffLimit || deadline) {
      const reason = deadline ? 'DeadlineExceeded' : 'BackoffLimitExceeded'
      const message = deadline ? 'Job was active longer than specified deadline' : 'Job has reached the specified backoff limit'
      status.conditions = [...(status.conditions ?? conds), cond('FailureTarget', reason, message), cond('Failed', reason, message)]
      killActive()
      this.ctx.events.record(job, 'Warning', reason, message, 'job-controller')
    } else {
      const remaining = completions !== undefined ? completions - succeeded - active.length : succeeded > 0 ? 0 : parallelism - active.length
      const toCreate = Math.max(0, Math.min(parallelism - active.length, remaining))
      const used = new Set(pods.filter((p) => p.status?.phase !== 'Failed' && !p.metadata.deletionTimestamp).map((p) => p.metadata.annotations?.['batch.kubernetes.io/job-completion-index']))
      for (let i = 0; i < toCreate; i++) {
        const extra: { annotations?: Record<string, string>; labels?: Record<string, string> } = {}
        let prefix = `${name}-`
        if (spec.completionMode === 'Indexed') {
          let idx = 0
          while (used.has(String(idx))) idx++
          used.add(String(idx))
          extra.annotations = { 'batch.kubernetes.io/job-completion-index': String(idx) }
          extra.labels = { 'batch.kubernetes.io/job-completion-index': String(idx) }
          prefix = `${name}-${idx}-`
        }
        const p = createPodFromTemplate(this.ctx, job, prefix, extra)
        if (p) { active.push(p); this.ctx.events.record(job, 'Normal', 'SuccessfulCreate', `Created pod: ${p.metadata.name}`, 'job-controller') }
      }
      if (spec.activeDeadlineSeconds !== undefined) this.ctx.after(this, key, Date.parse(status.startTime) + spec.activeDeadlineSeconds * 1000 - Date.now() + 5)
    }
    const stillActive = complete || failed > backoffLimit || deadline ? 0 : active.length
    Object.assign(status, { active: stillActive, succeeded, failed, ready: active.filter(isPodReady).length, terminating: 0, uncountedTerminatedPods: {} })
    for (const k of ['active', 'succeeded', 'failed']) if (!status[k]) delete status[k]
    this.write(job, status)
  }

  private write(job: KObject, status: JsonObject): void {
    const jobsRt = this.ctx.rt('batch', 'jobs')
    const fresh = this.ctx.api.get(jobsRt, job.metadata.namespace, job.metadata.name!)
    fresh.status = status
    this.ctx.api.update(jobsRt, job.metadata.namespace, job.metadata.name!, fresh, { fieldManager: 'kube-controller-manager', subresource: 'status' })
  }

  private ttl(job: KObject, key: string): void {
    const ttl = job.spec?.ttlSecondsAfterFinished
    const finishedAt = ((job.status?.conditions ?? []) as JsonObject[]).find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True')?.lastTransitionTime
    if (ttl === undefined || !finishedAt) return
    const due = Date.parse(finishedAt) + ttl * 1000 - Date.now()
    if (due > 0) { this.ctx.after(this, key, due); return }
    try { this.ctx.api.delete(this.ctx.rt('batch', 'jobs'), job.metadata.namespace, job.metadata.name!, { propagationPolicy: 'Background' }) } catch (e) { if (!(e instanceof ApiError)) throw e }
  }
}
