// The apply engine's public shapes (re-exported by deploy.ts), kept apart so applyset.ts can use them without
// importing the engine.
import type { KubeObject } from '../manifests/types.ts'
import type { ObjectDiff } from './object-diff.ts'

export type { FieldChange, ObjectDiff } from './object-diff.ts'

export type ApplyAction = 'created' | 'configured' | 'unchanged' | 'failed' | 'skipped'

export interface AppliedObject {
  node_id: string; api_version: string; kind: string; name: string; namespace: string | null
  action: ApplyAction
  /** Redacted, one line: what happened, or what to do about it. */
  message: string
  uid: string | null; resource_version: string | null
  labels: Record<string, string>
  /** The object as the server returned it (managedFields stripped); never persisted. */
  live?: KubeObject
  /** Dry runs only. */
  diff?: ObjectDiff
}

/** `kept`: found in the set but no longer this workflow's (taken over, or its annotation rewritten): left alone. */
export interface PrunedObject { api_version: string; kind: string; name: string; namespace: string | null; action: 'deleted' | 'kept' | 'failed'; message: string }

export type Schedule = <T>(task: () => Promise<T>) => Promise<T>

export interface DeployOptions {
  workflowId: string
  force?: boolean; dryRun?: boolean
  /**
   * Take over existing objects that belong to another workflow or were not made by this service, where
   * `mayAdopt` allows it. Without it (the default) such an object is left unchanged and its node fails.
   */
  adopt?: boolean
  /** Whether the caller may adopt from this owner: another workflow's id, or null for an unmanaged object. Absent: never. */
  mayAdopt?: (otherWorkflowId: string | null) => boolean | Promise<boolean>
  /** Default true; only after every object succeeded. */
  prune?: boolean
  /** Namespaces earlier runs of this workflow used on this cluster (their ApplySet parents are checked for prune). */
  knownNamespaces?: string[]
  /** Bounds concurrency per cluster: the caller passes one shared limiter per cluster. */
  schedule?: Schedule
  /** Masks secret values in any message. */
  redact?: (text: string) => string
  /** Message for an object whose API (CRD) is not served, e.g. naming the operator to install. */
  missingApiMessage?: (object: KubeObject, nodeId: string) => string
  /** Progress, as each object finishes. */
  onObject?: (result: AppliedObject) => void
  /** Human log lines (redacted). */
  log?: (line: string) => void
  /**
   * Called with the workloads of a dependency wave before the next wave is applied (compose depends_on);
   * resolves once they are ready or the caller stops waiting. Absent (dry runs): waves are applied at once.
   */
  awaitReady?: (applied: AppliedObject[]) => Promise<void>
  requestTimeoutMs?: number
}

/** error: a whole-run failure (the cluster unreachable), null otherwise. */
export interface DeployResult { objects: AppliedObject[]; pruned: PrunedObject[]; namespaces: string[]; error: string | null }

/** A bound on concurrent tasks (a deploy's default schedule; callers share one per cluster). */
export function limiter(concurrency: number): Schedule {
  let running = 0
  const waiting: Array<() => void> = []
  return async <T>(task: () => Promise<T>): Promise<T> => {
    // A finishing task hands its slot straight to the next waiter, so a newcomer cannot take it in between.
    if (running >= concurrency) await new Promise<void>((resolve) => waiting.push(resolve))
    else running++
    try {
      return await task()
    } finally {
      const next = waiting.shift()
      if (next) next()
      else running--
    }
  }
}
