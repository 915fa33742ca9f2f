// Helpers that keep catalogue entries short and typed like a registration body.
import type { ConfigFieldInput, CreatePluginInput } from '../../../schemas/plugin.ts'

/** Catalogue entries spell out what a registration may omit: their own version, a description, the fields. */
export type CatalogueEntry = CreatePluginInput & { version: string; description: string; config_fields: ConfigFieldInput[] }

type Extra = Partial<Pick<ConfigFieldInput, 'required' | 'description'>>

export const field = {
  string: (name: string, label: string, dflt?: string, extra: Extra = {}): ConfigFieldInput =>
    ({ name, label, type: 'string', required: false, ...(dflt !== undefined && { default: dflt }), ...extra }),
  textarea: (name: string, label: string, extra: Extra = {}): ConfigFieldInput => ({ name, label, type: 'textarea', required: false, ...extra }),
  number: (name: string, label: string, dflt?: number, extra: Extra = {}): ConfigFieldInput =>
    ({ name, label, type: 'number', required: false, ...(dflt !== undefined && { default: dflt }), ...extra }),
  boolean: (name: string, label: string, dflt: boolean, extra: Extra = {}): ConfigFieldInput => ({ name, label, type: 'boolean', required: false, default: dflt, ...extra }),
  select: (name: string, label: string, options: string[], dflt: string, extra: Extra = {}): ConfigFieldInput =>
    ({ name, label, type: 'select', required: true, options, default: dflt, ...extra }),
}
