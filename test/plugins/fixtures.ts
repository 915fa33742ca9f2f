// A small, valid plugin definition that the plugin tests mutate one rule at a time.
export const WIDGET_TEMPLATE = `apiVersion: widgets.example.com/v1beta1
kind: Widget
metadata:
  name: {{ .name }}
  namespace: {{ .namespace }}
spec:
  size: {{ .size }}
  mode: {{ .mode }}
  verbose: {{ .verbose }}
  {{- if .owner }}
  owner: {{ .owner }}
  {{- end }}
`

export function widget(overrides: Record<string, unknown> = {}) {
  return {
    name: 'widget',
    display_name: 'Widget',
    description: 'A widget. Requires the widget operator.',
    category: 'networking',
    icon: 'box',
    crd: { group: 'widgets.example.com', version: 'v1beta1', kind: 'Widget', plural: 'widgets' },
    config_fields: [
      { name: 'size', label: 'Size', type: 'number', default: 3, required: true },
      { name: 'mode', label: 'Mode', type: 'select', options: ['fast', 'safe'], default: 'safe', required: false },
      { name: 'verbose', label: 'Verbose', type: 'boolean', default: false, required: false },
      { name: 'note', label: 'Note', type: 'textarea', required: false },
      { name: 'token', label: 'Token', type: 'secret', required: false },
      { name: 'owner', label: 'Owner', type: 'string', required: false },
    ],
    template: WIDGET_TEMPLATE,
    ...overrides,
  }
}

type Field = Record<string, unknown>

/** The widget with one config field replaced (by index) or appended. */
export function withField(index: number, field: Field) {
  const def = widget()
  const fields = [...def.config_fields] as Field[]
  fields[index] = field
  return { ...def, config_fields: fields }
}
