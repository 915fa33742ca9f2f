import type { ImportOptions } from '../../../schemas/import-analysis.ts'
import type { Analysis } from './graph.ts'
import { ImportError } from './errors.ts'

export interface AnalyzeTreeOptions extends ImportOptions { repo_url: string; branch?: string; path?: string }
export function analyzeFileTree(_files: ReadonlyMap<string, string>, _options: AnalyzeTreeOptions): Analysis { throw new ImportError('not yet') }
