// The shapes shared by the manifest builders: what goes in (a canvas graph and the run's context) and what
// comes out (objects in apply order, and per-node diagnostics).

export interface ManifestNode { id: string; type: string; data?: Record<string, unknown>; [key: string]: unknown }
export interface ManifestEdge {
  id: string; source: string; target: string
  sourceHandle?: string | null; targetHandle?: string | null
  [key: string]: unknown
}

export interface ConfigFieldForRender {
  name: string
  type: 'string' | 'number' | 'boolean' | 'select' | 'textarea' | 'secret'
  default?: unknown
  required: boolean
  options?: string[]
}

/** The part of a plugin definition (schemas/plugin.ts) rendering needs. */
export interface PluginForRender {
  id: string
  name: string
  enabled: boolean
  crd: { group: string; version: string; kind: string; plural: string }
  config_fields: ConfigFieldForRender[]
  template: string
}

export type PluginLookup = (pluginId: string) => PluginForRender | null | Promise<PluginForRender | null>

export interface RenderContext {
  workflowId: string
  /** Overrides every node's namespace (a run's namespace). */
  namespace?: string
  /** Run-time secret values per node id; never read from the workflow. */
  secrets?: Record<string, Record<string, string>>
  /** Run-time environment variables per node id, added to that node's container. */
  envVars?: Record<string, Record<string, string>>
  plugins: PluginLookup
  /** False for previews: run-time values are shown as keys with masked values. */
  revealSecrets: boolean
}

export type Severity = 'error' | 'warning'
export interface Diagnostic { node_id: string; severity: Severity; message: string }

export type KubeObject = Record<string, unknown> & {
  apiVersion: string
  kind: string
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string>; [k: string]: unknown }
}

export interface RenderedObject {
  node_id: string; object: KubeObject
  /**
   * Present (≥ 1) on the objects of a node with dependency edges: the length of its longest chain of
   * dependencies. A run applies a later wave only once the earlier waves' workloads are ready.
   */
  wave?: number
}
export interface RenderResult { objects: RenderedObject[]; diagnostics: Diagnostic[] }
