import { ApiError } from '../status.ts'
import type { StoreEvent } from '../store.ts'
import { clone, timestamp, type JsonObject, type KObject } from '../util.ts'
import { nextAfter, parseSchedule } from './cron.ts'
import { keyOf, ownedBy, ownerKeys, ownerRef, splitKey, type Controller, type ControllerContext } from './manager.ts'

/**
 * CronJobs create Jobs named `<cronjob>-<scheduled unix minutes>` on their schedule. Time runs on a
 * cron clock that advances one minute every `timing.cronMinuteMs` real milliseconds (real time by
 * default), so tests can see several runs of a `* * * * *` schedule in a second.
 */
export class CronJobController implements Controller {
  readonly name = 'cronjob-controller'
  readonly triggers: Controller['triggers'] = {
    'batch/cronjobs': (e: StoreEvent) => [keyOf(e.object)],
    'batch/jobs': (e: StoreEvent) => ownerKeys(e, 'CronJob'),
  }
  private readonly epoch = Date.now()

  constructor(private readonly ctx: ControllerContext) {}

  start(): void { for (const o of this.ctx.store.list('batch/cronjobs')) this.ctx.enqueue(this, keyOf(o)) }

  private get scale(): number { return 60_000 / this.ctx.timing.cronMinuteMs }
  /** Cron-clock time for a real instant. */
  private virtual(real: number): number { return this.epoch + (real - this.epoch) * this.scale }
  private real(virtual: number): number { return this.epoch + (virtual - this.epoch) / this.scale }

  reconcile(key: string): void {
    const [ns, name] = splitKey(key)
    const cjRt = this.ctx.rt('batch', 'cronjobs')
    const jobsRt = this.ctx.rt('batch', 'jobs')
    const cj = this.ctx.api.tryGet(cjRt, ns, name)
    if (!cj || cj.metadata.deletionTimestamp) return
    const jobs = ownedBy(this.ctx, jobsRt, ns, cj.metadata.uid!)
    const finished = (j: KObject) => ((j.status?.conditions ?? []) as JsonObject[]).find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True')?.type as string | undefined
    const status: JsonObject = { ...(cj.status ?? {}) }
    let active = jobs.filter((j) => !finished(j) && !j.metadata.deletionTimestamp)
    const succeeded = jobs.filter((j) => finished(j) === 'Complete').sort((a, b) => (a.status?.completionTime ?? '').localeCompare(b.status?.completionTime ?? ''))
    if (succeeded.length) status.lastSuccessfulTime = succeeded[succeeded.length - 1].status?.completionTime

    let schedule
    try { schedule = parseSchedule(cj.spec.schedule) } catch (e) {
      this.ctx.events.record(cj, 'Warning', 'UnparseableSchedule', `unparseable schedule: "${cj.spec.schedule}" : ${(e as Error).message}`, 'cronjob-controller')
      return
    }
    const now = Date.now()
    const vnow = this.virtual(now)
    if (!cj.spec.suspend) {
      const since = status.lastScheduleTime ? Date.parse(status.lastScheduleTime) : this.virtual(Date.parse(cj.metadata.creationTimestamp!))
      // Only the most recent missed run is started, as the real controller does.
      let due: number | undefined
      for (let t = nextAfter(schedule, since); t !== undefined && t <= vnow; t = nextAfter(schedule, t)) due = t
      if (due !== undefined) {
        const policy = cj.spec.concurrencyPolicy ?? 'Allow'
        if (policy === 'Forbid' && active.length) {
          this.ctx.events.record(cj, 'Normal', 'JobAlreadyActive', 'Not starting job because prior execution is running and concurrency policy is Forbid', 'cronjob-controller')
        } else {
          if (policy === 'Replace') {
            for (const j of active) this.deleteJob(cj, j)
            active = []
          }
          const job = this.createJob(cj, due)
          if (job) active.push(job)
          status.lastScheduleTime = timestamp(due)
        }
      }
      const next = nextAfter(schedule, vnow)
      if (next !== undefined) this.ctx.after(this, key, Math.max(1, this.real(next) - now + 1))
    }
    // History limits: delete the oldest finished Jobs beyond them.
    const prune = (list: KObject[], limit: number) => { for (const j of list.slice(0, Math.max(0, list.length - limit))) this.deleteJob(cj, j) }
    prune(succeeded, cj.spec.successfulJobsHistoryLimit ?? 3)
    prune(jobs.filter((j) => finished(j) === 'Failed').sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '')), cj.spec.failedJobsHistoryLimit ?? 1)
    status.active = active.map((j) => ({ kind: 'Job', namespace: j.metadata.namespace, name: j.metadata.name, uid: j.metadata.uid, apiVersion: 'batch/v1', resourceVersion: j.metadata.resourceVersion }))
    if (!status.active.length) delete status.active
    const fresh = this.ctx.api.get(cjRt, ns, name)
    fresh.status = status
    this.ctx.api.update(cjRt, ns, name, fresh, { fieldManager: 'kube-controller-manager', subresource: 'status' })
  }

  private createJob(cj: KObject, scheduled: number): KObject | undefined {
    const tmpl = clone(cj.spec.jobTemplate ?? {})
    const jobName = `${cj.metadata.name}-${Math.floor(scheduled / 60_000)}`
    const job: KObject = {
      apiVersion: 'batch/v1', kind: 'Job',
      metadata: {
        name: jobName, namespace: cj.metadata.namespace, labels: { ...(tmpl.metadata?.labels ?? {}) },
        annotations: { ...(tmpl.metadata?.annotations ?? {}), 'batch.kubernetes.io/cronjob-scheduled-timestamp': new Date(scheduled).toISOString().replace(/\.\d{3}Z$/, 'Z') },
        ownerReferences: [ownerRef(cj)],
      },
      spec: tmpl.spec ?? {},
    }
    try {
      const created = this.ctx.api.create(this.ctx.rt('batch', 'jobs'), cj.metadata.namespace, job, { fieldManager: 'kube-controller-manager' })
      this.ctx.events.record(cj, 'Normal', 'SuccessfulCreate', `Created job ${jobName}`, 'cronjob-controller')
      return created
    } catch (e) {
      if (e instanceof ApiError && e.code === 409) return undefined
      if (e instanceof ApiError) { this.ctx.events.record(cj, 'Warning', 'FailedCreate', `Error creating job: ${e.message}`, 'cronjob-controller'); return undefined }
      throw e
    }
  }

  private deleteJob(cj: KObject, j: KObject): void {
    try { this.ctx.api.delete(this.ctx.rt('batch', 'jobs'), j.metadata.namespace, j.metadata.name!, { propagationPolicy: 'Background' }) } catch (e) { if (!(e instanceof ApiError)) throw e }
    this.ctx.events.record(cj, 'Normal', 'SuccessfulDelete', `Deleted job ${j.metadata.name}`, 'cronjob-controller')
  }
}
