// renderWorkflow, off the event loop when the graph is large: a drop-in for it (same arguments, same
// result) that the preview, diagnostics and runs share. The plugins a graph names are looked up here
// (they come from the database) and handed to the thread as data, since a function cannot cross threads.
import { renderWorkflow, type Graph } from '../manifests/index.ts'
import type { PluginForRender, RenderContext } from '../manifests/types.ts'
import type { WorkerPool } from './pool.ts'
import { bodyOf, type BodySpec, type Rendered } from './render-jobs.ts'

export type { BodySpec, Rendered } from './render-jobs.ts'

/**
 * Graphs up to this many nodes and edges render on the event loop: ~15 ms at this size, less than handing
 * the work to a thread costs. The largest allowed graph (2,000 nodes, 10,000 edges) takes ~300 ms to render
 * and ~400 ms more for its YAML, so it goes to the pool.
 */
export const INLINE_RENDER_MAX_ITEMS = 200

function pluginRefsOf(graph: Graph): string[] {
  const refs = new Set<string>()
  for (const node of graph.nodes) {
    // As renderPluginNode reads it.
    if (node.type === 'plugin' && node.data?.pluginId !== undefined) refs.add(String(node.data.pluginId))
  }
  return [...refs]
}

export class GraphRenderer {
  constructor(private readonly pool: WorkerPool | null) {}

  /** As renderWorkflow. */
  render(graph: Graph, ctx: RenderContext): Promise<Rendered> {
    return this.run(graph, ctx)
  }

  /** The text of a manifests reply (YAML or JSON), made where the render is. */
  async body(graph: Graph, ctx: RenderContext, spec: BodySpec): Promise<string> {
    return (await this.run(graph, ctx, spec)).body!
  }

  private async run(graph: Graph, ctx: RenderContext, body?: BodySpec): Promise<Rendered> {
    if (!this.pool || graph.nodes.length + graph.edges.length <= INLINE_RENDER_MAX_ITEMS) {
      const result = await renderWorkflow(graph, ctx)
      return body === undefined ? result : { ...result, body: bodyOf(result, body) }
    }
    const plugins: Record<string, PluginForRender | null> = {}
    for (const ref of pluginRefsOf(graph)) plugins[ref] = await ctx.plugins(ref)
    const { plugins: _lookup, ...rest } = ctx
    return this.pool.run('render', { graph: JSON.stringify({ nodes: graph.nodes, edges: graph.edges }), ctx: rest, plugins, ...(body && { body }) }, 'rendering this workflow')
  }
}
