// Compose analysis on a worker thread: parse, interpolate, validate, convert and lay out (services/import).
// The analysis leaves the thread as its JSON text (analysis-text.ts), never as a deep object.
import { analyzeCompose as analyzeComposeText, analyzeFileTree as analyzeTree, type AnalyzeComposeOptions } from '../services/import/index.ts'
import { analysisText, type AnalysisText } from '../services/import/analysis-text.ts'
import type { AnalyzeTreeOptions } from '../services/import/file-tree.ts'
import { prepareComposeValidator } from '../services/import/compose-schema.ts'
import { answer, type JobAnswer } from './answer.ts'

// Once per thread, as the module loads: the first job's budget is then spent on its own input.
prepareComposeValidator()

export interface AnalyzeComposeJob { content: string; options: AnalyzeComposeOptions }
export function analyzeCompose(job: AnalyzeComposeJob): Promise<JobAnswer<AnalysisText>> {
  return answer(() => analysisText(analyzeComposeText(job.content, job.options)))
}

export interface AnalyzeTreeJob { files: Map<string, string>; options: AnalyzeTreeOptions }
export function analyzeFileTree(job: AnalyzeTreeJob): Promise<JobAnswer<AnalysisText>> {
  return answer(() => analysisText(analyzeTree(job.files, job.options)))
}
