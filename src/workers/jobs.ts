// The worker threads' entry: each job loads its module on first use, so a thread that only analyses compose
// files never loads the manifest builders (kubernetes-models) and the reverse. Under tsx the modules are
// the .ts sources, in the compiled build the .js files beside this one: the extension follows this file's.
//
// A job says on its `started` port when its module is loaded and the work begins: the time budget counts
// from there, so a thread's start (seconds under tsx on a busy machine) is never charged to the input.
import type { MessagePort } from 'node:worker_threads'
import type { AnalyzeComposeJob, AnalyzeTreeJob } from './analysis-jobs.ts'
import type { RenderJob, Rendered } from './render-jobs.ts'
import type { JobAnswer } from './answer.ts'
import type { AnalysisText } from '../services/import/analysis-text.ts'

const EXT = import.meta.url.endsWith('.ts') ? '.ts' : '.js'
const analysis = () => import(`./analysis-jobs${EXT}`) as Promise<typeof import('./analysis-jobs.ts')>
const rendering = () => import(`./render-jobs${EXT}`) as Promise<typeof import('./render-jobs.ts')>

export interface Job<T> { input: T; started: MessagePort }

async function begin<M>(load: () => Promise<M>, started: MessagePort): Promise<M> {
  const module = await load()
  started.postMessage('started')
  started.close()
  return module
}

export async function analyzeCompose({ input, started }: Job<AnalyzeComposeJob>): Promise<JobAnswer<AnalysisText>> {
  return (await begin(analysis, started)).analyzeCompose(input)
}
export async function analyzeFileTree({ input, started }: Job<AnalyzeTreeJob>): Promise<JobAnswer<AnalysisText>> {
  return (await begin(analysis, started)).analyzeFileTree(input)
}
export async function render({ input, started }: Job<RenderJob>): Promise<JobAnswer<Rendered>> {
  return (await begin(rendering, started)).render(input)
}

export type Jobs = { analyzeCompose: typeof analyzeCompose; analyzeFileTree: typeof analyzeFileTree; render: typeof render }
