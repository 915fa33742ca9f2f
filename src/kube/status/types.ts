// The shapes every status module shares, and the few readers they all need. Objects arrive as the API server
// returned them (plain JSON), so every field is read defensively: a missing status means "not observed yet".
import type { KubeObject } from '../../manifests/types.ts'

export type { KubeObject }
export type ResourceStatus = 'running' | 'pending' | 'failed' | 'completed' | 'warning' | 'unknown' | 'deleted'
export const RESOURCE_STATUSES: readonly ResourceStatus[] = ['running', 'pending', 'failed', 'completed', 'warning', 'unknown', 'deleted']

export type Counters = Record<string, number | string | null>
export interface DerivedStatus { status: ResourceStatus; message: string; ready: string | null; counters: Counters }

/** What a caller may know beside the object itself: the pods a workload selects (for their container states). */
export interface StatusContext { pods?: KubeObject[] }

export interface Condition { type: string; status: string; reason?: string; message?: string }

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Loose = Record<string, any>

export const spec = (o: KubeObject): Loose => (o.spec && typeof o.spec === 'object' ? o.spec as Loose : {})
export const status = (o: KubeObject): Loose => (o.status && typeof o.status === 'object' ? o.status as Loose : {})
export const num = (v: unknown, fallback = 0): number => (typeof v === 'number' && Number.isFinite(v) ? v : fallback)
export const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null)

export function conditions(o: KubeObject): Condition[] {
  const list = status(o).conditions
  return Array.isArray(list) ? list.filter((c): c is Condition => !!c && typeof c.type === 'string' && typeof c.status === 'string') : []
}

export const condition = (o: KubeObject, type: string): Condition | undefined => conditions(o).find((c) => c.type === type)

/** A condition's reason and message as one line, for status messages. */
export function describeCondition(c: Condition): string {
  return [c.reason, c.message].filter((s) => typeof s === 'string' && s.trim() !== '').join(': ') || c.type
}

/** The controller has not yet seen the latest spec: whatever status it shows belongs to an older one. */
export function notObserved(o: KubeObject): boolean {
  const generation = (o.metadata as Loose).generation
  const observed = status(o).observedGeneration
  return typeof generation === 'number' && typeof observed === 'number' && observed < generation
}

export const result = (s: ResourceStatus, message: string, ready: string | null = null, counters: Counters = {}): DerivedStatus => ({ status: s, message, ready, counters })
