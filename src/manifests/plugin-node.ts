// Plugin nodes: the plugin's template rendered with the node's config values through the sandboxed
// template engine. Secret fields come from the run, never from the workflow; a preview shows a mask.
// Documents are confined to the plugin's API group, so a template cannot smuggle in a Secret, a RoleBinding
// or anything else its definition does not declare.
import { parseTemplate, renderManifestTemplate, type Template } from '../templating/index.ts'
import type { NodeReport, NodeView } from './build-context.ts'
import { annotationProblems, labelProblems, selectorLabels, systemAnnotations, systemLabels } from './metadata.ts'
import { stringMap } from './build-context.ts'
import type { ConfigFieldForRender, KubeObject, PluginForRender, RenderContext } from './types.ts'

/** What a preview shows in place of a plugin's secret field. */
export const SECRET_MASK = '********'

const parsed = new Map<string, Template>()

function templateOf(plugin: PluginForRender): Template {
  const key = `${plugin.id}\0${plugin.template}`
  let t = parsed.get(key)
  if (!t) {
    t = parseTemplate(plugin.template, { name: plugin.name })
    if (parsed.size > 200) parsed.clear()
    parsed.set(key, t)
  }
  return t
}

function checkType(field: ConfigFieldForRender, value: unknown): string | null {
  switch (field.type) {
    case 'number': return typeof value === 'number' && Number.isFinite(value) ? null : 'must be a number'
    case 'boolean': return typeof value === 'boolean' ? null : 'must be true or false'
    case 'select': return typeof value === 'string' && (field.options ?? []).includes(value) ? null : `must be one of ${(field.options ?? []).map((o) => JSON.stringify(o)).join(', ')}`
    default: return typeof value === 'string' ? null : 'must be a string'
  }
}

function valuesFor(node: NodeView, plugin: PluginForRender, ctx: RenderContext, report: NodeReport): Record<string, unknown> {
  const values: Record<string, unknown> = { name: node.name, namespace: node.namespace }
  const supplied = ctx.secrets?.[node.id] ?? {}
  for (const field of plugin.config_fields) {
    if (field.type === 'secret') {
      if (node.data[field.name] !== undefined) report.warn(`${field.name}: a secret field's value comes from the run; the value in the workflow is ignored`)
      if (!ctx.revealSecrets) { values[field.name] = SECRET_MASK; continue }
      const v = supplied[field.name]
      if (v === undefined && field.required) report.error(`${field.name}: no value supplied (the run's secrets for node ${JSON.stringify(node.id)})`)
      values[field.name] = v ?? ''
      continue
    }
    const value = node.data[field.name] ?? field.default
    if (value === undefined || value === null || value === '') {
      if (field.required) report.error(`${field.name}: required`)
      values[field.name] = value ?? ''
      continue
    }
    const problem = checkType(field, value)
    if (problem) report.error(`${field.name}: ${problem}`)
    values[field.name] = value
  }
  return values
}

function apiGroup(apiVersion: string): string {
  const slash = apiVersion.indexOf('/')
  return slash < 0 ? '' : apiVersion.slice(0, slash)
}

export async function renderPluginNode(node: NodeView, ctx: RenderContext, report: NodeReport): Promise<KubeObject[]> {
  const pluginId = String(node.data.pluginId)
  const plugin = await ctx.plugins(pluginId)
  if (!plugin) { report.error(`pluginId: no plugin ${JSON.stringify(pluginId)}`); return [] }
  if (!plugin.enabled) { report.error(`pluginId: plugin ${plugin.name} is disabled; an administrator must enable it`); return [] }
  const values = valuesFor(node, plugin, ctx, report)
  if (report.errors.length > 0) return []
  let documents: Record<string, unknown>[]
  try {
    documents = renderManifestTemplate(templateOf(plugin), values)
  } catch (err) {
    report.error(`plugin ${plugin.name}: ${err instanceof Error ? err.message : 'the template failed'}`)
    return []
  }
  if (documents.length === 0) report.error(`plugin ${plugin.name}: the template produced no object`)
  const labels = stringMap(node.data, 'labels') ?? {}
  const annotations = stringMap(node.data, 'annotations') ?? {}
  for (const p of [...labelProblems(labels, 'labels'), ...annotationProblems(annotations, 'annotations')]) report.error(p)
  return documents.map((doc, i) => {
    const object = doc as KubeObject
    if (apiGroup(String(object.apiVersion)) !== plugin.crd.group) {
      report.error(`plugin ${plugin.name}: document ${i + 1} is a ${JSON.stringify(String(object.apiVersion))} ${JSON.stringify(String(object.kind))}, outside the plugin's API group ${plugin.crd.group}`)
    }
    const meta = (object.metadata && typeof object.metadata === 'object' ? object.metadata : {}) as KubeObject['metadata']
    object.metadata = {
      ...meta,
      labels: { ...labels, ...(meta.labels ?? {}), ...selectorLabels(node.name, ctx.workflowId), ...systemLabels() },
      annotations: { ...annotations, ...(meta.annotations ?? {}), ...systemAnnotations(ctx.workflowId, node.id) },
    }
    return object
  })
}
