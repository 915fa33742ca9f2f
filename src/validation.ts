// Request validation. Query strings and path parameters arrive as text, so they are coerced to the
// schema's types; JSON bodies already have types and are never coerced (coercion would turn a canvas's
// `null` into 0 or "" inside a union, and accept "1" for a number).
import { Ajv, type Options } from 'ajv'
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
  const validate = strict.compile(schema as object)
  // A request without a body (Fastify passes null) is checked as an empty object: a route whose fields are all optional accepts
  // it, any other says which field is missing.
  const check = (data: unknown): boolean => {
    const ok = validate(data === undefined || data === null ? {} : data)
    check.errors = validate.errors
    return ok
  }
  check.errors = null as typeof validate.errors
  return check
}
