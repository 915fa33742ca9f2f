// What a cluster's node and pod lists say about its size and load, as plain numbers (CPU in cores, memory
// and storage in bytes). Shared by the per-cluster metrics and the overview, so both read quantities alike.
import type { V1Node, V1Pod } from '@kubernetes/client-node'
import { parseQuantity } from './quantity.ts'

/** A quantity as a number; 0 when absent or not a quantity (a field a cluster leaves out adds nothing). */
export const scalar = (q: string | undefined): number => { const v = parseQuantity(q); return Number.isFinite(v) ? v : 0 }

export interface NodeReading { name: string; ready: boolean; cpu_capacity: number; memory_capacity: number; cpu_allocatable: number; memory_allocatable: number }
export interface NodeTotals {
  total: number; ready: number
  capacity: { cpu_cores: number; memory_bytes: number; storage_bytes: number }
  allocatable: { cpu_cores: number; memory_bytes: number }
  nodes: NodeReading[]
}

export function readNodes(items: V1Node[]): NodeTotals {
  const totals: NodeTotals = { total: items.length, ready: 0, capacity: { cpu_cores: 0, memory_bytes: 0, storage_bytes: 0 }, allocatable: { cpu_cores: 0, memory_bytes: 0 }, nodes: [] }
  for (const n of items) {
    const cap = n.status?.capacity ?? {}
    // A node that reports no allocatable is all allocatable (what the scheduler assumes too).
    const alloc = n.status?.allocatable ?? cap
    const ready = n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false
    const reading: NodeReading = {
      name: n.metadata?.name ?? '', ready,
      cpu_capacity: scalar(cap.cpu), memory_capacity: scalar(cap.memory), cpu_allocatable: scalar(alloc.cpu), memory_allocatable: scalar(alloc.memory),
    }
    totals.nodes.push(reading)
    if (ready) totals.ready++
    totals.capacity.cpu_cores += reading.cpu_capacity
    totals.capacity.memory_bytes += reading.memory_capacity
    totals.capacity.storage_bytes += scalar(cap['ephemeral-storage'])
    totals.allocatable.cpu_cores += reading.cpu_allocatable
    totals.allocatable.memory_bytes += reading.memory_allocatable
  }
  return totals
}

export const POD_PHASES = ['pending', 'running', 'succeeded', 'failed', 'unknown'] as const
export type PodPhase = typeof POD_PHASES[number]
export interface PodTotals { total: number; by_phase: Record<PodPhase, number>; requests: { cpu_cores: number; memory_bytes: number } }

export const emptyPodTotals = (): PodTotals => ({ total: 0, by_phase: { pending: 0, running: 0, succeeded: 0, failed: 0, unknown: 0 }, requests: { cpu_cores: 0, memory_bytes: 0 } })

function phaseOf(pod: V1Pod): PodPhase {
  const phase = (pod.status?.phase ?? 'Unknown').toLowerCase()
  return (POD_PHASES as readonly string[]).includes(phase) ? phase as PodPhase : 'unknown'
}

/**
 * A pod's effective request, as the scheduler and `kubectl describe node` count it: the larger of its
 * containers' sum and its largest init container (init containers run one at a time, before the others),
 * plus the pod overhead.
 */
export function podRequest(pod: V1Pod, resource: 'cpu' | 'memory'): number {
  const spec = pod.spec
  if (!spec) return 0
  const sum = (spec.containers ?? []).reduce((s, c) => s + scalar(c.resources?.requests?.[resource]), 0)
  const init = (spec.initContainers ?? []).reduce((m, c) => Math.max(m, scalar(c.resources?.requests?.[resource])), 0)
  return Math.max(sum, init) + scalar(spec.overhead?.[resource])
}

/** Pods by phase; requests only of pods that hold a node's resources (scheduled and not finished), as `kubectl describe node` adds them up. */
export function readPods(items: V1Pod[], into: PodTotals = emptyPodTotals()): PodTotals {
  for (const pod of items) {
    const phase = phaseOf(pod)
    into.total++
    into.by_phase[phase]++
    if (!pod.spec?.nodeName || phase === 'succeeded' || phase === 'failed') continue
    into.requests.cpu_cores += podRequest(pod, 'cpu')
    into.requests.memory_bytes += podRequest(pod, 'memory')
  }
  return into
}
