// The common filter shape `{field: scalar, ...}` (e.g. `{_id, owner_id}`) checked directly, without
// compiling a mingo query per request. It only decides where MongoDB's answer is certain; anything
// it is unsure about (BSON types it does not model, null against arrays, NaN, undefined values)
// returns undefined and the caller asks mingo, so semantics never depend on this shortcut.
import { bsonTag, isPlainObject, type Doc } from './values.ts'

/** One top-level `field: value` condition with a scalar value. */
export type PlainEquality = readonly [field: string, value: unknown]

type Kind = 'string' | 'number' | 'boolean' | 'null' | 'objectId' | 'date' | 'document' | 'array' | 'unknown'

function kindOf(v: unknown): Kind {
  switch (typeof v) {
    case 'string': return 'string'
    case 'number': return Number.isNaN(v) ? 'unknown' : 'number'
    case 'boolean': return 'boolean'
    case 'object':
      if (v === null) return 'null'
      if (Array.isArray(v)) return 'array'
      if (v instanceof Date) return Number.isNaN(v.getTime()) ? 'unknown' : 'date'
      if (isPlainObject(v)) return 'document'
      return bsonTag(v) === 'ObjectId' ? 'objectId' : 'unknown'
    default:
      return 'unknown'
  }
}

const QUERY_KINDS = new Set<Kind>(['string', 'number', 'boolean', 'null', 'objectId', 'date'])

/**
 * The conditions of a filter made only of top-level `field: scalar` pairs, or undefined when the
 * filter has any operator, dotted path, embedded document, array or value type this module does not
 * decide.
 */
export function plainEqualities(filter: Doc): PlainEquality[] | undefined {
  const out: PlainEquality[] = []
  for (const field in filter) {
    if (field === '' || field === '__proto__' || field.charCodeAt(0) === 36 /* $ */ || field.includes('.')) return undefined
    const value = filter[field]
    if (!QUERY_KINDS.has(kindOf(value))) return undefined
    out.push([field, value])
  }
  return out.length > 0 ? out : undefined
}

function sameScalar(stored: unknown, storedKind: Kind, query: unknown, queryKind: Kind): boolean | undefined {
  if (storedKind === 'unknown') return undefined
  // Different BSON types never compare equal (JS numbers already cover int32, int64 and double alike).
  if (storedKind !== queryKind) return false
  switch (queryKind) {
    case 'objectId': return (stored as { equals(o: unknown): boolean }).equals(query)
    case 'date': return (stored as Date).getTime() === (query as Date).getTime()
    default: return stored === query // string, number (-0 === 0, as in MongoDB), boolean, null
  }
}

/** Whether one condition holds for `doc`: true/false when certain, undefined when mingo must decide. */
function conditionHolds(doc: Doc, field: string, query: unknown): boolean | undefined {
  const queryKind = kindOf(query)
  if (!Object.hasOwn(doc, field)) return queryKind === 'null' // null matches a missing field
  const stored = doc[field]
  if (stored === undefined) return undefined
  const storedKind = kindOf(stored)
  if (storedKind !== 'array') return sameScalar(stored, storedKind, query, queryKind)
  // An array matches when any element equals the value (one level deep only); null against arrays
  // (empty arrays, arrays holding null or undefined) is left to mingo.
  if (queryKind === 'null') return undefined
  let unsure = false
  for (const element of stored as unknown[]) {
    const elementKind = kindOf(element)
    const r = elementKind === 'array' ? undefined : sameScalar(element, elementKind, query, queryKind)
    if (r === true) return true
    if (r === undefined) unsure = true
  }
  return unsure ? undefined : false
}

/** Whether every condition holds: true/false when certain, undefined when mingo must decide. */
export function matchesEqualities(doc: Doc, conditions: readonly PlainEquality[]): boolean | undefined {
  let unsure = false
  for (const [field, value] of conditions) {
    const r = conditionHolds(doc, field, value)
    if (r === false) return false
    if (r === undefined) unsure = true
  }
  return unsure ? undefined : true
}
