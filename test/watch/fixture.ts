// What the watch tests share: the run fixture (app + simulator registered as "sim"), every `resource.status`
// and `workflow.synced` the bus carries from the start, bounded waits on them, and plain requests to the
// simulator for changing objects behind the service's back.
import { runFixture, node, type RunFixture } from '../runs/fixture.ts'
import { raw, waitFor } from '../kube-sim/test-helpers.ts'
import type { BusEvents } from '../../src/events/bus.ts'
import type { KubeSimOptions } from '../kube-sim/index.ts'
import type { testConfig } from '../../src/config.ts'

export type StatusEvent = BusEvents['resource.status']
export type SyncedEvent = BusEvents['workflow.synced']

export interface WatchFixture extends RunFixture {
  statuses: StatusEvent[]
  synced: SyncedEvent[]
  /** The first status event (from the start of the file) matching, waited for up to `timeoutMs`. */
  status(what: string, match: (e: StatusEvent) => boolean, timeoutMs?: number): Promise<StatusEvent>
  /** Runs the workflow and waits for the run to finish (any outcome). */
  deploy(workflowId: string): Promise<{ run_id: string; status: string }>
  patch(path: string, body: object): Promise<void>
  remove(path: string): Promise<void>
  /** The tracked resource record by kind and name. */
  record(kind: string, name: string, namespace?: string): Promise<any>
  /** The node's `data._status` as stored in the workflow document. */
  nodeStatus(workflowId: string, nodeId: string): Promise<any>
}

interface Teardown { teardown(fn: () => unknown): void }

// Fast pods keep the run short; the run does not wait for readiness (0), so the watch sees pending → running.
export async function watchFixture(t: Teardown, config: Parameters<typeof testConfig>[0] = {}, sim: KubeSimOptions = {}): Promise<WatchFixture> {
  const f = await runFixture(t, { RUN_READY_TIMEOUT_MS: 0, RUN_REPLY_WAIT_MS: 0, ...config }, { timing: { podStartMs: 150, podReadyMs: 150, ...sim.timing }, ...sim })
  const statuses: StatusEvent[] = []
  const synced: SyncedEvent[] = []
  f.app.bus.on('resource.status', (e) => statuses.push(e))
  f.app.bus.on('workflow.synced', (e) => synced.push(e))
  const ok = async (what: string, p: Promise<{ status: number; text: string }>) => {
    const res = await p
    if (res.status >= 300) throw new Error(`${what}: ${res.status} ${res.text}`)
  }
  return {
    ...f, statuses, synced,
    status: (what, match, timeoutMs = 20_000) => waitFor(what, () => statuses.find(match), timeoutMs),
    async deploy(workflowId) {
      const finished = f.app.bus.next('run.finished', (e) => e.workflow_id === workflowId)
      const res = await f.call(f.owner, 'POST', `/v1/api/workflows/${workflowId}/run`, {})
      if (res.status !== 200 && res.status !== 202) throw new Error(`run: ${res.status} ${JSON.stringify(res.body)}`)
      const done = await Promise.race([finished, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('run did not finish in 30 s')), 30_000).unref())])
      return { run_id: done.run_id, status: done.status }
    },
    patch: (path, body) => ok(`PATCH ${path}`, raw(f.sim, 'PATCH', path, { contentType: 'application/merge-patch+json', body })),
    remove: (path) => ok(`DELETE ${path}`, raw(f.sim, 'DELETE', path)),
    record: (kind, name, namespace) => f.app.db.collection('resources').findOne({ kind, name, ...(namespace && { namespace }) }),
    async nodeStatus(workflowId, nodeId) {
      const wf = await f.app.db.collection('workflows').findOne({ _id: workflowId as any })
      return wf?.nodes.find((n: { id: string }) => n.id === nodeId)?.data?._status
    },
  }
}

export const deployment = (id: string, name: string, namespace: string, image: string, replicas = 1) =>
  node(id, 'deployment', { name, namespace, image, port: 8080, replicas })
export const configmap = (id: string, name: string, namespace: string) => node(id, 'configmap', { name, namespace, data: { A: '1' } })

/** Each published change differs from the one before it, and starts where the previous one ended. */
export function publishedOnce(events: StatusEvent[]): string | null {
  const byResource = new Map<string, StatusEvent[]>()
  for (const e of events) byResource.set(e.resource_id, [...(byResource.get(e.resource_id) ?? []), e])
  for (const [id, list] of byResource) {
    for (let i = 0; i < list.length; i++) {
      const e = list[i]
      const prev = list[i - 1]
      // A new message with the same status is news (a new condition); the same status, counters and message are not.
      const same = prev && prev.new_status === e.new_status && prev.message === e.message && JSON.stringify(prev.counters) === JSON.stringify(e.counters)
      if (same) return `resource ${id}: ${e.new_status} published twice in a row`
      if (prev && e.old_status !== prev.new_status) return `resource ${id}: event ${i} starts at ${e.old_status}, the previous ended at ${prev.new_status}`
    }
  }
  return null
}
