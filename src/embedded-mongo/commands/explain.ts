// explain for the read commands: reports the plan the embedded planner chose and how many documents
// it examined, in the shape MongoDB uses (queryPlanner.winningPlan, executionStats.totalDocsExamined).
import type { PlanInfo } from '../collection.ts'
import { CommandError, ErrorCodes } from '../errors.ts'
import { asFilter, findMatching, nonNegativeInt, type MatchResult } from '../query-exec.ts'
import type { CommandHandler } from '../state.ts'
import { isPlainObject, type Doc } from '../values.ts'
import { pipelineSource } from './aggregate.ts'
import { targetCollection } from './common.ts'

function winningPlan(plan: PlanInfo, filter: Doc, keyPattern: Doc | undefined): Doc {
  if (plan.stage === 'IDHACK') return { stage: 'IDHACK' }
  if (plan.stage === 'IXSCAN') {
    return { stage: 'FETCH', filter, inputStage: { stage: 'IXSCAN', indexName: plan.indexName, keyPattern } }
  }
  return { stage: 'COLLSCAN', filter, direction: 'forward' }
}

export const explain: CommandHandler = (cmd, ctx) => {
  const inner = cmd.explain
  if (!isPlainObject(inner)) throw new CommandError(ErrorCodes.TypeMismatch, 'explain command requires a nested object')
  const command = Object.keys(inner)[0]
  const started = Date.now()
  let name: string
  let filter: Doc
  let result: MatchResult
  switch (command) {
    case 'find':
      name = targetCollection(inner, 'find')
      filter = asFilter(inner.filter)
      result = findMatching(ctx.state.catalog.getCollection(ctx.db, name), {
        filter,
        sort: inner.sort,
        skip: nonNegativeInt(inner.skip, 'skip'),
        limit: Math.abs(Number(inner.limit ?? 0)) || 0,
      }, ctx.state.stats)
      break
    case 'count':
    case 'distinct':
      name = targetCollection(inner, command)
      filter = asFilter(inner.query, 'query')
      result = findMatching(ctx.state.catalog.getCollection(ctx.db, name), { filter }, ctx.state.stats)
      break
    case 'aggregate': {
      name = targetCollection(inner, 'aggregate')
      const pipeline = Array.isArray(inner.pipeline) ? (inner.pipeline as Doc[]) : []
      const source = pipelineSource(ctx, name, pipeline)
      filter = isPlainObject(pipeline[0]?.$match) ? pipeline[0].$match : {}
      result = source.match ?? { docs: source.docs, plan: { stage: 'COLLSCAN', keysExamined: 0 }, examined: source.docs.length }
      break
    }
    default:
      throw new CommandError(ErrorCodes.CommandNotSupported, `explain of '${String(command)}' is not supported by the embedded MongoDB server`)
  }
  const coll = ctx.state.catalog.getCollection(ctx.db, name)
  const keyPattern = result.plan.indexName ? coll?.indexes.get(result.plan.indexName)?.spec.key : undefined
  return {
    explainVersion: '1',
    queryPlanner: {
      namespace: `${ctx.db}.${name}`,
      parsedQuery: filter,
      winningPlan: winningPlan(result.plan, filter, keyPattern),
      rejectedPlans: [],
    },
    executionStats: {
      executionSuccess: true,
      nReturned: result.docs.length,
      executionTimeMillis: Date.now() - started,
      totalKeysExamined: result.plan.keysExamined,
      totalDocsExamined: result.examined,
    },
    command: inner,
    ok: 1,
  }
}
