// One mingo operator context for every query, projection, update and aggregation. It is built from
// mingo's operator modules rather than the default entry point so that `$sort` can use MongoDB's type
// ordering and so that stages writing to other collections are refused instead of silently writing
// into throwaway arrays.
import { Context } from 'mingo/core'
import { Lazy, type Iterator } from 'mingo/lazy'
import { Query } from 'mingo/query'
import * as accumulatorOperators from 'mingo/operators/accumulator'
import * as expressionOperators from 'mingo/operators/expression'
import * as pipelineOperators from 'mingo/operators/pipeline'
import * as projectionOperators from 'mingo/operators/projection'
import * as queryOperators from 'mingo/operators/query'
import * as windowOperators from 'mingo/operators/window'
import type { Options } from 'mingo/types'
import { CommandError, ErrorCodes } from './errors.ts'
import { forMatching } from './regex-flags.ts'
import { parseSort, sortDocuments } from './sort.ts'
import type { Doc } from './values.ts'

function $sort(coll: Iterator, spec: unknown): Iterator {
  const keys = parseSort(spec)
  if (keys.length === 0) throw new CommandError(ErrorCodes.BadValue, '$sort stage must have at least one sort key')
  return coll.transform((docs: unknown[]) => Lazy(sortDocuments(docs, keys)))
}

// mingo answers `[{n: 0}]` for an empty input; MongoDB produces no document at all.
function $count(coll: Iterator, field: unknown): Iterator {
  if (typeof field !== 'string' || field === '' || field.startsWith('$') || field.includes('.')) {
    throw new CommandError(ErrorCodes.BadValue, '$count field must be a non-empty string without "$" or "."')
  }
  return coll.transform((docs: unknown[]) => Lazy(docs.length > 0 ? [{ [field]: docs.length }] : []))
}

function refused(stage: string) {
  return (): Iterator => {
    throw new CommandError(ErrorCodes.CommandNotSupported, `${stage} is not supported by the embedded MongoDB server`)
  }
}

const { $sort: _mingoSort, $count: _mingoCount, $out: _out, $merge: _merge, ...otherStages } = pipelineOperators

const context = Context.init({
  accumulator: accumulatorOperators,
  expression: expressionOperators,
  pipeline: { ...otherStages, $sort, $count, $out: refused('$out'), $merge: refused('$merge') },
  projection: projectionOperators,
  query: queryOperators,
  window: windowOperators,
} as unknown as Parameters<typeof Context.init>[0])

export function mingoOptions(extra: Partial<Options> = {}): Partial<Options> {
  // Scripts ($where, $function, $accumulator) would need code from the wire; never run them.
  return { context, scriptEnabled: false, ...extra }
}

export function compileFilter(filter: Doc): Query {
  return new Query(forMatching(filter), mingoOptions())
}

export { Query }
