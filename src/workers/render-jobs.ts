// Rendering a graph on a worker thread: the objects, their diagnostics and, when asked, the reply's body
// (YAML or JSON text), which for a large graph costs more than the render itself.
import { renderWorkflow, toYaml, type Graph } from '../manifests/index.ts'
import type { PluginForRender, RenderContext, RenderResult } from '../manifests/types.ts'
import { answer, type JobAnswer } from './answer.ts'

// Once per thread, as the module loads: rendering one wired pair compiles the schema checks the builders
// use (kubernetes-models compiles each kind's on first use), so the first job's budget is spent on its input.
await renderWorkflow({
  nodes: [{ id: 'd', type: 'deployment', data: { name: 'warm', image: 'nginx:1.27', port: 80 } }, { id: 's', type: 'service', data: { name: 'warm', port: 80 } }],
  edges: [{ id: 'e', source: 'd', target: 's' }],
}, { workflowId: 'warm-up', plugins: () => null, revealSecrets: false })

/** The text of a manifests reply: multi-document YAML with a header, or the JSON preview. */
export type BodySpec =
  | { format: 'yaml'; header: string }
  | { format: 'json'; workflow_id: string; namespace: string | null }

export interface RenderJob {
  /** The graph as JSON text: copying one string to the thread costs the event loop a fraction of copying 12,000 objects. */
  graph: string
  /** The render context less its plugin lookup (a function cannot cross threads). */
  ctx: Omit<RenderContext, 'plugins'>
  /** The plugins the graph names, looked up beforehand by the reference its nodes use. */
  plugins: Record<string, PluginForRender | null>
  body?: BodySpec
}
export interface Rendered extends RenderResult { body?: string }

/** The reply's text; the JSON form has exactly the documented keys (routes/workflows/manifests.ts). */
export function bodyOf(result: RenderResult, spec: BodySpec): string {
  if (spec.format === 'yaml') return toYaml(result, spec.header)
  return JSON.stringify({
    workflow_id: spec.workflow_id, namespace: spec.namespace,
    objects: result.objects.map(({ node_id, object }) => ({ node_id, object })),
    diagnostics: result.diagnostics.map(({ node_id, severity, message }) => ({ node_id, severity, message })),
  })
}

export function render(job: RenderJob): Promise<JobAnswer<Rendered>> {
  return answer(async () => {
    const result = await renderWorkflow(JSON.parse(job.graph) as Graph, { ...job.ctx, plugins: (ref) => (Object.hasOwn(job.plugins, ref) ? job.plugins[ref] : null) })
    // With a body, the objects stay here: the caller sends the text, and copying them back would cost the event loop.
    return job.body === undefined ? result : { objects: [], diagnostics: [], body: bodyOf(result, job.body) }
  })
}
