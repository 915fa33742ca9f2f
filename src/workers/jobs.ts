// The worker threads' entry: each job loads its module on first use, so a thread that only analyses compose
// files never loads the manifest builders (kubernetes-models) and the reverse. Under tsx the modules are
// the .ts sources, in the compiled build the .js files beside this one: the extension follows this file's.
import type { AnalyzeComposeJob, AnalyzeTreeJob } from './analysis-jobs.ts'
import type { RenderJob, Rendered } from './render-jobs.ts'
import type { JobAnswer } from './answer.ts'
import type { Analysis } from '../services/import/index.ts'

const EXT = import.meta.url.endsWith('.ts') ? '.ts' : '.js'
const analysis = () => import(`./analysis-jobs${EXT}`) as Promise<typeof import('./analysis-jobs.ts')>
const rendering = () => import(`./render-jobs${EXT}`) as Promise<typeof import('./render-jobs.ts')>

export async function analyzeCompose(job: AnalyzeComposeJob): Promise<JobAnswer<Analysis>> {
  return (await analysis()).analyzeCompose(job)
}
export async function analyzeFileTree(job: AnalyzeTreeJob): Promise<JobAnswer<Analysis>> {
  return (await analysis()).analyzeFileTree(job)
}
export async function render(job: RenderJob): Promise<JobAnswer<Rendered>> {
  return (await rendering()).render(job)
}

export type Jobs = { analyzeCompose: typeof analyzeCompose; analyzeFileTree: typeof analyzeFileTree; render: typeof render }
