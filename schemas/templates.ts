import { Type } from 'typebox'
import { StringEnum } from './common.ts'

const Parameter = Type.Object({
  name: Type.String({ description: 'key in the node\'s data' }),
  label: Type.String(),
  type: StringEnum(['string', 'number', 'boolean', 'select', 'textarea', 'secret', 'map', 'list', 'object']),
  required: Type.Boolean(),
  default: Type.Unknown({ description: 'null when there is none' }),
  options: Type.Array(Type.String(), { description: 'choices, for select' }),
  description: Type.String(),
}, { additionalProperties: false })

export const Template = Type.Object({
  id: Type.String(),
  name: Type.String({ description: 'the node type' }),
  display_name: Type.String(),
  category: Type.String(),
  description: Type.String(),
  icon: Type.String(),
  version: Type.String(),
  tags: Type.Array(Type.String()),
  parameters: Type.Array(Parameter),
  is_plugin: Type.Boolean(),
  plugin_id: Type.Union([Type.String(), Type.Null()]),
}, { additionalProperties: false })

export const TemplateList = Type.Object({ templates: Type.Array(Template) }, { additionalProperties: false })
