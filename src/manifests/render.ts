// A canvas graph → Kubernetes objects in apply order, with per-node diagnostics. A node with an error
// contributes no object at all (never half of one); warnings never block. Every object is validated
// against the Kubernetes OpenAPI schema (kubernetes-models) before it leaves this module.
import { Namespace } from 'kubernetes-models/v1/Namespace'
import { Value } from 'typebox/value'
import { NodeDataSchemas } from '../../schemas/nodes.ts'
import { isNodeType } from '../services/node-catalogue.ts'
import { NodeReport, type Builder, type Link, type NodeView } from './build-context.ts'
import { systemAnnotations, systemLabels } from './metadata.ts'
import { builtInRank, CUSTOM_RESOURCE_RANK } from './order.ts'
import { renderPluginNode } from './plugin-node.ts'
import { wire } from './wiring.ts'
import * as workloads from './workloads.ts'
import * as networking from './networking.ts'
import * as config from './config.ts'
import * as storage from './storage.ts'
import * as scaling from './scaling.ts'
import type { Diagnostic, KubeObject, ManifestEdge, ManifestNode, RenderContext, RenderResult } from './types.ts'

const BUILDERS: Record<string, Builder> = {
  deployment: workloads.deployment, statefulset: workloads.statefulset, daemonset: workloads.daemonset,
  replicaset: workloads.replicaset, pod: workloads.pod, job: workloads.job, cronjob: workloads.cronjob,
  service: networking.service, ingress: networking.ingress, networkpolicy: networking.networkpolicy,
  configmap: config.configmap, secret: config.secret, serviceaccount: config.serviceaccount,
  persistentvolumeclaim: storage.persistentvolumeclaim,
  hpa: scaling.hpa, poddisruptionbudget: scaling.poddisruptionbudget,
}

/** Namespaces the service never creates or claims: they exist in every cluster and are not ours to own. */
export const SYSTEM_NAMESPACES = new Set(['default', 'kube-system', 'kube-public', 'kube-node-lease'])

export interface Graph { nodes: ManifestNode[]; edges: ManifestEdge[] }

interface Placed { node_id: string; object: KubeObject; rank: number; depth: number; order: number; seq: number }

/**
 * How many workload-dependency edges lead to a node (its longest chain of dependencies), so a dependency is
 * applied before what depends on it whatever the canvas order. A cycle is a warning and counts as no edge.
 */
function dependencyDepths(views: Map<string, NodeView>, links: Map<string, Link[]>, diagnostics: Diagnostic[]): Map<string, number> {
  const depths = new Map<string, number>()
  const visiting = new Set<string>()
  const depth = (id: string): number => {
    const known = depths.get(id)
    if (known !== undefined) return known
    if (visiting.has(id)) {
      diagnostics.push({ node_id: id, severity: 'warning', message: 'its dependency edges form a cycle; the apply order among them is the canvas order' })
      return 0
    }
    visiting.add(id)
    let d = 0
    for (const l of links.get(id) ?? []) {
      if (l.rule === 'workload-dependency' && l.edge.target === id) d = Math.max(d, depth(l.peer.id) + 1)
    }
    visiting.delete(id)
    depths.set(id, d)
    return d
  }
  for (const id of views.keys()) depth(id)
  return depths
}

function schemaMessage(err: unknown): string {
  // ajv's message names the path and the rule (".../containerPort must be integer"), never the value.
  const text = err instanceof Error ? err.message : 'invalid'
  return text.replace(/^data\//, '').replace(/\bdata\//g, '')
}

function plain(model: { toJSON(): unknown }): KubeObject {
  return JSON.parse(JSON.stringify(model.toJSON())) as KubeObject
}

/** The node's data checked against its type's schema, one message per field, each naming it. */
function dataProblems(node: ManifestNode): string[] {
  if (!isNodeType(node.type)) return [`type: unknown node type ${JSON.stringify(node.type)}`]
  const data = node.data ?? {}
  return Value.Errors(NodeDataSchemas[node.type], data).flatMap((e) => {
    const path = e.instancePath.replace(/^\//, '')
    const required = (e.params as { requiredProperties?: string[] }).requiredProperties
    if (e.keyword === 'required' && required) return required.filter((k) => !Object.hasOwn(data, k)).map((k) => `${path ? `${path}/` : ''}${k}: required`)
    return [`${path || 'data'}: ${e.message}`]
  })
}

function namespaceOf(node: ManifestNode, ctx: RenderContext): string {
  const ns = node.data?.namespace
  return ctx.namespace ?? (typeof ns === 'string' && ns !== '' ? ns : 'default')
}

export async function renderWorkflow(graph: Graph, ctx: RenderContext): Promise<RenderResult> {
  const diagnostics: Diagnostic[] = []
  const views = new Map<string, NodeView>()
  const broken = new Set<string>()
  for (const [order, node] of graph.nodes.entries()) {
    const problems = dataProblems(node)
    if (problems.length > 0 || !isNodeType(node.type)) {
      for (const message of problems) diagnostics.push({ node_id: node.id, severity: 'error', message })
      broken.add(node.id)
      continue
    }
    const data = (node.data ?? {}) as Record<string, unknown>
    views.set(node.id, { id: node.id, type: node.type, data, name: data.name as string, namespace: namespaceOf(node, ctx), order })
  }

  const edges: ManifestEdge[] = []
  for (const edge of graph.edges) {
    const bad = [edge.source, edge.target].find((id) => broken.has(id))
    if (bad !== undefined) diagnostics.push({ node_id: bad, severity: 'warning', message: `edge ${JSON.stringify(edge.id)} is not wired because this node has errors` })
    else edges.push(edge)
  }
  const wiring = wire(views, edges)
  for (const w of wiring.warnings) diagnostics.push({ severity: 'warning', ...w })
  const depths = dependencyDepths(views, wiring.links, diagnostics)

  const placed: Placed[] = []
  let seq = 0
  for (const node of views.values()) {
    const report = new NodeReport()
    const objects: KubeObject[] = []
    if (node.type === 'plugin') {
      objects.push(...await renderPluginNode(node, ctx, report))
    } else {
      const models = BUILDERS[node.type]({ node, links: wiring.links.get(node.id) ?? [], report, ctx })
      // A node already in error renders nothing, so its placeholder values need no schema check.
      for (const model of models) {
        if (report.errors.length === 0) {
          try { model.validate() } catch (err) { report.error(`does not match the Kubernetes schema: ${schemaMessage(err)}`) }
        }
        objects.push(plain(model))
      }
    }
    for (const message of report.errors) diagnostics.push({ node_id: node.id, severity: 'error', message })
    for (const message of report.warnings) diagnostics.push({ node_id: node.id, severity: 'warning', message })
    if (report.errors.length > 0) continue
    for (const object of objects) {
      placed.push({ node_id: node.id, object, rank: node.type === 'plugin' ? CUSTOM_RESOURCE_RANK : builtInRank(object.kind), depth: depths.get(node.id) ?? 0, order: node.order, seq: seq++ })
    }
  }

  // Two nodes rendering the same object would silently overwrite each other in the cluster.
  const seen = new Map<string, string>()
  const unique = placed.filter((p) => {
    const key = `${p.object.apiVersion.split('/').slice(0, -1).join('/')}|${p.object.kind}|${p.object.metadata?.namespace ?? ''}|${p.object.metadata?.name}`
    const first = seen.get(key)
    if (first !== undefined && first !== p.node_id) {
      diagnostics.push({ node_id: p.node_id, severity: 'error', message: `node ${JSON.stringify(first)} already renders ${p.object.kind} ${p.object.metadata?.name} in namespace ${p.object.metadata?.namespace ?? '(cluster)'}` })
      return false
    }
    seen.set(key, p.node_id)
    return true
  })
  const uniqueSet = new Set(unique)
  const dropped = new Set(placed.filter((p) => !uniqueSet.has(p)).map((p) => p.node_id))
  const kept = unique.filter((p) => !dropped.has(p.node_id))

  // A namespace other than the cluster's own is created first, owned by the first node placed in it.
  const namespaces = new Map<string, Placed>()
  for (const p of [...kept].sort((a, b) => a.order - b.order)) {
    const ns = p.object.metadata?.namespace
    if (typeof ns !== 'string' || SYSTEM_NAMESPACES.has(ns) || namespaces.has(ns)) continue
    const model = new Namespace({ metadata: { name: ns, labels: systemLabels(), annotations: systemAnnotations(ctx.workflowId, p.node_id) } })
    model.validate()
    namespaces.set(ns, { node_id: p.node_id, object: plain(model), rank: builtInRank('Namespace'), depth: 0, order: p.order, seq: -1 })
  }
  const all = [...namespaces.values(), ...kept].sort((a, b) => a.rank - b.rank || a.depth - b.depth || a.order - b.order || a.seq - b.seq)
  return { objects: all.map(({ node_id, object, depth }) => ({ node_id, object, ...(depth > 0 && { wave: depth }) })), diagnostics }
}
