// The read path shared by find, count, distinct, update, delete, findAndModify and aggregate:
// narrow candidates with an index when possible, check each with the mingo filter, sort, skip, limit.
import type { Collection, PlanInfo } from './collection.ts'
import { CommandError, ErrorCodes } from './errors.ts'
import { matchesEqualities, plainEqualities } from './equality-match.ts'
import { fastProjector } from './fast-projection.ts'
import { compileFilter, mingoOptions, Query } from './mingo-context.ts'
import { forMatching } from './regex-flags.ts'
import { parseSort, sortDocuments } from './sort.ts'
import type { ServerStats } from './state.ts'
import { cloneValue, isPlainObject, type Doc } from './values.ts'

export interface MatchOptions {
  filter: Doc
  sort?: unknown
  skip?: number
  /** 0 or undefined means no limit. */
  limit?: number
}

export interface MatchResult {
  docs: Doc[]
  plan: PlanInfo
  examined: number
}

const NO_PLAN: PlanInfo = { stage: 'COLLSCAN', keysExamined: 0 }

export function asFilter(v: unknown, what = 'filter'): Doc {
  if (v === undefined || v === null) return {}
  if (!isPlainObject(v)) throw new CommandError(ErrorCodes.TypeMismatch, `${what} must be an object`)
  return v
}

export function nonNegativeInt(v: unknown, what: string): number | undefined {
  if (v === undefined || v === null) return undefined
  const n = Number(v)
  if (!Number.isInteger(n) || n < 0) throw new CommandError(ErrorCodes.BadValue, `${what} must be a non-negative integer`)
  return n
}

export function findMatching(coll: Collection | undefined, opts: MatchOptions, stats: ServerStats): MatchResult {
  const sortKeys = parseSort(opts.sort)
  const candidates = coll?.candidates(opts.filter)
  // A filter on _id alone is answered exactly by the lookup, and a filter of plain scalar equalities
  // (`{_id, owner_id}`, `{email}`) is checked directly, so the (comparatively costly) mingo compilation
  // is skipped or deferred to a candidate the direct check cannot decide. Any other filter is compiled
  // even for a missing collection, so that a bad filter fails the same way whether or not it exists.
  const equalities = candidates?.exact ? undefined : plainEqualities(opts.filter)
  let query: Query | undefined
  const compile = (): Query => {
    stats.filtersCompiled++
    return compileFilter(opts.filter)
  }
  if (!candidates?.exact && !equalities) query = compile()
  if (!coll || !candidates) return { docs: [], plan: NO_PLAN, examined: 0 }
  const skip = opts.skip ?? 0
  const limit = opts.limit ?? 0
  // Without a sort the first skip+limit matches are the answer, so stop scanning there.
  const enough = sortKeys.length === 0 && limit > 0 ? skip + limit : Infinity
  const { docs, plan } = candidates
  const matched: Doc[] = []
  let examined = 0
  for (const doc of docs) {
    examined++
    let matches: boolean | undefined = true
    if (equalities) {
      matches = matchesEqualities(doc, equalities)
      if (matches === undefined) matches = (query ??= compile()).test(doc)
    } else if (query) {
      matches = query.test(doc)
    }
    if (matches) {
      matched.push(doc)
      if (matched.length >= enough) break
    }
  }
  stats.docsExamined += examined
  let out = sortKeys.length > 0 ? sortDocuments(matched, sortKeys) : matched
  if (skip > 0 || limit > 0) out = out.slice(skip, limit > 0 ? skip + limit : undefined)
  return { docs: out, plan, examined }
}

// mingo's exclusion projection copies the top level and then deletes nested fields in place, which
// would reach into stored documents; such projections work on copies.
function mutatesNested(projection: Doc): boolean {
  return Object.entries(projection).some(([k, v]) => k.includes('.') && (v === 0 || v === false))
}

/** A batch transform applying a find-style projection, or undefined for no projection. */
export function makeProjector(filter: Doc, projection: unknown): ((docs: Doc[]) => Doc[]) | undefined {
  if (projection === undefined || projection === null) return undefined
  if (!isPlainObject(projection)) throw new CommandError(ErrorCodes.TypeMismatch, 'projection must be an object')
  if (Object.keys(projection).length === 0) return undefined
  // Positional projections (`field.$`) resolve against the filter, so only they carry it (mingo's find
  // also filters; every document given here already matched). Others must work on any document, e.g.
  // the post-image of findAndModify, which may no longer match.
  const positional = Object.keys(projection).some((k) => k.endsWith('.$'))
  const spec = forMatching(projection)
  const fast = positional ? undefined : fastProjector(spec)
  if (fast) return (docs) => docs.map(fast)
  const query = new Query(positional ? forMatching(filter) : {}, mingoOptions())
  const copy = mutatesNested(projection)
  return (docs) => query.find(copy ? docs.map(cloneValue) : docs, spec).all() as Doc[]
}
