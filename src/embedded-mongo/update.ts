// Turning an update specification (operators, replacement document or pipeline) into a new document.
// Work happens on a copy, so a failed or rejected update never touches the stored document.
import { ObjectId } from 'bson'
import { Aggregator } from 'mingo/aggregator'
import { update as mingoUpdate, type Modifier } from 'mingo/updater'
import { CommandError, ErrorCodes } from './errors.ts'
import { mingoOptions } from './mingo-context.ts'
import { upsertSeedFields } from './planner.ts'
import { forMatching } from './regex-flags.ts'
import { bsonTag, cloneValue, encodeKey, formatValue, isPlainObject, type Doc } from './values.ts'

const UPDATE_OPERATORS = new Set([
  '$set', '$unset', '$inc', '$mul', '$rename', '$min', '$max', '$currentDate', '$push', '$addToSet', '$pull',
  '$pullAll', '$pop', '$bit', '$setOnInsert',
])
const NUMERIC_OPERATORS = new Set(['$inc', '$mul'])
const ARRAY_OPERATORS = new Set(['$push', '$addToSet', '$pull', '$pullAll', '$pop'])
const PIPELINE_UPDATE_STAGES = new Set(['$addFields', '$set', '$project', '$unset', '$replaceRoot', '$replaceWith'])

export type UpdateKind = 'operators' | 'replacement' | 'pipeline'

export interface UpdateOptions {
  /** The statement's filter; positional `$` resolves against it. */
  query: Doc
  arrayFilters?: Doc[]
  /** True when building a new document for an upsert: `$setOnInsert` applies and `$` cannot. */
  inserting: boolean
}

export function updateKind(u: unknown): UpdateKind {
  if (Array.isArray(u)) return 'pipeline'
  if (!isPlainObject(u)) throw new CommandError(ErrorCodes.FailedToParse, 'Update argument must be either an object or an array')
  const keys = Object.keys(u)
  if (keys.length > 0 && keys[0].startsWith('$')) return 'operators'
  return 'replacement'
}

function mongoTypeName(v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'array'
  if (v instanceof Date) return 'date'
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'double'
  if (typeof v === 'boolean') return 'bool'
  if (typeof v === 'object') return isPlainObject(v) ? 'object' : (bsonTag(v) ?? 'object').toLowerCase()
  return typeof v
}

function plainPathValue(doc: Doc, path: string): unknown {
  let node: unknown = doc
  for (const part of path.split('.')) {
    if (Array.isArray(node) && /^\d+$/.test(part)) node = node[Number(part)]
    else if (isPlainObject(node)) node = node[part]
    else return undefined
  }
  return node
}

// mingo quietly skips some updates MongoDB rejects; check the plain (non-positional) paths up front.
function validateOperandTypes(doc: Doc, mods: Doc): void {
  for (const [op, spec] of Object.entries(mods)) {
    if (!isPlainObject(spec)) continue
    for (const path of Object.keys(spec)) {
      if (path.includes('$')) continue
      const current = plainPathValue(doc, path)
      if (current === undefined) continue
      const tag = typeof current === 'object' && current !== null ? bsonTag(current) : undefined
      if (NUMERIC_OPERATORS.has(op) && (tag === 'Long' || tag === 'Decimal128')) {
        // Int64 beyond 2^53 and Decimal128 stay bson objects, which mingo cannot do arithmetic on.
        throw new CommandError(ErrorCodes.CommandNotSupported, `${op} on a ${tag} value outside the double range is not supported by the embedded MongoDB server`)
      }
      if (NUMERIC_OPERATORS.has(op) && typeof current !== 'number') {
        throw new CommandError(
          ErrorCodes.TypeMismatch,
          `Cannot apply ${op} to a value of non-numeric type. {_id: ${formatValue(doc._id)}} has the field '${path}' of non-numeric type ${mongoTypeName(current)}`,
        )
      }
      if (ARRAY_OPERATORS.has(op) && !Array.isArray(current)) {
        throw new CommandError(
          ErrorCodes.BadValue,
          `The field '${path}' must be an array but is of type ${mongoTypeName(current)} in document {_id: ${formatValue(doc._id)}}`,
        )
      }
    }
  }
}

function assertSameId(before: Doc, after: Doc): void {
  if (encodeKey(after._id) !== encodeKey(before._id)) {
    throw new CommandError(
      ErrorCodes.ImmutableField,
      `After applying the update, the (immutable) field '_id' was found to have been altered to _id: ${formatValue(after._id)}`,
    )
  }
}

function applyOperators(old: Doc, u: Doc, opts: UpdateOptions): Doc | null {
  for (const [op, spec] of Object.entries(u)) {
    if (!UPDATE_OPERATORS.has(op)) {
      throw new CommandError(ErrorCodes.FailedToParse, `Unknown modifier: ${op}. Expected a valid update modifier or pipeline-style update specified as an array`)
    }
    if (!isPlainObject(spec)) {
      throw new CommandError(ErrorCodes.FailedToParse, `Modifiers operate on fields but we found type ${mongoTypeName(spec)} instead. For example: {$mod: {<field>: ...}} not {${op}: ${formatValue(spec)}}`)
    }
  }
  const mods: Doc = { ...u }
  const onInsert = mods.$setOnInsert as Doc | undefined
  delete mods.$setOnInsert
  if (opts.inserting && onInsert && Object.keys(onInsert).length > 0) {
    const set = { ...((mods.$set as Doc | undefined) ?? {}) }
    for (const [k, v] of Object.entries(onInsert)) {
      if (k in set) throw new CommandError(ErrorCodes.ConflictingUpdateOperators, `Updating the path '${k}' would create a conflict at '${k}'`)
      set[k] = v
    }
    mods.$set = set
  }
  for (const k of Object.keys(mods)) if (Object.keys(mods[k] as Doc).length === 0) delete mods[k]
  if (Object.keys(mods).length === 0) return null
  validateOperandTypes(old, mods)
  // $pull takes conditions, and positional `$` re-evaluates the query: both are matching contexts.
  if (mods.$pull) mods.$pull = forMatching(mods.$pull)
  const doc = cloneValue(old)
  const changed = mingoUpdate(doc, mods as Modifier<Doc>, forMatching(opts.arrayFilters), opts.inserting ? undefined : forMatching(opts.query), {
    cloneMode: 'deep',
    queryOptions: mingoOptions(),
  })
  if (changed.length === 0) return null
  assertSameId(old, doc)
  return doc
}

function applyReplacement(old: Doc, u: Doc): Doc {
  for (const k of Object.keys(u)) {
    if (k.startsWith('$')) {
      throw new CommandError(ErrorCodes.BadValue, `The dollar ($) prefixed field '${k}' in '${k}' is not allowed in the context of an update's replacement document.`)
    }
  }
  if ('_id' in u) assertSameId(old, u)
  const doc: Doc = { _id: old._id }
  for (const [k, v] of Object.entries(u)) if (k !== '_id') doc[k] = v
  return doc
}

function applyPipeline(old: Doc, stages: unknown[]): Doc {
  for (const stage of stages) {
    const name = isPlainObject(stage) ? Object.keys(stage)[0] : undefined
    if (!name || !PIPELINE_UPDATE_STAGES.has(name)) {
      throw new CommandError(ErrorCodes.BadValue, `${String(name)} is not allowed to be used within an update`)
    }
  }
  const [result] = new Aggregator(stages as Doc[], mingoOptions()).run([cloneValue(old)]) as Doc[]
  if (!isPlainObject(result)) throw new CommandError(ErrorCodes.BadValue, 'update pipeline did not produce a document')
  if (result._id === undefined) return { _id: old._id, ...result }
  assertSameId(old, result)
  return result
}

/**
 * Applies `u` to a copy of `old`. Returns the new document, or null when the update leaves the document
 * exactly as it was (MongoDB then reports it matched but not modified).
 */
export function applyUpdate(old: Doc, u: unknown, opts: UpdateOptions): Doc | null {
  const kind = updateKind(u)
  let doc: Doc | null
  if (kind === 'operators') doc = applyOperators(old, u as Doc, opts)
  else if (kind === 'pipeline') doc = applyPipeline(old, u as unknown[])
  else doc = applyReplacement(old, u as Doc)
  if (doc && encodeKey(doc) === encodeKey(old)) return null
  return doc
}

function setPath(doc: Doc, path: string, value: unknown): void {
  const parts = path.split('.')
  let node: Doc = doc
  for (let i = 0; i < parts.length - 1; i++) {
    const next = node[parts[i]]
    if (next === undefined) node = node[parts[i]] = {}
    else if (isPlainObject(next)) node = next
    else return
  }
  node[parts[parts.length - 1]] = value
}

/** The document an upsert inserts: the query's equality fields, then the update applied on top. */
export function buildUpsertDocument(query: Doc, u: unknown, arrayFilters: Doc[] | undefined): Doc {
  const seed: Doc = {}
  for (const [path, value] of upsertSeedFields(query)) setPath(seed, path, cloneValue(value))
  const kind = updateKind(u)
  let doc: Doc
  if (kind === 'replacement') {
    doc = { ...(u as Doc) }
    if (doc._id === undefined && seed._id !== undefined) doc._id = seed._id
  } else if (kind === 'operators') {
    // An upsert may choose the new document's _id with $set/$setOnInsert; mingo refuses _id paths, so
    // move it into the seed first.
    const mods: Doc = { ...(u as Doc) }
    for (const op of ['$setOnInsert', '$set']) {
      const spec = mods[op]
      if (isPlainObject(spec) && '_id' in spec) {
        if (seed._id === undefined) seed._id = spec._id
        const { _id: _ignored, ...rest } = spec
        mods[op] = rest
      }
    }
    if (seed._id === undefined) seed._id = new ObjectId()
    doc = applyOperators(seed, mods, { query, arrayFilters, inserting: true }) ?? seed
  } else {
    if (seed._id === undefined) seed._id = new ObjectId()
    doc = applyPipeline(seed, u as unknown[])
  }
  return withIdFirst(doc)
}

/** `_id` generated when absent and always stored as the first field, as MongoDB does. */
export function withIdFirst(doc: Doc): Doc {
  if (doc._id === undefined) return { _id: new ObjectId(), ...doc }
  validateId(doc._id)
  const keys = Object.keys(doc)
  if (keys[0] === '_id') return doc
  const out: Doc = { _id: doc._id }
  for (const k of keys) if (k !== '_id') out[k] = doc[k]
  return out
}

function validateId(id: unknown): void {
  if (Array.isArray(id)) throw new CommandError(ErrorCodes.InvalidIdField, `The '_id' value cannot be of type array`)
  if (id instanceof RegExp || (id !== null && typeof id === 'object' && bsonTag(id) === 'BSONRegExp')) {
    throw new CommandError(ErrorCodes.InvalidIdField, `The '_id' value cannot be of type regex`)
  }
}
