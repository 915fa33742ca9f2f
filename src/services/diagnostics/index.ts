// Node diagnostics and fixes (API.md §9). Diagnostics: the static checks of the stored graph, then, once the
// workflow has been deployed, live checks against the cluster and namespace of its last run (read-only,
// with viewer access). A fix is an edit of the workflow graph, previewed as the objects the next run would
// apply and saved like any canvas edit (no version); it never writes to a cluster.
import { APP_NAME } from '../../app-info.ts'
import { AppError, Conflict, NotFound } from '../../errors.ts'
import { oncePerRender, toYaml } from '../../manifests/index.ts'
import type { ManifestNode, PluginForRender, RenderResult } from '../../manifests/types.ts'
import { describeClusterError } from '../../kube/upstream-errors.ts'
import type { GraphRenderer } from '../../workers/render.ts'
import type { Workflow } from '../../repositories/workflows.ts'
import type { RunRepository } from '../../repositories/runs.ts'
import type { ClusterService } from '../cluster-service.ts'
import type { WorkflowService } from '../workflow-service.ts'
import type { GraphEdge, GraphNode } from '../workflow-graph.ts'
import { applyChanges, assess, type FixPlan, type LiveFacts } from './fixes.ts'
import { GraphView, kindOf } from './graph-view.ts'
import { liveChecks, runningImageDigest, unreachable, type LiveTarget } from './live-checks.ts'
import { staticChecks } from './static-checks.ts'
import { overallStatus, pass, type Check, type FixType, type GraphChange, type NodeDiagnostics } from './types.ts'

export { FIX_TYPES, type FixType, type NodeDiagnostics, type GraphChange, type Check } from './types.ts'

export interface DiagnosticsServiceDeps {
  workflows: Pick<WorkflowService, 'get' | 'save'>
  runs: Pick<RunRepository, 'lastDeployment'>
  clusters: Pick<ClusterService, 'kubeConfigFor'>
  /** A plugin definition by id or name; null when unknown. */
  plugin: (pluginId: string) => Promise<PluginForRender | null>
  /** Bound on each request to the cluster. */
  timeoutMs: number
  /** Renders a large graph on a worker thread. */
  renderer: GraphRenderer
}

export interface FixTemplate { fix_type: FixType; description: string; changes: GraphChange[]; preview_yaml: string }

interface Loaded { wf: Workflow; node: ManifestNode; g: GraphView; render: (namespace?: string) => Promise<RenderResult> }
interface Live { checks: Check[]; facts: LiveFacts }

export class DiagnosticsService {
  constructor(private readonly deps: DiagnosticsServiceDeps) {}

  private async load(ownerId: string, workflowId: string, nodeId: string): Promise<Loaded> {
    const wf = await this.deps.workflows.get(ownerId, workflowId)
    const node = (wf.nodes as ManifestNode[]).find((n) => n.id === nodeId)
    if (!node) throw new NotFound('node')
    const graph = { nodes: wf.nodes as ManifestNode[], edges: wf.edges as GraphEdge[] }
    return { wf, node, g: new GraphView(graph, wf.id), render: (namespace) => this.render(wf.id, graph, namespace) }
  }

  private render(workflowId: string, graph: { nodes: ManifestNode[]; edges: GraphEdge[] }, namespace?: string): Promise<RenderResult> {
    return this.deps.renderer.render(graph, { workflowId, namespace, plugins: oncePerRender(this.deps.plugin), revealSecrets: false })
  }

  /**
   * Where the node's objects are, as the last run deployed them (its cluster, with viewer access, and its
   * namespace); null when the workflow was never deployed, a reason when the cluster cannot be used.
   */
  private async target(ownerId: string, loaded: Loaded, render: RenderResult): Promise<LiveTarget | { cluster: string; why: string } | null> {
    const last = await this.deps.runs.lastDeployment(ownerId, loaded.wf.id)
    if (!last) return null
    let kc
    try {
      kc = (await this.deps.clusters.kubeConfigFor(ownerId, last.cluster_id || last.cluster, 'viewer')).kc
    } catch (err) {
      const why = err instanceof NotFound ? 'it is no longer available to you'
        : err instanceof AppError ? err.message : describeClusterError(err)
      return { cluster: last.cluster, why }
    }
    const deployed = last.namespace ? await loaded.render(last.namespace) : render
    const objects = deployed.objects.filter((o) => o.node_id === loaded.node.id && o.object.kind !== 'Namespace').map((o) => o.object)
    return { kc, cluster: last.cluster, nodeId: loaded.node.id, nodeType: loaded.node.type, objects, timeoutMs: this.deps.timeoutMs }
  }

  /** Live checks of the node where the workflow was last deployed; null when it never was. */
  private async live(ownerId: string, loaded: Loaded, render: RenderResult): Promise<Live | null> {
    const target = await this.target(ownerId, loaded, render)
    if (!target) return null
    if (!('kc' in target)) return { checks: [unreachable(target.cluster, target.why)], facts: { imageDigest: null } }
    // A node in error renders nothing: there is nothing of it to look for (its static checks say why).
    if (target.objects.length === 0) return { checks: [], facts: { imageDigest: null } }
    const report = await liveChecks(target)
    return { checks: report.checks, facts: { imageDigest: report.imageDigest } }
  }

  async diagnose(ownerId: string, workflowId: string, nodeId: string): Promise<NodeDiagnostics> {
    const loaded = await this.load(ownerId, workflowId, nodeId)
    const render = await loaded.render()
    const live = await this.live(ownerId, loaded, render)
    const facts = live?.facts ?? null
    const checks = [
      ...staticChecks(loaded.g, loaded.node, render, facts),
      ...(live ? live.checks : [pass('deployment', 'the workflow has not been deployed yet: live checks run once it has')]),
    ]
    // A check names a fix only when that fix would apply now (live checks suggest one without knowing the graph).
    for (const c of checks) {
      if (c.fix_type && typeof assess(c.fix_type, loaded.g, loaded.node, facts).plan === 'string') delete c.fix_type
    }
    const own = render.objects.find((o) => o.node_id === nodeId && o.object.kind !== 'Namespace')?.object.kind
    return { node_id: nodeId, kind: own ?? kindOf(loaded.node), overall_status: overallStatus(checks), checks, checked_at: new Date().toISOString() }
  }

  private async plan(ownerId: string, loaded: Loaded, type: FixType): Promise<FixPlan> {
    // Only pinning an image needs the cluster: the digest its pods report, read beforehand.
    let facts: LiveFacts | null = null
    if (type === 'image-tag-latest') {
      const target = await this.target(ownerId, loaded, await loaded.render())
      facts = { imageDigest: target && 'kc' in target ? await runningImageDigest(target) : null }
    }
    const { plan } = assess(type, loaded.g, loaded.node, facts)
    if (typeof plan === 'string') throw new Conflict(`fix ${type} does not apply to node ${JSON.stringify(loaded.node.id)}: ${plan}`)
    return plan
  }

  async fixTemplate(ownerId: string, workflowId: string, nodeId: string, type: FixType): Promise<FixTemplate> {
    const loaded = await this.load(ownerId, workflowId, nodeId)
    const plan = await this.plan(ownerId, loaded, type)
    const nodes = applyChanges(loaded.wf.nodes as ManifestNode[], plan.changes)
    const after = await this.render(loaded.wf.id, { nodes, edges: loaded.wf.edges as GraphEdge[] })
    // Every node the edit touches (a fix on an autoscaler edits its workload), in apply order.
    const touched = new Set([nodeId, ...plan.changes.map((c) => c.node_id)])
    const preview = {
      objects: after.objects.filter((o) => touched.has(o.node_id)),
      diagnostics: after.diagnostics.filter((d) => touched.has(d.node_id)),
    }
    const header = `The objects of node ${JSON.stringify(nodeId)} after fix ${type}, as the next run would apply them (rendered by ${APP_NAME}).\nSecret values are never shown: secrets list their keys with empty values.`
    return { fix_type: type, description: plan.description, changes: plan.changes, preview_yaml: toYaml(preview, header) }
  }

  async applyFix(ownerId: string, workflowId: string, nodeId: string, type: FixType): Promise<{ workflow: Workflow; changes: GraphChange[] }> {
    const loaded = await this.load(ownerId, workflowId, nodeId)
    const plan = await this.plan(ownerId, loaded, type)
    // Planning an image pin reads the cluster; a canvas save meanwhile must not be overwritten by the fix.
    // (A save in the last milliseconds before ours can still be: saves carry no precondition.)
    if ((await this.deps.workflows.get(ownerId, workflowId)).updated_at !== loaded.wf.updated_at) {
      throw new Conflict('the workflow changed while the fix was prepared; look at its diagnostics again')
    }
    const nodes = applyChanges(loaded.wf.nodes as GraphNode[], plan.changes)
    const workflow = await this.deps.workflows.save(ownerId, workflowId, { nodes, edges: loaded.wf.edges as GraphEdge[] })
    return { workflow, changes: plan.changes }
  }
}
