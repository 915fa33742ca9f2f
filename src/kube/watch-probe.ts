// Notices a cluster answering again while its watches wait in backoff. The backoff (5 s doubling to 60 s)
// protects a cluster that fails requests; but after an outage it also kept watches away for up to a minute
// after the cluster was back (measured: 40 s outage → 84 s without updates). So while any watch of a cluster
// is recovering, one cheap request per cluster (GET /version, the watches' own credentials, a short timeout)
// asks whether it answers; when it answered after having not answered, the waiting watches reconnect at once.
// Only a probe that failed counts as "not answering": a cluster that answers /version but fails the watch
// itself (500, 429, 403) is left to the backoff, so a probe can never turn the backoff into a busy loop.
import type { KubeConfig } from '@kubernetes/client-node'
import { performance } from 'node:perf_hooks'
import { k8s } from './client.ts'

export interface ProbeInfo {
  cluster: string
  answered: boolean
  /** How long the probe took. */
  ms: number
  /** Watches reconnected because the cluster answered again. */
  woke: number
}

export interface ProbeOptions {
  /** Between the end of one probe and the start of the next; 0 turns probing off. */
  intervalMs: number
  timeoutMs: number
  connect(cluster: string): Promise<KubeConfig>
  /** Watches of the cluster not (yet) back: waiting in backoff or trying to reconnect. */
  recovering(cluster: string): number
  /** Reconnects the cluster's watches waiting in backoff now, counting them afresh; answers how many. */
  wake(cluster: string): number
  onProbe?(info: ProbeInfo): void
}

/** GET /version through client-node, aborted after `timeoutMs` or by `signal`. */
export async function pingVersion(kc: KubeConfig, timeoutMs: number, signal: AbortSignal): Promise<void> {
  const { VersionApi, ServerConfiguration, createConfiguration } = await k8s()
  const cluster = kc.getCurrentCluster()
  if (!cluster) throw new Error('the kubeconfig names no current cluster')
  const config = createConfiguration({
    baseServer: new ServerConfiguration(cluster.server, {}),
    authMethods: { default: kc },
    promiseMiddleware: [{
      pre: async (ctx) => { ctx.setSignal(AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)])); return ctx },
      post: async (rsp) => rsp,
    }],
  })
  await new VersionApi(config).getCode()
}

interface ClusterState {
  timer: NodeJS.Timeout | null
  controller: AbortController | null
  /** What the last probe found; null before the first. */
  answering: boolean | null
}

/** One prober per cluster key, alive while a watch of that cluster is recovering. */
export class ClusterProbes {
  private readonly clusters = new Map<string, ClusterState>()
  private closed = false

  constructor(private readonly o: ProbeOptions, private readonly ping: typeof pingVersion = pingVersion) {}

  /** A watch of `cluster` went into backoff: probe the cluster until none of its watches is recovering. */
  watch(cluster: string): void {
    if (this.closed || this.o.intervalMs <= 0 || this.clusters.has(cluster)) return
    const state: ClusterState = { timer: null, controller: null, answering: null }
    this.clusters.set(cluster, state)
    this.schedule(cluster, state)
  }

  /** The cluster answered (a health check, say): its waiting watches reconnect now. */
  answered(cluster: string): number {
    const state = this.clusters.get(cluster)
    if (state) state.answering = true
    return this.o.wake(cluster)
  }

  /** Stops probing `cluster` when none of its watches is recovering any more (one stopped, say). */
  release(cluster: string): void {
    const state = this.clusters.get(cluster)
    if (state && this.o.recovering(cluster) === 0) this.stop(cluster, state)
  }

  /** Clusters being probed now. */
  probing(): string[] { return [...this.clusters.keys()] }

  close(): void {
    this.closed = true
    for (const [cluster, state] of [...this.clusters]) this.stop(cluster, state)
  }

  private stop(cluster: string, state: ClusterState): void {
    if (state.timer) clearTimeout(state.timer)
    state.timer = null
    state.controller?.abort()
    state.controller = null
    if (this.clusters.get(cluster) === state) this.clusters.delete(cluster)
  }

  private schedule(cluster: string, state: ClusterState): void {
    state.timer = setTimeout(() => { state.timer = null; void this.probe(cluster, state) }, this.o.intervalMs)
    state.timer.unref?.()
  }

  private async probe(cluster: string, state: ClusterState): Promise<void> {
    if (this.clusters.get(cluster) !== state) return
    if (this.o.recovering(cluster) === 0) { this.stop(cluster, state); return }
    const controller = new AbortController()
    state.controller = controller
    const started = performance.now()
    let answered = false
    try {
      await this.ping(await this.o.connect(cluster), this.o.timeoutMs, controller.signal)
      answered = true
    } catch { /* not answering: the next probe asks again */ }
    // Stopped meanwhile (hub closed, last watch gone): nothing more to do or to report.
    if (controller.signal.aborted || this.clusters.get(cluster) !== state) return
    state.controller = null
    const back = answered && state.answering === false
    state.answering = answered
    const woke = back ? this.o.wake(cluster) : 0
    try { this.o.onProbe?.({ cluster, answered, ms: performance.now() - started, woke }) } catch { /* a hook's failure is its own */ }
    if (this.o.recovering(cluster) > 0) this.schedule(cluster, state)
    else this.stop(cluster, state)
  }
}
