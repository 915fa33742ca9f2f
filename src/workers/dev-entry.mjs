// The worker threads' entry under tsx (development and tests): on Node 20 a worker thread does not inherit
// the process's `--import tsx` hooks, so it registers them itself before loading the TypeScript jobs. The
// compiled build never loads this file: its threads run jobs.js directly.
import { register } from 'tsx/esm/api'

register()
const jobs = await import('./jobs.ts')
export const { analyzeCompose, analyzeFileTree, render } = jobs
