// aggregate: mingo runs the pipeline; a leading $match goes through the indexed read path first.
import { Aggregator } from 'mingo/aggregator'
import { ProcessingMode } from 'mingo/core'
import { countResult, countShape } from '../count-pipeline.ts'
import { CommandError, ErrorCodes } from '../errors.ts'
import { mingoOptions } from '../mingo-context.ts'
import { forMatching } from '../regex-flags.ts'
import { findMatching, type MatchResult } from '../query-exec.ts'
import type { CommandContext, CommandHandler } from '../state.ts'
import { cloneValue, isPlainObject, type Doc } from '../values.ts'
import { batchSizeOf, cursorReply } from './common.ts'

const UNSUPPORTED_STAGES = new Set([
  '$changeStream', '$collStats', '$indexStats', '$currentOp', '$listSessions', '$listLocalSessions',
  '$planCacheStats', '$search', '$searchMeta', '$vectorSearch', '$geoNear', '$listSearchIndexes', '$out', '$merge',
])

// Stages known not to modify their input documents; any other stage gets deep-copied input so that
// mingo's in-place edits (e.g. $unwind, dotted $set) never reach stored documents.
const NON_MUTATING_STAGES = new Set(['$match', '$group', '$count', '$sort', '$skip', '$limit', '$sortByCount'])

function stageName(stage: unknown): string {
  if (!isPlainObject(stage)) throw new CommandError(ErrorCodes.TypeMismatch, 'Each element of the pipeline array must be an object')
  const keys = Object.keys(stage)
  if (keys.length !== 1 || !keys[0].startsWith('$')) {
    throw new CommandError(ErrorCodes.Location40324, 'A pipeline stage specification object must contain exactly one field.')
  }
  return keys[0]
}

function validatePipeline(pipeline: unknown[]): void {
  for (const stage of pipeline) {
    const name = stageName(stage)
    if (UNSUPPORTED_STAGES.has(name)) {
      throw new CommandError(ErrorCodes.CommandNotSupported, `${name} is not supported by the embedded MongoDB server`)
    }
    const spec = (stage as Doc)[name]
    // Sub-pipelines are checked too: $out inside $facet or $lookup must not slip through.
    if (name === '$facet' && isPlainObject(spec)) {
      for (const sub of Object.values(spec)) if (Array.isArray(sub)) validatePipeline(sub)
    }
    if ((name === '$lookup' || name === '$unionWith') && isPlainObject(spec) && Array.isArray(spec.pipeline)) {
      validatePipeline(spec.pipeline)
    }
  }
}

export interface PipelineSource {
  docs: Doc[]
  rest: Doc[]
  match: MatchResult | undefined
}

/** The pipeline's input: a leading $match answered by the read path, or the whole collection. */
export function pipelineSource(ctx: CommandContext, collName: string | undefined, pipeline: Doc[], withVariables = false): PipelineSource {
  if (collName === undefined) return { docs: [], rest: pipeline, match: undefined }
  const coll = ctx.state.catalog.getCollection(ctx.db, collName)
  const first = pipeline[0]
  // A $match that may reference `let` variables is left to mingo, which knows them.
  if (first && isPlainObject(first.$match) && !withVariables) {
    const match = findMatching(coll, { filter: first.$match }, ctx.state.stats)
    return { docs: match.docs, rest: pipeline.slice(1), match }
  }
  const docs = coll ? [...coll.docs.values()] : []
  ctx.state.stats.docsExamined += docs.length
  return { docs, rest: pipeline, match: undefined }
}

export function runPipeline(ctx: CommandContext, source: PipelineSource, variables?: Doc): Doc[] {
  const { catalog } = ctx.state
  const mutating = source.rest.some((s) => !NON_MUTATING_STAGES.has(Object.keys(s)[0]))
  const agg = new Aggregator(source.rest, mingoOptions({
    variables,
    processingMode: mutating ? ProcessingMode.CLONE_INPUT : ProcessingMode.CLONE_OFF,
    // Joined documents are copies for the same reason.
    collectionResolver: (name: string) => [...(catalog.getCollection(ctx.db, name)?.docs.values() ?? [])].map(cloneValue),
  }))
  return agg.run(source.docs) as Doc[]
}

export const aggregate: CommandHandler = (cmd, ctx) => {
  const target = cmd.aggregate
  let collName: string | undefined
  if (typeof target === 'string' && target !== '') collName = target
  else if (target !== 1) throw new CommandError(ErrorCodes.InvalidNamespace, "aggregate requires a collection name or 1")
  if (!Array.isArray(cmd.pipeline)) throw new CommandError(ErrorCodes.TypeMismatch, "'pipeline' option must be specified as an array")
  validatePipeline(cmd.pipeline)
  const pipeline = forMatching(cmd.pipeline as Doc[])
  if (cmd.explain === true) {
    const source = pipelineSource(ctx, collName, pipeline)
    return { explainVersion: '1', stages: pipeline.map((s) => ({ [Object.keys(s)[0]]: {} })), queryPlanner: { winningPlan: source.match?.plan ?? { stage: 'COLLSCAN' } }, ok: 1 }
  }
  if (!isPlainObject(cmd.cursor)) {
    throw new CommandError(ErrorCodes.FailedToParse, "The 'cursor' option is required, except for aggregate with the explain argument")
  }
  const variables = isPlainObject(cmd.let) ? cmd.let : undefined
  const source = pipelineSource(ctx, collName, pipeline, variables !== undefined)
  const count = source.match && countShape(source.rest)
  if (count) ctx.state.stats.countShortcuts++
  const results = count ? countResult(count, source.docs.length) : runPipeline(ctx, source, variables)
  const ns = collName === undefined ? `${ctx.db}.$cmd.aggregate` : `${ctx.db}.${collName}`
  return cursorReply(ctx, ns, results, { batchSize: batchSizeOf(cmd.cursor.batchSize) })
}
