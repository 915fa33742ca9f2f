// Request validation. Query strings and path parameters arrive as text, so they are coerced to the
// schema's types; JSON bodies already have types and are never coerced (coercion would turn a canvas's
// `null` into 0 or "" inside a union, and accept "1" for a number).
import { Ajv, type ErrorObject, type Options } from 'ajv'
import addFormats from 'ajv-formats'
import type { FastifySchema, FastifySchemaCompiler } from 'fastify'

function makeAjv(coerce: boolean): Ajv {
  const options: Options = { removeAdditional: false, useDefaults: true, allErrors: false, coerceTypes: coerce ? 'array' : false, strict: false }
  const ajv = new Ajv(options)
  addFormats.default(ajv)
  return ajv
}

const coercing = makeAjv(true)
const strict = makeAjv(false)

export const validatorCompiler: FastifySchemaCompiler<FastifySchema> = ({ schema, httpPart }) => {
  if (httpPart !== 'body') return coercing.compile(schema as object)
  // A request without a body arrives here as an empty object (src/json-body.ts), so a route whose fields
  // are all optional accepts it and any other says which field is missing.
  return strict.compile(schema as object)
}

const show = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value))
const isBranchOf = (error: ErrorObject, union: ErrorObject) => error !== union && error.schemaPath.startsWith(`${union.schemaPath}/`)
const isUnion = (error: ErrorObject) => error.keyword === 'anyOf' || error.keyword === 'oneOf'

/** What one failed branch of a union allows, when it is a plain value or type; undefined otherwise. */
function allowed(error: ErrorObject): { values?: unknown[]; type?: string } | undefined {
  if (error.keyword === 'const') return { values: [error.params.allowedValue] }
  if (error.keyword === 'enum') return { values: error.params.allowedValues as unknown[] }
  if (error.keyword === 'type') return { type: String(error.params.type) }
  return undefined
}

function describe(error: ErrorObject, all: ErrorObject[]): string {
  switch (error.keyword) {
    case 'additionalProperties': return `must not have additional property "${error.params.additionalProperty}"`
    case 'required': return `must have required property "${error.params.missingProperty}"`
    case 'enum': return `must be one of ${(error.params.allowedValues as unknown[]).map(show).join(', ')}`
    case 'const': return `must be ${show(error.params.allowedValue)}`
    case 'anyOf':
    case 'oneOf': {
      const branches = all.filter((e) => isBranchOf(e, error))
      const plain = branches.filter((e) => e.instancePath === error.instancePath).map(allowed)
      if (branches.length > 0 && plain.length === branches.length && plain.every((a) => a !== undefined)) {
        const values = [...new Set(plain.flatMap((a) => a!.values ?? []))].map(show)
        const types = [...new Set(plain.flatMap((a) => (a!.type ? [a!.type] : [])))]
        if (values.length === 0) return `must be ${types.join(' or ')}`
        return `must be one of ${values.join(', ')}${types.length > 0 ? ` or ${types.join(' or ')}` : ''}`
      }
      // A union of shapes: the first branch's complaint is the most useful single message.
      const first = branches[0]
      return first ? `${first.instancePath === error.instancePath ? '' : `${first.instancePath.slice(error.instancePath.length + 1)} `}${describe(first, all)} (or match another allowed form)` : 'does not match any allowed form'
    }
    default: return (error.message ?? 'is invalid').replace(/\bNOT\b/g, 'not')
  }
}

/**
 * One message for a validation failure, naming the field and what it accepts (Fastify's
 * `schemaErrorFormatter`). ajv stops at the first mistake (allErrors: false), but a union reports each of
 * its branches before itself: those collapse into one message ("must be one of draft, published, archived").
 */
export function formatValidationErrors(errors: ErrorObject[], dataVar: string): Error {
  const unions = errors.filter(isUnion)
  const first = errors.find((e) => !unions.some((u) => isBranchOf(e, u))) ?? errors[0]
  if (!first) return new Error(`${dataVar} is invalid`)
  return new Error(`${dataVar}${first.instancePath} ${describe(first, errors)}`)
}
