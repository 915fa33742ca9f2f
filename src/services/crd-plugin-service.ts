// CRD plugins (spec "Plugins", "Plugin enablement"; API.md §6): registration with full validation, edits
// that version themselves, enablement, the palette entries of enabled plugins and the built-in catalogue.
//
// A definition is accepted only when it can work: its template parses, reads nothing but `name`,
// `namespace` and its own fields, and, rendered with sample values, yields exactly the custom resource its
// `crd` names. A definition that would fail at every run is refused at registration, where an admin can fix it.
import { isDeepStrictEqual } from 'node:util'
import { BadRequest, Conflict, NotFound } from '../errors.ts'
import { parseTemplate, renderManifestTemplate, TemplateError, type Template } from '../templating/index.ts'
import { NodeDataSchemas } from '../../schemas/nodes.ts'
import {
  PLUGIN_CATEGORIES, PLUGIN_CATEGORY_INFO, RESERVED_FIELD_NAMES,
  type CreatePluginInput, type UpdatePluginInput, type PluginCategory, type ConfigFieldInput,
} from '../../schemas/plugin.ts'
import {
  toPlugin, type PluginRepository, type PluginDoc, type PluginDefinition, type PluginDefinitionInput, type ConfigField,
} from '../repositories/plugins.ts'
import type { Page, PageRequest } from '../repositories/pagination.ts'
import type { NodeTemplate, TemplateParameter } from './node-catalogue.ts'

export type { PluginDefinition, ConfigField }

export const INITIAL_PLUGIN_VERSION = '1.0.0'

/** The name and namespace a registration renders its sample with. */
export const SAMPLE_NAME = 'sample'
export const SAMPLE_NAMESPACE = 'default'

const SAMPLE_VALUE: Record<ConfigField['type'], (f: ConfigField) => string | number | boolean> = {
  string: () => 'sample',
  textarea: () => 'sample text',
  number: () => 1,
  boolean: () => true,
  select: (f) => f.options![0],
  secret: () => 'sample-secret',
}

/**
 * The version after an edit: MINOR +1 (PATCH reset) when the config fields change, because nodes saved
 * against the old fields may need new values; PATCH +1 when only the template changes, because existing
 * nodes keep working as they are; unchanged otherwise (spec "Versioning" 3).
 */
export function nextVersion(current: string, change: { fields: boolean; template: boolean }): string {
  const [major, minor, patch] = current.split('.').map(Number)
  if (change.fields) return `${major}.${minor + 1}.0`
  if (change.template) return `${major}.${minor}.${patch + 1}`
  return current
}

/** A config field with its keys in one order and unset keys absent, so two copies compare by value. */
function normalizeField(f: ConfigFieldInput | ConfigField): ConfigField {
  return {
    name: f.name, label: f.label, type: f.type, required: f.required ?? false,
    ...(f.default !== undefined && { default: f.default }),
    ...(f.options !== undefined && { options: [...f.options] }),
    ...(f.description !== undefined && { description: f.description }),
  }
}

function typeOfDefault(type: ConfigField['type']): 'string' | 'number' | 'boolean' | null {
  switch (type) {
    case 'number': return 'number'
    case 'boolean': return 'boolean'
    case 'secret': return null
    default: return 'string'
  }
}

function checkFields(fields: ConfigField[]): void {
  const seen = new Set<string>()
  fields.forEach((f, i) => {
    const at = `config_fields/${i} ("${f.name}")`
    if ((RESERVED_FIELD_NAMES as readonly string[]).includes(f.name)) {
      throw new BadRequest(`${at}: the name is reserved (${RESERVED_FIELD_NAMES.join(', ')} are given to every template or owned by the canvas)`)
    }
    if (seen.has(f.name)) throw new BadRequest(`${at}: another field has the same name`)
    seen.add(f.name)
    if (f.type === 'select') {
      if (!f.options?.length) throw new BadRequest(`${at}: a select field needs options (a non-empty list of strings)`)
      if (new Set(f.options).size !== f.options.length) throw new BadRequest(`${at}: options must be unique`)
    } else if (f.options !== undefined) {
      throw new BadRequest(`${at}: options are only for select fields, not ${f.type}`)
    }
    if (f.default === undefined) return
    const expected = typeOfDefault(f.type)
    if (expected === null) throw new BadRequest(`${at}: a secret field has no default (its value comes from the run's trigger_data.secrets)`)
    if (typeof f.default !== expected) throw new BadRequest(`${at}: default must be a ${expected} for a ${f.type} field`)
    if (expected === 'number' && !Number.isFinite(f.default)) throw new BadRequest(`${at}: default must be a finite number`)
    if (f.type === 'select' && !f.options!.includes(f.default as string)) {
      throw new BadRequest(`${at}: default "${String(f.default)}" is not one of the options`)
    }
  })
}

function parse(source: string, name: string): Template {
  try {
    return parseTemplate(source, { name })
  } catch (err) {
    if (err instanceof TemplateError) throw new BadRequest(`template does not parse: ${err.message}`)
    throw err
  }
}

function checkReferences(template: Template, fields: ConfigField[]): void {
  const known = new Set(['name', 'namespace', ...fields.map((f) => f.name)])
  const unknown = [...template.references].filter((r) => !known.has(r)).sort()
  if (unknown.length) {
    throw new BadRequest(`template reads ${unknown.map((u) => `.${u}`).join(', ')}, which ${unknown.length === 1 ? 'is' : 'are'} not a config field (it may read .name, .namespace and its config fields)`)
  }
}

/**
 * The values a node would give the template: every field set (`full`), or only what a minimal node has,
 * where an optional field without a default is the empty string, as the renderer (src/manifests) passes it.
 */
function sampleValues(fields: ConfigField[], full: boolean): Record<string, unknown> {
  const values: Record<string, unknown> = { name: SAMPLE_NAME, namespace: SAMPLE_NAMESPACE }
  for (const f of fields) {
    if (f.default !== undefined) values[f.name] = f.default
    else values[f.name] = full || f.required ? SAMPLE_VALUE[f.type](f) : ''
  }
  return values
}

function checkRenderedSample(template: Template, def: PluginDefinitionInput): void {
  const apiVersion = `${def.crd.group}/${def.crd.version}`
  for (const [label, full] of [['with every field set', true], ['with only required fields and defaults', false]] as const) {
    let docs: Record<string, unknown>[]
    try {
      docs = renderManifestTemplate(template, sampleValues(def.config_fields, full))
    } catch (err) {
      if (err instanceof TemplateError || (err instanceof Error && err.name === 'ManifestTemplateError')) {
        throw new BadRequest(`template sample (${label}) does not render: ${err.message}`)
      }
      throw err
    }
    if (docs.length === 0) throw new BadRequest(`template sample (${label}) renders no document; it must render a ${def.crd.kind}`)
    docs.forEach((doc, i) => {
      if (doc.apiVersion !== apiVersion || doc.kind !== def.crd.kind) {
        throw new BadRequest(`template sample (${label}) document ${i + 1} is ${String(doc.apiVersion)} ${String(doc.kind)}; every document must be ${apiVersion} ${def.crd.kind} as crd says`)
      }
    })
  }
}

/** Every cross-field rule of a definition (the schema checked each field alone); throws BadRequest. */
export function checkDefinition(def: PluginDefinitionInput): void {
  if (!(PLUGIN_CATEGORIES as string[]).includes(def.category)) throw new BadRequest(`category must be one of ${PLUGIN_CATEGORIES.join(', ')}`)
  checkFields(def.config_fields)
  const template = parse(def.template, def.name)
  checkReferences(template, def.config_fields)
  checkRenderedSample(template, def)
}

function definitionOf(input: CreatePluginInput | UpdatePluginInput, version: string): PluginDefinitionInput {
  return {
    name: input.name, display_name: input.display_name, description: input.description ?? '', version,
    category: input.category, icon: input.icon ?? 'plugin', crd: { group: input.crd.group, version: input.crd.version, kind: input.crd.kind, plural: input.crd.plural },
    config_fields: (input.config_fields ?? []).map(normalizeField), template: input.template,
  }
}

const nodeData = NodeDataSchemas.plugin.properties as unknown as Record<'name' | 'namespace' | 'pluginId', { title?: string; description?: string; default?: unknown }>

/** An enabled plugin as a palette entry: the canvas makes a `plugin` node whose data carries `pluginId`. */
export function pluginTemplate(p: PluginDefinition): NodeTemplate {
  const common = (key: 'name' | 'namespace' | 'pluginId', required: boolean, fallback: unknown): TemplateParameter => ({
    name: key, label: nodeData[key].title ?? key, type: 'string', required, default: fallback, options: [], description: nodeData[key].description ?? '',
  })
  return {
    id: `plugin:${p.id}`,
    name: p.name,
    display_name: p.display_name,
    category: p.category,
    description: p.description,
    icon: p.icon,
    version: p.version,
    tags: ['plugin', 'crd', p.crd.group, p.crd.kind],
    parameters: [
      common('name', true, null),
      common('namespace', false, nodeData.namespace.default ?? null),
      common('pluginId', true, p.id),
      ...p.config_fields.map((f) => ({
        name: f.name, label: f.label, type: f.type, required: f.required, default: f.default ?? null, options: f.options ?? [], description: f.description ?? '',
      })),
    ],
    is_plugin: true,
    plugin_id: p.id,
  }
}

export interface CatalogueReport { inserted: string[]; refreshed: string[]; unchanged: string[]; rejected: Array<{ name: string; error: string }> }

export class CrdPluginService {
  constructor(private readonly plugins: PluginRepository) {}

  async register(input: CreatePluginInput): Promise<PluginDefinition> {
    const def = definitionOf(input, input.version ?? INITIAL_PLUGIN_VERSION)
    checkDefinition(def)
    return toPlugin(await this.plugins.create(def))
  }

  /** Full definition update; `version` moves by nextVersion. The name is fixed: plugin nodes refer to it. */
  async update(id: string, input: UpdatePluginInput): Promise<PluginDefinition> {
    const stored = await this.plugins.findById(id)
    if (!stored) throw new NotFound('plugin')
    if (input.name !== stored.name) throw new BadRequest(`name cannot change (it is "${stored.name}"; plugin nodes refer to it); register a new plugin instead`)
    if (input.version !== undefined && input.version !== stored.version) {
      throw new Conflict(`the plugin is at version ${stored.version}, not ${input.version}; reload it and apply your change again`)
    }
    const proposed = definitionOf(input, stored.version)
    const change = {
      fields: !isDeepStrictEqual(proposed.config_fields, stored.config_fields.map(normalizeField)),
      template: proposed.template !== stored.template,
    }
    const changed = change.fields || change.template || (['display_name', 'description', 'category', 'icon', 'crd'] as const)
      .some((k) => !isDeepStrictEqual(proposed[k], stored[k]))
    if (!changed) return toPlugin(stored)
    checkDefinition(proposed)
    proposed.version = nextVersion(stored.version, change)
    const updated = await this.plugins.replaceDefinition(stored._id, stored.version, proposed, stored.builtin ? { customized: true } : {})
    if (!updated) throw new Conflict('the plugin was changed by someone else meanwhile; reload it and apply your change again')
    return toPlugin(updated)
  }

  async get(id: string): Promise<PluginDefinition> {
    const doc = await this.plugins.findById(id)
    if (!doc) throw new NotFound('plugin')
    return toPlugin(doc)
  }

  list(page: PageRequest, filter: { category?: PluginCategory; enabled?: boolean }): Promise<Page<PluginDefinition>> {
    return this.plugins.list(page, filter)
  }

  async listEnabled(): Promise<PluginDefinition[]> {
    return (await this.plugins.listEnabled()).map(toPlugin)
  }

  async setEnabled(id: string, enabled: boolean): Promise<PluginDefinition> {
    const doc = await this.plugins.setEnabled(id, enabled)
    if (!doc) throw new NotFound('plugin')
    return toPlugin(doc)
  }

  categories() {
    return {
      categories: [...PLUGIN_CATEGORIES],
      details: PLUGIN_CATEGORIES.map((name) => ({ name, ...PLUGIN_CATEGORY_INFO[name] })),
    }
  }

  /** The plugin a node names, by id or by name, enabled or not (the renderer decides); null when unknown. */
  async getForRender(pluginId: string): Promise<PluginDefinition | null> {
    const doc: PluginDoc | null = (await this.plugins.findById(pluginId)) ?? (await this.plugins.findByName(pluginId))
    return doc ? toPlugin(doc) : null
  }

  /** Palette entries of the enabled plugins (GET /templates). */
  async templates(): Promise<NodeTemplate[]> {
    return (await this.listEnabled()).map(pluginTemplate)
  }

  /** Plugins whose name, label, description or category matches, for global search (plugins are global). */
  async search(q: string, limit: number): Promise<Array<{ id: string; name: string }>> {
    return (await this.plugins.search(q, limit)).map((d) => ({ id: d._id, name: d.name }))
  }

  /**
   * Loads the built-in catalogue (at start-up): each entry is checked like a registration, then inserted
   * disabled, refreshed when an unedited built-in differs, or left alone. Enable states are never touched.
   * An entry that fails the checks is reported, not loaded.
   */
  async loadCatalogue(entries: readonly CreatePluginInput[]): Promise<CatalogueReport> {
    const report: CatalogueReport = { inserted: [], refreshed: [], unchanged: [], rejected: [] }
    for (const entry of entries) {
      const def = definitionOf(entry, entry.version ?? INITIAL_PLUGIN_VERSION)
      try {
        checkDefinition(def)
      } catch (err) {
        // One broken entry must not keep the service down; the catalogue test keeps this list empty.
        if (!(err instanceof BadRequest)) throw err
        report.rejected.push({ name: def.name, error: err.message })
        continue
      }
      const differs = (stored: PluginDoc) => (Object.keys(def) as Array<keyof PluginDefinitionInput>)
        .some((k) => !isDeepStrictEqual(k === 'config_fields' ? stored.config_fields.map(normalizeField) : stored[k], def[k]))
      const outcome = await this.plugins.upsertBuiltin(def, differs)
      report[outcome === 'inserted' ? 'inserted' : outcome === 'refreshed' ? 'refreshed' : 'unchanged'].push(def.name)
    }
    return report
  }
}
