// A compose file → the analysis: load (parse, interpolate, validate, extends), convert, lay out.
import { MAX_IMPORT_ENV_VARS, type ImportOptions } from '../../../schemas/import-analysis.ts'
import type { AnalysisIssue } from '../../../schemas/import-analysis.ts'
import { convert } from './convert.ts'
import { parseDotEnv } from './dotenv.ts'
import { ImportError } from './errors.ts'
import type { Analysis } from './graph.ts'
import { ExpansionBudget, type Lookup } from './interpolate.ts'
import { layoutGraph } from './layout.ts'
import { loadCompose } from './load.ts'

export interface AnalyzeComposeOptions extends ImportOptions {
  /** Directory of the compose file inside `files` ('' or '.' for the root). */
  base_dir?: string
  /** Other files of the repository by path relative to its root (env_file:, extends: file:, configs file:). */
  files?: ReadonlyMap<string, string>
  /** Where a build: context lives, prefilled into needs-build nodes. */
  repo?: { repo_url: string; branch?: string }
}


/** The interpolation variables: the request's env wins over its .env content. */
function variables(options: AnalyzeComposeOptions, budget: ExpansionBudget): Lookup {
  const env = options.env ?? {}
  if (Object.keys(env).length > MAX_IMPORT_ENV_VARS) throw new ImportError(`env has more than ${MAX_IMPORT_ENV_VARS} variables`)
  const own: Lookup = (name) => (Object.hasOwn(env, name) ? env[name] : undefined)
  const fromFile = options.env_file !== undefined ? parseDotEnv(options.env_file, own, '.env', undefined, budget) : new Map<string, string>()
  return (name) => own(name) ?? fromFile.get(name)
}

function byServiceKey(a: AnalysisIssue, b: AnalysisIssue): number {
  const ka = `${a.service ?? ''}\0${a.key ?? ''}\0${a.message}`
  const kb = `${b.service ?? ''}\0${b.key ?? ''}\0${b.message}`
  return ka < kb ? -1 : ka > kb ? 1 : 0
}

export function analyzeCompose(content: string, options: AnalyzeComposeOptions = {}): Analysis {
  if (typeof content !== 'string') throw new ImportError('the compose file must be text')
  const budget = new ExpansionBudget()
  const lookup = variables(options, budget)
  const warnings: AnalysisIssue[] = []
  const baseDir = options.base_dir === undefined || options.base_dir === '.' ? '' : options.base_dir.replace(/^\.\/|\/+$/g, '')
  const loaded = loadCompose(content, baseDir, { lookup, files: options.files, warn: (w) => warnings.push(w), taintedValues: new Set(), sensitiveRefs: new Set(), budget })
  const converted = convert({ loaded, lookup, budget, options, baseDir, files: options.files, ...(options.repo && { repo: options.repo }) })
  const positions = layoutGraph(converted.nodes, converted.edges)
  for (const n of converted.nodes) n.position = positions[n.id]
  return {
    services: converted.services,
    nodes: converted.nodes,
    edges: converted.edges,
    warnings: [...warnings, ...converted.warnings].sort(byServiceKey),
    errors: converted.errors.sort(byServiceKey),
  }
}
