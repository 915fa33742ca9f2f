// The shapes diagnostics and fixes share (API.md §9): checks as the API shows them, and a fix as a list of
// edits to the workflow graph, never a Kubernetes object.
import type { ManifestEdge, ManifestNode } from '../../manifests/types.ts'

export const FIX_TYPES = ['selector-mismatch', 'target-port', 'dns-name', 'missing-namespace', 'image-tag-latest', 'resource-requests'] as const
export type FixType = typeof FIX_TYPES[number]

export type CheckStatus = 'pass' | 'warning' | 'error'
export interface Check { name: string; status: CheckStatus; message: string; suggestion?: string; fix_type?: FixType }

export type OverallStatus = 'healthy' | 'warning' | 'error'
export interface NodeDiagnostics { node_id: string; kind: string; overall_status: OverallStatus; checks: Check[]; checked_at: string }

/** One edit of the graph: `path` is inside the node (`data.image`, `data.ports[0].targetPort`); `null` means absent. */
export interface GraphChange { node_id: string; path: string; old: unknown; new: unknown }

export interface Graph { nodes: ManifestNode[]; edges: ManifestEdge[] }

export function overallStatus(checks: Check[]): OverallStatus {
  if (checks.some((c) => c.status === 'error')) return 'error'
  return checks.some((c) => c.status === 'warning') ? 'warning' : 'healthy'
}

export const pass = (name: string, message: string): Check => ({ name, status: 'pass', message })
export const problem = (name: string, status: 'warning' | 'error', message: string, suggestion: string, fix_type?: FixType): Check =>
  ({ name, status, message, suggestion, ...(fix_type && { fix_type }) })
