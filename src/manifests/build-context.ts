// What a builder sees of its node: the resolved name and namespace, its links to other nodes (from the
// edge table), the run's context, and a report to which it adds per-node errors and warnings.
import type { NodeType } from '../../schemas/nodes.ts'
import type { ManifestEdge, RenderContext } from './types.ts'
import type { RuleName } from './wiring.ts'
import { annotationProblems, labelProblems, selectorLabels, systemAnnotations, systemLabels } from './metadata.ts'

export interface NodeView {
  id: string
  type: NodeType
  data: Record<string, unknown>
  name: string
  namespace: string
  /** Position in the workflow's node list: ties in apply order keep it. */
  order: number
}

export interface Link { rule: RuleName; edge: ManifestEdge; peer: NodeView; reversed: boolean }

export class NodeReport {
  readonly errors: string[] = []
  readonly warnings: string[] = []
  error(message: string): void { this.errors.push(message) }
  warn(message: string): void { this.warnings.push(message) }
}

/** What a model from kubernetes-models offers: schema validation and its plain form. */
export interface ValidatableModel { validate(): void; toJSON(): unknown }

export interface BuildInput {
  node: NodeView
  links: Link[]
  report: NodeReport
  ctx: RenderContext
}

export type Builder = (input: BuildInput) => ValidatableModel[]

export function linksOf(input: BuildInput, rule: RuleName): Link[] {
  return input.links.filter((l) => l.rule === rule)
}

export function str(data: Record<string, unknown>, key: string): string | undefined {
  const v = data[key]
  return typeof v === 'string' ? v : undefined
}

export function stringMap(data: Record<string, unknown>, key: string): Record<string, string> | undefined {
  const v = data[key]
  return v && typeof v === 'object' && !Array.isArray(v) ? v as Record<string, string> : undefined
}

/** The labels a workload's pods carry: the user's labels under the stable selector labels. */
export function podLabels(input: BuildInput): Record<string, string> {
  return { ...(stringMap(input.node.data, 'labels') ?? {}), ...selectorLabels(input.node.name, input.ctx.workflowId), ...systemLabels() }
}

/**
 * The object's metadata: user labels and annotations first, the service's own on top (a user label cannot
 * take over a selector or the managed-by label; that is reported, not silent).
 */
export function objectMeta(input: BuildInput, options: { namespaced?: boolean } = {}) {
  const { node, report, ctx } = input
  const labels = stringMap(node.data, 'labels') ?? {}
  const annotations = stringMap(node.data, 'annotations') ?? {}
  for (const p of [...labelProblems(labels, 'labels'), ...annotationProblems(annotations, 'annotations')]) report.error(p)
  const ours = { ...selectorLabels(node.name, ctx.workflowId), ...systemLabels() }
  for (const k of Object.keys(labels)) if (Object.hasOwn(ours, k) && labels[k] !== ours[k]) report.warn(`labels: ${JSON.stringify(k)} is set by the service and cannot be overridden`)
  const ourAnnotations = systemAnnotations(ctx.workflowId, node.id)
  for (const k of Object.keys(annotations)) if (Object.hasOwn(ourAnnotations, k)) report.warn(`annotations: ${JSON.stringify(k)} is set by the service and cannot be overridden`)
  return {
    name: node.name,
    ...(options.namespaced !== false && { namespace: node.namespace }),
    labels: { ...labels, ...ours },
    annotations: { ...annotations, ...ourAnnotations },
  }
}
