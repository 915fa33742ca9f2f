// The list-view projection shape `{a: 1, b: 1, count: {$size: …}}` applied without mingo's `$project`
// machinery, which rebuilds its handlers per batch and walks every included path through its generic
// graph resolver. Only top-level inclusions, an `_id` exclusion and top-level computed fields (one
// expression operator each, evaluated by mingo's own expression evaluator) are taken; anything else
// returns undefined and the caller uses mingo. Fields come in MongoDB's order: the included ones (and
// `_id`) in the document's order, then the computed ones in the projection's order. mingo's own order
// differs (it depends on the values' types), so the two agree on fields and values, not on order.
import { Context, evalExpr } from 'mingo/core'
import type { Options } from 'mingo/types'
import { mingoOptions } from './mingo-context.ts'
import { isDigits, isPlainObject, type Doc } from './values.ts'

// evalExpr given plain options copies every operator table of the context on each call (most of the
// cost of a small expression). Given its own ComputeOptions it only clones that; the class is not
// exported, so one instance is obtained from an operator that returns the options it is called with.
interface ComputeOptionsClass { init(options: Options): Options }
const probe = Context.init({ expression: { $computeOptions: (_obj: unknown, _expr: unknown, options: unknown) => options } } as never)
const ComputeOptions = (evalExpr({}, { $computeOptions: 1 }, { context: probe } as Options) as object).constructor as unknown as ComputeOptionsClass

// Projection operators (not expressions) need mingo's projection handling.
const PROJECTION_OPERATORS = new Set(['$slice', '$elemMatch', '$meta'])

export function fastProjector(spec: Doc): ((doc: Doc) => Doc) | undefined {
  const included: string[] = []
  const computed: Array<[string, Doc]> = []
  let id: 'included' | 'excluded' = 'included'
  for (const field of Object.keys(spec)) {
    // Integer-like keys would change the object key order mingo's handler table iterates in.
    if (field === '' || field === '__proto__' || field.startsWith('$') || field.includes('.') || isDigits(field)) return undefined
    const v = spec[field]
    if (field === '_id') {
      if (v === 1 || v === true) id = 'included'
      else if (v === 0 || v === false) id = 'excluded'
      else return undefined
    } else if (v === 1 || v === true) {
      included.push(field)
    } else if (isPlainObject(v)) {
      const ops = Object.keys(v)
      if (ops.length !== 1 || !ops[0].startsWith('$') || PROJECTION_OPERATORS.has(ops[0])) return undefined
      computed.push([field, v])
    } else {
      return undefined
    }
  }
  if (included.length + computed.length === 0) return undefined
  // Should a mingo upgrade change that, plain options stay correct, only slower.
  const options = typeof ComputeOptions.init === 'function' ? ComputeOptions.init(mingoOptions() as Options) : (mingoOptions() as Options)
  const keep = new Set(included)
  if (id !== 'excluded') keep.add('_id')
  return (doc) => {
    const out: Doc = {}
    for (const field in doc) if (keep.has(field)) out[field] = doc[field]
    for (const [field, expr] of computed) out[field] = evalExpr(doc, expr, options)
    return out
  }
}
