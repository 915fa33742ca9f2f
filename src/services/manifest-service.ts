// Previews a workflow's manifests for its owner: the stored graph rendered exactly as a run would render
// it, except that run-time values (secrets, envVars) are never read or shown. The reply's text is made
// with the render, on a worker thread for a large graph, so a preview never holds the event loop.
import { APP_NAME } from '../app-info.ts'
import type { WorkflowService } from './workflow-service.ts'
import { oncePerRender } from '../manifests/index.ts'
import type { PluginForRender } from '../manifests/types.ts'
import type { GraphRenderer } from '../workers/render.ts'

export interface ManifestServiceDeps {
  workflows: WorkflowService
  /** A plugin definition by id or name; null when unknown. */
  plugin: (pluginId: string) => Promise<PluginForRender | null>
  renderer: GraphRenderer
}

export class ManifestService {
  constructor(private readonly deps: ManifestServiceDeps) {}

  /**
   * The preview as the reply's text: multi-document YAML (diagnostics as leading comments), or JSON
   * `{workflow_id, namespace, objects, diagnostics}`. Throws NotFound when the workflow is not the owner's.
   */
  async preview(ownerId: string, workflowId: string, format: 'yaml' | 'json', options: { namespace?: string } = {}): Promise<string> {
    const wf = await this.deps.workflows.get(ownerId, workflowId)
    const ctx = { workflowId: wf.id, namespace: options.namespace, plugins: oncePerRender(this.deps.plugin), revealSecrets: false }
    return this.deps.renderer.body({ nodes: wf.nodes, edges: wf.edges }, ctx, format === 'yaml'
      ? { format, header: `Workflow ${JSON.stringify(wf.name)} (${wf.id}), rendered by ${APP_NAME}.\nSecret values are never shown: secrets list their keys with empty values.` }
      : { format, workflow_id: wf.id, namespace: options.namespace ?? null })
  }
}
