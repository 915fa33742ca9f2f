// CRD plugins as the API shows them (spec "Plugin definition", "Config field", "Plugin categories"; API.md §6).
// Shape rules that one field can check alone live here (and so in the OpenAPI document); the rules that
// relate fields to each other (select defaults among options, the template's references, the rendered
// sample matching `crd`) are checked by the plugin service.
import { Type, type Static } from 'typebox'
import { Timestamp, Id, StringEnum } from './common.ts'
import { PaginationQuery, PageOf } from './pagination.ts'

/** The spec's 13 categories, each with what belongs in it (the palette groups plugin node types by them). */
export const PLUGIN_CATEGORY_INFO = {
  virtualization: { display_name: 'Virtualization', description: 'virtual machines next to containers (KubeVirt)' },
  networking: { display_name: 'Networking', description: 'traffic routing, gateways and service meshes (Gateway API, Istio)' },
  storage: { display_name: 'Storage', description: 'volume snapshots and distributed block storage (CSI snapshots, Longhorn)' },
  monitoring: { display_name: 'Monitoring', description: 'metrics scraping and alerting (Prometheus Operator)' },
  security: { display_name: 'Security', description: 'certificates and secrets management (cert-manager, External Secrets)' },
  workflow: { display_name: 'Workflow', description: 'multi-step jobs and pipelines of containers (Argo Workflows)' },
  database: { display_name: 'Database', description: 'operator-managed databases (CloudNativePG)' },
  messaging: { display_name: 'Messaging', description: 'event streaming and queues (Strimzi Kafka)' },
  backup: { display_name: 'Backup', description: 'scheduled backups and restores of cluster state (Velero)' },
  'ci-cd': { display_name: 'CI/CD', description: 'continuous delivery and build pipelines (Argo CD, Tekton, Flux)' },
  ml: { display_name: 'Machine learning', description: 'model serving and training (KServe)' },
  policy: { display_name: 'Policy', description: 'admission policies that validate or mutate resources (Kyverno)' },
  scaling: { display_name: 'Scaling', description: 'event-driven autoscaling beyond CPU and memory (KEDA)' },
} as const satisfies Record<string, { display_name: string; description: string }>

export type PluginCategory = keyof typeof PLUGIN_CATEGORY_INFO
export const PLUGIN_CATEGORIES = Object.keys(PLUGIN_CATEGORY_INFO) as [PluginCategory, ...PluginCategory[]]
export const CONFIG_FIELD_TYPES = ['string', 'number', 'boolean', 'select', 'textarea', 'secret'] as const
export type ConfigFieldType = typeof CONFIG_FIELD_TYPES[number]

/** Names a config field may not take: the values every template receives, and the node data keys the canvas owns. */
export const RESERVED_FIELD_NAMES = ['name', 'namespace', 'pluginId', 'labels', 'annotations'] as const

const DNS_LABEL = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'
const DNS_SUBDOMAIN_WITH_DOT = '^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$'
export const PLUGIN_VERSION_PATTERN = '^(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)$'
export const MAX_TEMPLATE_LENGTH = 65_536

export const ConfigField = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 63, pattern: '^[A-Za-z_][A-Za-z0-9_]*$', description: 'the template reads it as `{{.<name>}}`; unique within the plugin; not name, namespace, pluginId, labels or annotations' }),
  label: Type.String({ minLength: 1, maxLength: 200, description: 'shown in the node settings panel' }),
  type: StringEnum(CONFIG_FIELD_TYPES, { description: 'string, number, boolean, select, textarea or secret (a secret\'s value comes from the run\'s trigger_data.secrets, never from the workflow)' }),
  default: Type.Optional(Type.Union([Type.String({ maxLength: 16_384 }), Type.Number(), Type.Boolean()], {
    description: 'matches the type: a number for number, a boolean for boolean, a string for string, textarea and select (one of options); secret fields have none',
  })),
  required: Type.Optional(Type.Boolean({ default: false, description: 'the node needs a value (or the default) before it can run; false when omitted' })),
  options: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 100, description: 'select only: the choices, unique strings (even numeric-looking ones)' })),
  description: Type.Optional(Type.String({ maxLength: 1000 })),
}, { additionalProperties: false })

/** A config field as stored and answered: `required` is always there. */
const StoredConfigField = Type.Object({ ...ConfigField.properties, required: Type.Boolean() }, { additionalProperties: false })

export const CrdReference = Type.Object({
  group: Type.String({ maxLength: 253, pattern: DNS_SUBDOMAIN_WITH_DOT, description: 'API group, a DNS subdomain with at least one dot (e.g. cert-manager.io)' }),
  version: Type.String({ maxLength: 20, pattern: '^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$', description: 'API version of the custom resource: v1, v1beta1, v2alpha1, …' }),
  kind: Type.String({ maxLength: 63, pattern: '^[A-Z][A-Za-z0-9]*$', description: 'resource kind, PascalCase (e.g. Certificate)' }),
  plural: Type.String({ maxLength: 63, pattern: DNS_LABEL, description: 'plural resource name, lower-case (e.g. certificates)' }),
}, { additionalProperties: false })

const definitionProperties = {
  name: Type.String({ minLength: 1, maxLength: 63, pattern: DNS_LABEL, description: 'plugin identifier: lower-case letters, digits and -; unique' }),
  display_name: Type.String({ minLength: 1, maxLength: 100, description: 'label shown to users' }),
  description: Type.Optional(Type.String({ maxLength: 2000, default: '', description: 'what the plugin does; should name the operator to install' })),
  category: StringEnum(PLUGIN_CATEGORIES, { description: 'one of the plugin categories (GET /plugins/categories)' }),
  icon: Type.Optional(Type.String({ minLength: 1, maxLength: 100, default: 'plugin', description: 'icon name ("plugin" when omitted)' })),
  crd: CrdReference,
  config_fields: Type.Optional(Type.Array(ConfigField, { maxItems: 100, default: [], description: 'settings shown in the node settings panel' })),
  template: Type.String({ minLength: 1, maxLength: MAX_TEMPLATE_LENGTH, description: 'manifest in Go text/template syntax (API.md §6); reads only .name, .namespace and the config fields; renders the custom resource named by `crd`' }),
}

export const CreatePluginBody = Type.Object({
  ...definitionProperties,
  version: Type.Optional(Type.String({ pattern: PLUGIN_VERSION_PATTERN, description: 'MAJOR.MINOR.PATCH; 1.0.0 when omitted' })),
}, { additionalProperties: false })

export const UpdatePluginBody = Type.Object({
  ...definitionProperties,
  version: Type.Optional(Type.String({
    pattern: PLUGIN_VERSION_PATTERN,
    description: 'optional guard: when given it must equal the stored version (409 otherwise), so an edit based on a stale copy is refused. The service sets the new version itself',
  })),
}, { additionalProperties: false, description: 'the full definition; `name` cannot change (plugin nodes refer to it)' })

export const Plugin = Type.Object({
  id: Id,
  ...definitionProperties,
  description: Type.String(),
  icon: Type.String(),
  config_fields: Type.Array(StoredConfigField),
  version: Type.String({ description: 'MAJOR.MINOR.PATCH: minor +1 when config_fields change, patch +1 when only the template changes' }),
  enabled: Type.Boolean({ description: 'an enabled plugin is a node type in the palette (GET /templates); a new plugin starts disabled' }),
  builtin: Type.Boolean({ description: 'from the built-in catalogue (loaded at start-up)' }),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'Plugin', additionalProperties: false })

export type ConfigFieldInput = Static<typeof ConfigField>
export type CreatePluginInput = Static<typeof CreatePluginBody>
export type UpdatePluginInput = Static<typeof UpdatePluginBody>

export const PluginParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) })
export const PluginListQuery = PaginationQuery(['created_at', 'name', 'category', 'updated_at'], {
  category: Type.Optional(StringEnum(PLUGIN_CATEGORIES)),
  enabled: Type.Optional(Type.Boolean({ description: 'only enabled (true) or only disabled (false) plugins' })),
})
export const PluginList = PageOf('plugins', Type.Ref('Plugin'))
export const EnabledPluginList = Type.Object({
  plugins: Type.Array(Type.Ref('Plugin'), { description: 'every enabled plugin, by name (not paginated: the canvas needs them all)' }),
}, { additionalProperties: false })

export const CategoryList = Type.Object({
  categories: Type.Array(StringEnum(PLUGIN_CATEGORIES), { description: 'the allowed category values' }),
  details: Type.Array(Type.Object({ name: StringEnum(PLUGIN_CATEGORIES), display_name: Type.String(), description: Type.String() }, { additionalProperties: false }), {
    description: 'the same categories, each with a label and what belongs in it',
  }),
}, { additionalProperties: false })
