import type { ImportOptions } from '../../../schemas/import-analysis.ts'
import type { Analysis } from './graph.ts'
import { ImportError } from './errors.ts'

export interface AnalyzeComposeOptions extends ImportOptions {
  /** Directory of the compose file inside `files` ('' or '.' for the root). */
  base_dir?: string
  /** Other files of the repository by path (env_file:, extends: file:, configs file:). */
  files?: ReadonlyMap<string, string>
  /** Where a build: context lives, prefilled into needs-build nodes. */
  repo?: { repo_url: string; branch?: string }
}
export function analyzeCompose(_content: string, _options: AnalyzeComposeOptions = {}): Analysis { throw new ImportError('not yet') }
