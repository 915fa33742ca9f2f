// The driver's countDocuments sends `[{$match}, ({$skip}), ({$limit}), {$group: {_id: 1, n: {$sum: 1}}}]`.
// Once the read path has the matched documents, that answer is their number: building a mingo
// aggregator and grouping them costs far more than the match itself. Only this exact shape, with
// literal values MongoDB would accept, is recognised; anything else (or anything odd) runs through mingo,
// which also gives every error.
import { isPlainObject, type Doc } from './values.ts'

export interface CountShape {
  /** The group key: a constant, so every matched document falls in one group. */
  id: number | string | boolean | null
  field: string
  skip: number
  limit: number | undefined
}

const isConstant = (v: unknown): v is CountShape['id'] =>
  v === null || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v)) || (typeof v === 'string' && !v.startsWith('$'))

const onlyKey = (stage: Doc): string | undefined => {
  const keys = Object.keys(stage)
  return keys.length === 1 ? keys[0] : undefined
}

/** The count the stages after a leading `$match` compute, or undefined when they are anything else. */
export function countShape(rest: readonly Doc[]): CountShape | undefined {
  let i = 0
  let skip = 0
  let limit: number | undefined
  if (rest[i] && onlyKey(rest[i]) === '$skip') {
    const n = rest[i++].$skip
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) return undefined
    skip = n
  }
  if (rest[i] && onlyKey(rest[i]) === '$limit') {
    const n = rest[i++].$limit
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n <= 0) return undefined
    limit = n
  }
  if (i !== rest.length - 1 || onlyKey(rest[i]) !== '$group') return undefined
  const group = rest[i].$group
  if (!isPlainObject(group)) return undefined
  const keys = Object.keys(group)
  if (keys.length !== 2 || keys[0] !== '_id' || !isConstant(group._id)) return undefined
  const field = keys[1]
  if (field === '' || field.startsWith('$') || field.includes('.')) return undefined
  const acc = group[field]
  if (!isPlainObject(acc) || onlyKey(acc) !== '$sum' || acc.$sum !== 1) return undefined
  return { id: group._id, field, skip, limit }
}

/** The pipeline's result for `matched` documents: one group, or none when nothing matched. */
export function countResult(shape: CountShape, matched: number): Doc[] {
  const n = Math.min(Math.max(0, matched - shape.skip), shape.limit ?? Infinity)
  return n === 0 ? [] : [{ _id: shape.id, [shape.field]: n }]
}
