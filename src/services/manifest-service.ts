// Previews a workflow's manifests for its owner: the stored graph rendered exactly as a run would render
// it, except that run-time values (secrets, envVars) are never read or shown.
import type { WorkflowService } from './workflow-service.ts'
import { oncePerRender, renderWorkflow } from '../manifests/index.ts'
import type { PluginForRender, RenderResult } from '../manifests/types.ts'

export interface ManifestServiceDeps {
  workflows: WorkflowService
  /** A plugin definition by id or name; null when unknown. */
  plugin: (pluginId: string) => Promise<PluginForRender | null>
}

export interface ManifestPreview extends RenderResult {
  workflow: { id: string; name: string }
  namespace: string | null
}

export class ManifestService {
  constructor(private readonly deps: ManifestServiceDeps) {}

  /** Throws NotFound when the workflow is not the owner's. */
  async preview(ownerId: string, workflowId: string, options: { namespace?: string } = {}): Promise<ManifestPreview> {
    const wf = await this.deps.workflows.get(ownerId, workflowId)
    const result = await renderWorkflow({ nodes: wf.nodes, edges: wf.edges }, {
      workflowId: wf.id, namespace: options.namespace, plugins: oncePerRender(this.deps.plugin), revealSecrets: false,
    })
    return { ...result, workflow: { id: wf.id, name: wf.name }, namespace: options.namespace ?? null }
  }
}
