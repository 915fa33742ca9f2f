// The periodic health check over every registered cluster (spec: every 60 s). Checks run a few at a time,
// each bounded by the cluster timeout, so an unreachable, slow or undecryptable cluster never delays or
// fails the others. A round that is still running when the next is due is not doubled up. Among replicas
// each checks only the clusters whose lease it holds (API.md §11), so a cluster is checked once a round.
import cron, { type ScheduledTask } from 'node-cron'
import type { ClusterDoc } from '../repositories/clusters.ts'

export interface HealthTarget {
  allClusters(): AsyncIterable<ClusterDoc>
  checkHealth(doc: ClusterDoc): Promise<'connected' | 'error'>
}

export interface HealthRound { checked: number; connected: number; failed: number }

export class ClusterHealthMonitor {
  private task: ScheduledTask | undefined
  private round: Promise<HealthRound> | undefined

  constructor(private readonly target: HealthTarget, private readonly concurrency: number, private readonly owns: (clusterId: string) => boolean = () => true) {}

  start(schedule: string): void {
    this.task = cron.schedule(schedule, () => { void this.checkAll().catch(() => undefined) }, { noOverlap: true, unref: true, name: 'cluster-health' })
  }

  async stop(): Promise<void> {
    await this.task?.destroy()
    await this.round?.catch(() => undefined)
  }

  /** One round over all clusters; concurrent callers share the round in progress. */
  checkAll(): Promise<HealthRound> {
    this.round ??= this.run().finally(() => { this.round = undefined })
    return this.round
  }

  private async run(): Promise<HealthRound> {
    const result: HealthRound = { checked: 0, connected: 0, failed: 0 }
    const inFlight = new Set<Promise<void>>()
    for await (const doc of this.target.allClusters()) {
      if (!this.owns(doc._id)) continue
      const check = this.target.checkHealth(doc)
        .then((status) => { result[status === 'connected' ? 'connected' : 'failed']++ }, () => { result.failed++ })
        .finally(() => { result.checked++; inFlight.delete(check) })
      inFlight.add(check)
      if (inFlight.size >= this.concurrency) await Promise.race(inFlight)
    }
    await Promise.all(inFlight)
    return result
  }
}
