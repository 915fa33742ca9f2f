// The component palette and the plugins page in the UI's dialect (CONTRACT.md §2.10, §2.11, §3 "Node type
// identifiers"): the same services as src/routes/templates/ and src/routes/plugins/, with the UI's names
// (`displayName`, `isPlugin`, `crdKinds`, `nodeTypes`…) and its vocabularies (categories, icon names).
import type { FastifyRequest } from 'fastify'
import type { App } from '../../../app-types.ts'
import { PluginListQuery, PluginParams } from '../../../../schemas/plugin.ts'
import { MAX_PAGE_SIZE } from '../../../../schemas/pagination.ts'
import { builtInTemplates, type NodeTemplate, type TemplateParameter } from '../../../services/node-catalogue.ts'
import type { PluginDefinition } from '../../../repositories/plugins.ts'
import { pageReply } from '../../../repositories/pagination.ts'
import { offsetToPage, toCanonical, withCamelAliases } from '../translate.ts'

/**
 * The node types the UI's canvas draws (CONTRACT.md §3): a palette entry creates a node only when its `name`
 * is one of these, or when it is a plugin's. Our other built-in types (pod, replicaset, serviceaccount,
 * poddisruptionbudget) would be cards that add nothing, so they are left out of the UI's palette.
 */
export const CANVAS_NODE_TYPES: ReadonlySet<string> = new Set([
  'deployment', 'service', 'ingress', 'configmap', 'secret', 'persistentvolumeclaim',
  'statefulset', 'job', 'cronjob', 'daemonset', 'hpa', 'networkpolicy',
])

// Our category names where the UI's differ (its palette colours and plugin icons are keyed by its names).
const CATEGORIES: Record<string, string> = { workloads: 'core', config: 'configuration', 'ci-cd': 'cicd' }
const CANONICAL_CATEGORIES: Record<string, string> = Object.fromEntries(Object.entries(CATEGORIES).map(([ours, ui]) => [ui, ours]))
export const uiCategory = (category: string) => CATEGORIES[category] ?? category

// Our icon names → the icon names the UI draws (unknown names show no icon, so they pass unchanged).
const ICONS: Record<string, string> = {
  deployment: 'Package', statefulset: 'Database', daemonset: 'Layers', job: 'Play', cronjob: 'RefreshCw',
  service: 'Network', ingress: 'Globe', configmap: 'FileSliders', secret: 'Lock', pvc: 'HardDrive', hpa: 'TrendingUp',
  networkpolicy: 'Shield', archive: 'Archive', git: 'GitBranch', pipeline: 'GitBranch', database: 'Database',
  queue: 'MessageSquare', brain: 'Brain', chart: 'Activity', route: 'Route', istio: 'Network', shield: 'Shield',
  scale: 'TrendingUp', lambda: 'Zap', certificate: 'FileKey', camera: 'Archive', clock: 'RefreshCw', server: 'Monitor',
  flow: 'GitBranch', plugin: 'Plug',
}
const uiIcon = (icon: string) => ICONS[icon] ?? icon

/**
 * A palette parameter as the UI reads it: `options` as `{value, label}`, no `default` key when there is
 * none (the canvas copies every `default` it finds into the new node's data, a null one included), and a
 * secret field typed `password` (the plugin node uses the type as its input's type, so the value is masked).
 */
function uiParameter(p: TemplateParameter) {
  const { default: value, options, type, ...rest } = p
  return {
    ...rest,
    type: type === 'secret' ? 'password' : type,
    options: options.map((o) => ({ value: o, label: o })),
    ...(value !== null && value !== undefined && { default: value }),
  }
}

export function uiTemplate(t: NodeTemplate) {
  return {
    ...withCamelAliases({ ...t }),
    // The canvas tries the built-in names before `isPlugin`: a plugin named like one would make that node.
    name: t.is_plugin && CANVAS_NODE_TYPES.has(t.name) ? `${t.name}-plugin` : t.name,
    category: uiCategory(t.category),
    icon: uiIcon(t.icon),
    tags: [...t.tags],
    // Not counted here; the UI types it and never reads it.
    usageFrequency: 'unknown',
    // The canvas sets a plugin node's `pluginId` itself (from `pluginId` above); as a field it would be editable.
    parameters: t.parameters.filter((p) => !(t.is_plugin && p.name === 'pluginId')).map(uiParameter),
  }
}

/** A plugin as the plugins page reads it (CONTRACT.md §2.11): ours, plus the UI's names. */
export function uiPlugin(p: PluginDefinition) {
  const category = uiCategory(p.category)
  const icon = uiIcon(p.icon)
  return {
    ...withCamelAliases({ ...p }),
    category,
    icon,
    crdGroup: p.crd.group,
    crdVersion: p.crd.version,
    crdKinds: [p.crd.kind],
    // One plugin, one node type (API.md §6): the palette entry GET /templates shows once it is enabled.
    nodeTypes: [{
      name: p.name, displayName: p.display_name, description: p.description, icon, category,
      fields: p.config_fields.map((f) => ({
        id: f.name, label: f.label, type: f.type, required: f.required,
        ...(f.default !== undefined && { default: f.default }), ...(f.options && { options: f.options }), ...(f.description && { placeholder: f.description }),
      })),
    }],
  }
}

// GET /plugins: the UI sends no paging and shows what comes back, so it is given every plugin (page after
// page through the same service call) unless the request pages itself.
const wholeList = new WeakSet<FastifyRequest>()

async function canonicalPluginQuery(request: FastifyRequest): Promise<void> {
  const query = toCanonical(request.query) as Record<string, unknown>
  if (!('page' in query) && !('offset' in query) && !('limit' in query)) {
    wholeList.add(request)
    query.limit = MAX_PAGE_SIZE
  }
  if (typeof query.category === 'string') query.category = CANONICAL_CATEGORIES[query.category] ?? query.category
  request.query = offsetToPage(query)
}

export default async function catalogueRoutes(app: App) {
  const plugins = app.services.plugins

  app.get('/templates', { schema: { hide: true } }, async () => ({
    templates: [...builtInTemplates(), ...await plugins.templates()]
      .filter((t) => t.is_plugin || CANVAS_NODE_TYPES.has(t.name))
      .map(uiTemplate),
  }))

  app.get('/plugins', {
    preValidation: canonicalPluginQuery,
    schema: { hide: true, querystring: PluginListQuery },
  }, async (request) => {
    const { category, enabled, ...page } = request.query
    const first = await plugins.list(page, { category, enabled })
    const items = [...first.items]
    if (wholeList.has(request)) {
      for (let next = first.page + 1; items.length < first.total; next++) {
        const more = await plugins.list({ ...page, page: next }, { category, enabled })
        if (more.items.length === 0) break
        items.push(...more.items)
      }
    }
    return pageReply('plugins', { ...first, items: items.map(uiPlugin) })
  })

  const admin = { requireAdmin: true }
  // The UI reads nothing from these (it types `{message}`): the plugin in its shape, with a message.
  app.post('/plugins/:id/enable', {
    config: admin,
    schema: { hide: true, params: PluginParams },
  }, async (request) => ({ ...uiPlugin(await plugins.setEnabled(request.params.id, true)), message: 'plugin enabled' }))

  app.post('/plugins/:id/disable', {
    config: admin,
    schema: { hide: true, params: PluginParams },
  }, async (request) => ({ ...uiPlugin(await plugins.setEnabled(request.params.id, false)), message: 'plugin disabled' }))
}
