// Arbitraries from the JSON schemas of the generated OpenAPI document: values a client following the
// document would send. Hostile variants live in fuzz-mutations.ts; this module stays "valid-ish" on purpose
// (patterns and formats are honoured where fast-check can, so requests get past validation into handlers).
import fc from 'fast-check'
import { freeFormAttack } from './fuzz-mutations.ts'

export type JsonSchema = { [key: string]: unknown }

export interface SchemaContext {
  /** The document, for `#/components/...` references. */
  doc: JsonSchema
  /** A replacement arbitrary for a property by name (e.g. URLs that must not leave the machine). */
  hint?: (name: string, schema: JsonSchema) => fc.Arbitrary<unknown> | undefined
  /** Known-good request bodies of an operation, mixed with the generated ones. */
  bodyHint?: (method: string, path: string) => fc.Arbitrary<unknown> | undefined
}

/** Longest string generated in the common case; long strings up to maxLength come from `boundary`. */
const SHORT = 24
/** Free-form objects are generated this deep; the deep-nesting attack is a mutation, not a value. */
const FREE_DEPTH = 3

export function resolveRef(doc: JsonSchema, schema: JsonSchema): JsonSchema {
  let current = schema
  for (let hops = 0; typeof current.$ref === 'string' && hops < 20; hops++) {
    const path = (current.$ref as string).replace(/^#\//, '').split('/')
    current = path.reduce<unknown>((node, key) => (node as JsonSchema)?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc) as JsonSchema
    if (!current) throw new Error(`unresolvable $ref ${schema.$ref as string}`)
  }
  return current
}

/** What a free-form field (`additionalProperties: {}`, no type) may hold: ordinary JSON, and the shapes the
 * schema cannot refuse but storage may not hold (deep nesting, NUL and operator-looking keys). */
export const freeJson = (): fc.Arbitrary<unknown> => fc.oneof(
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: FREE_DEPTH }) },
  { weight: 1, arbitrary: freeFormAttack },
)

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined
}

/** Strings matching a pattern; fast-check has no lookarounds, so they are dropped (the result may then
 * miss the pattern now and then, which the fuzzer does not mind). */
function matching(pattern: string): fc.Arbitrary<string> {
  try {
    return fc.stringMatching(new RegExp(pattern))
  } catch {
    try {
      return fc.stringMatching(new RegExp(pattern.replace(/\(\?<?[=!](?:[^()\\]|\\.)*\)/g, '')))
    } catch {
      return fc.string()
    }
  }
}

function stringArbitrary(schema: JsonSchema): fc.Arbitrary<string> {
  const minLength = num(schema.minLength) ?? 0
  const maxLength = num(schema.maxLength) ?? 10_000
  const fits = (s: string) => s.length >= minLength && s.length <= maxLength
  const options: Array<fc.Arbitrary<string>> = []
  if (schema.format === 'email') options.push(fc.emailAddress().filter(fits))
  else if (schema.format === 'uri' || schema.format === 'url') options.push(fc.webUrl().filter((s) => fits(s) && (!schema.pattern || new RegExp(schema.pattern as string).test(s))))
  else if (schema.format === 'date-time') options.push(fc.date({ noInvalidDate: true }).map((d) => d.toISOString()))
  else if (typeof schema.pattern === 'string') options.push(matching(schema.pattern).filter(fits))
  else {
    const common = fc.string({ minLength, maxLength: Math.max(minLength, Math.min(maxLength, SHORT)) })
    const unicode = fc.string({ unit: 'grapheme', minLength, maxLength: Math.max(minLength, Math.min(maxLength, SHORT)) }).filter(fits)
    // The boundary: exactly the longest string the schema allows, which every layer below must hold.
    const boundary = fc.constantFrom('x', 'é', '\u{1F600}').map((c) => c.repeat(Math.ceil(maxLength / c.length)).slice(0, maxLength)).filter(fits)
    options.push(common, unicode, ...(maxLength <= 300_000 ? [boundary] : []))
  }
  return options.length === 1 ? options[0] : fc.oneof(...options)
}

function numberArbitrary(schema: JsonSchema, integer: boolean): fc.Arbitrary<number> {
  const min = num(schema.minimum) ?? (num(schema.exclusiveMinimum) !== undefined ? num(schema.exclusiveMinimum)! + (integer ? 1 : Number.EPSILON) : undefined)
  const max = num(schema.maximum) ?? (num(schema.exclusiveMaximum) !== undefined ? num(schema.exclusiveMaximum)! - (integer ? 1 : Number.EPSILON) : undefined)
  if (integer) return fc.integer({ min: min ?? Number.MIN_SAFE_INTEGER, max: max ?? Number.MAX_SAFE_INTEGER })
  return fc.double({ min, max, noNaN: true, noDefaultInfinity: true })
}

function objectArbitrary(schema: JsonSchema, ctx: SchemaContext, depth: number): fc.Arbitrary<unknown> {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>
  const required = new Set((schema.required ?? []) as string[])
  const model: Record<string, fc.Arbitrary<unknown>> = {}
  for (const [name, sub] of Object.entries(properties)) model[name] = ctx.hint?.(name, sub) ?? arbitraryFor(sub, ctx, depth + 1)
  const known = fc.record(model, { requiredKeys: [...required].filter((k) => k in model) })
  const extra = schema.additionalProperties
  if (extra === undefined || extra === false || depth >= FREE_DEPTH + 2) return known
  const valueArb = extra === true || (typeof extra === 'object' && Object.keys(extra as object).length === 0)
    ? freeJson()
    : arbitraryFor(extra as JsonSchema, ctx, depth + 1)
  const additional = fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !(k in properties)), valueArb, { maxKeys: 4 })
  return fc.tuple(known, additional).map(([k, a]) => ({ ...a, ...(k as object) }))
}

/** An arbitrary producing values the schema accepts (as far as fast-check can honour it). */
export function arbitraryFor(input: JsonSchema, ctx: SchemaContext, depth = 0): fc.Arbitrary<unknown> {
  const schema = resolveRef(ctx.doc, input)
  if ('const' in schema) return fc.constant(schema.const)
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]))
  const alternatives = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined
  if (Array.isArray(alternatives)) return fc.oneof(...alternatives.map((s) => arbitraryFor({ ...schema, anyOf: undefined, oneOf: undefined, ...s }, ctx, depth)))
  if (Array.isArray(schema.allOf)) {
    const merged = (schema.allOf as JsonSchema[]).reduce<JsonSchema>((acc, s) => ({ ...acc, ...resolveRef(ctx.doc, s) }), { ...schema, allOf: undefined })
    return arbitraryFor(merged, ctx, depth)
  }
  if (Array.isArray(schema.type)) return fc.oneof(...(schema.type as string[]).map((type) => arbitraryFor({ ...schema, type }, ctx, depth)))
  switch (schema.type) {
    case 'string': return stringArbitrary(schema)
    case 'integer': return numberArbitrary(schema, true)
    case 'number': return numberArbitrary(schema, false)
    case 'boolean': return fc.boolean()
    case 'null': return fc.constant(null)
    case 'array': {
      const items = schema.items ? arbitraryFor(schema.items as JsonSchema, ctx, depth + 1) : freeJson()
      const minLength = num(schema.minItems) ?? 0
      return fc.array(items, { minLength, maxLength: Math.max(minLength, Math.min(num(schema.maxItems) ?? 4, 4)) })
    }
    case 'object': return objectArbitrary(schema, ctx, depth)
    default:
      if (schema.properties) return objectArbitrary({ ...schema, type: 'object' }, ctx, depth)
      return freeJson()
  }
}
