import type { ObjectApi } from './api.ts'
import type { Registry } from './registry.ts'
import type { Target } from './rest.ts'
import { compileFilter } from './api.ts'
import { notFound } from './status.ts'
import { fnv32, parseQuantity, timestamp, type JsonObject, type KObject } from './util.ts'

// metrics.k8s.io/v1beta1 as metrics-server serves it. Usage is made up but stable: derived from a
// hash of the pod and container names, or taken from the pod annotations `kube-sim.io/cpu-usage`
// and `kube-sim.io/memory-usage` (per container, e.g. "250m" and "64Mi") when a test needs numbers.

export const cpuAnnotation = 'kube-sim.io/cpu-usage'
export const memoryAnnotation = 'kube-sim.io/memory-usage'

/** Per-container usage in cores and bytes. */
export function containerUsage(pod: KObject, container: string): { cpu: number; memory: number } {
  const h = fnv32(`${pod.metadata.namespace}/${pod.metadata.name}/${container}`)
  const a = pod.metadata.annotations ?? {}
  return {
    cpu: a[cpuAnnotation] ? parseQuantity(a[cpuAnnotation]) : ((h % 20) + 1) / 1000,
    memory: a[memoryAnnotation] ? parseQuantity(a[memoryAnnotation]) : ((h >>> 8) % 64 + 8) * 1024 * 1024,
  }
}

const nano = (cores: number) => `${Math.round(cores * 1e9)}n`
const kib = (bytes: number) => `${Math.round(bytes / 1024)}Ki`

export class MetricsService {
  constructor(private readonly api: ObjectApi, private readonly registry: Registry) {}

  private running(ns?: string): KObject[] {
    return this.api.list(this.registry.byGroupPlural('', 'pods')!, ns).items.filter((p) => p.status?.phase === 'Running' && !p.metadata.deletionTimestamp)
  }

  private podMetrics(p: KObject): JsonObject {
    return {
      metadata: { name: p.metadata.name, namespace: p.metadata.namespace, creationTimestamp: timestamp(), labels: p.metadata.labels ?? {} },
      timestamp: timestamp(), window: '10.026s',
      containers: ((p.spec?.containers ?? []) as JsonObject[]).map((c) => {
        const u = containerUsage(p, c.name)
        return { name: c.name, usage: { cpu: nano(u.cpu), memory: kib(u.memory) } }
      }),
    }
  }

  private nodeMetrics(n: KObject, pods: KObject[]): JsonObject {
    let cpu = 0.08 + (fnv32(n.metadata.name!) % 50) / 1000
    let memory = 900 * 1024 * 1024
    for (const p of pods.filter((x) => x.spec?.nodeName === n.metadata.name)) {
      for (const c of (p.spec?.containers ?? []) as JsonObject[]) { const u = containerUsage(p, c.name); cpu += u.cpu; memory += u.memory }
    }
    return { metadata: { name: n.metadata.name, creationTimestamp: timestamp(), labels: n.metadata.labels ?? {} }, timestamp: timestamp(), window: '20.05s', usage: { cpu: nano(cpu), memory: kib(memory) } }
  }

  handle(t: Target, q: URLSearchParams): JsonObject {
    const apiVersion = 'metrics.k8s.io/v1beta1'
    const filterRt = this.registry.byGroupPlural('', t.rt.plural)!
    const filter = compileFilter(filterRt, { labelSelector: q.get('labelSelector') ?? undefined, fieldSelector: q.get('fieldSelector') ?? undefined })
    if (t.rt.plural === 'pods') {
      const pods = this.running(t.namespace)
      if (t.name) {
        const p = pods.find((x) => x.metadata.name === t.name)
        if (!p) throw notFound('pods', 'metrics.k8s.io', t.name)
        return { kind: 'PodMetrics', apiVersion, ...this.podMetrics(p) }
      }
      return { kind: 'PodMetricsList', apiVersion, metadata: {}, items: pods.filter(filter).map((p) => this.podMetrics(p)) }
    }
    const nodes = this.api.list(this.registry.byGroupPlural('', 'nodes')!, undefined).items
    const pods = this.running()
    if (t.name) {
      const n = nodes.find((x) => x.metadata.name === t.name)
      if (!n) throw notFound('nodes', 'metrics.k8s.io', t.name)
      return { kind: 'NodeMetrics', apiVersion, ...this.nodeMetrics(n, pods) }
    }
    return { kind: 'NodeMetricsList', apiVersion, metadata: {}, items: nodes.filter(filter).map((n) => this.nodeMetrics(n, pods)) }
  }
}
