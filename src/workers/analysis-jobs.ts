// Compose analysis on a worker thread: parse, interpolate, validate, convert and lay out (services/import).
import { analyzeCompose as analyzeComposeText, analyzeFileTree as analyzeTree, type AnalyzeComposeOptions, type Analysis } from '../services/import/index.ts'
import type { AnalyzeTreeOptions } from '../services/import/file-tree.ts'
import { prepareComposeValidator } from '../services/import/compose-schema.ts'
import { answer, type JobAnswer } from './answer.ts'

// Once per thread, as the module loads: the first job's budget is then spent on its own input.
prepareComposeValidator()

export interface AnalyzeComposeJob { content: string; options: AnalyzeComposeOptions }
export function analyzeCompose(job: AnalyzeComposeJob): Promise<JobAnswer<Analysis>> {
  return answer(() => analyzeComposeText(job.content, job.options))
}

export interface AnalyzeTreeJob { files: Map<string, string>; options: AnalyzeTreeOptions }
export function analyzeFileTree(job: AnalyzeTreeJob): Promise<JobAnswer<Analysis>> {
  return answer(() => analyzeTree(job.files, job.options))
}
