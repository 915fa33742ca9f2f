// Finds the equality constraints in a filter that an index can answer. The planner only narrows the
// candidate set; every candidate is still checked with the full mingo filter, so a plan only has to
// return a superset of the matching documents.
import { bsonTag, isPlainObject, type Doc } from './values.ts'

/** `$in` lists longer than this are cheaper to answer with a scan than with many lookups. */
export const MAX_IN_LOOKUPS = 1000

function isLookupValue(v: unknown): boolean {
  if (v === undefined || v instanceof RegExp || Array.isArray(v)) return false
  if (v !== null && typeof v === 'object') {
    if (bsonTag(v) === 'BSONRegExp') return false
    if (isPlainObject(v) && Object.keys(v).some((k) => k.startsWith('$'))) return false
  }
  return true
}

/** The values a field must equal (any of) for the condition to hold, or null if the condition is not an equality. */
function equalityValues(cond: unknown): unknown[] | null {
  if (isPlainObject(cond)) {
    const keys = Object.keys(cond)
    const operators = keys.filter((k) => k.startsWith('$'))
    if (operators.length === 0) return [cond] // literal embedded document
    if (operators.length !== keys.length) return null
    if ('$eq' in cond) return isLookupValue(cond.$eq) ? [cond.$eq] : null
    const list = cond.$in
    if (Array.isArray(list) && list.length <= MAX_IN_LOOKUPS && list.every(isLookupValue)) return list
    return null
  }
  return isLookupValue(cond) ? [cond] : null
}

/**
 * Field → allowed values for every top-level (or `$and`-nested) equality in the filter. When the same
 * field is constrained twice the later constraint wins; that is still a valid superset because the
 * full filter re-checks every candidate.
 */
export function equalityConstraints(filter: Doc): Map<string, unknown[]> {
  const out = new Map<string, unknown[]>()
  collectEqualities(filter, out)
  return out
}

function collectEqualities(filter: Doc, out: Map<string, unknown[]>): void {
  for (const field of Object.keys(filter)) {
    const cond = filter[field]
    if (field === '$and' && Array.isArray(cond)) {
      for (const sub of cond) if (isPlainObject(sub)) collectEqualities(sub, out)
      continue
    }
    if (field.startsWith('$')) continue
    const values = equalityValues(cond)
    if (values) out.set(field, values)
  }
}

/**
 * The `_id` value when the filter is exactly `{_id: <literal>}` or `{_id: {$eq: <literal>}}`: the
 * common point lookup, answered straight from the `_id` map.
 */
export function soleIdEquality(filter: Doc): { value: unknown } | undefined {
  let count = 0
  for (const k in filter) {
    if (k !== '_id' || ++count > 1) return undefined
  }
  if (count !== 1) return undefined
  const values = equalityValues(filter._id)
  return values && values.length === 1 ? { value: values[0] } : undefined
}

/** Single-valued equalities only: the fields an upsert copies from its query into the new document. */
export function upsertSeedFields(filter: Doc): Array<[string, unknown]> {
  const out: Array<[string, unknown]> = []
  for (const [field, values] of equalityConstraints(filter)) {
    if (values.length === 1) out.push([field, values[0]])
  }
  return out
}
