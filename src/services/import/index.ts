// Compose files and repository trees → a workflow graph (issue 14). Everything here is pure: no I/O, the
// caller supplies the file contents. Same input → byte-identical output (ids derive from compose names,
// every collection is sorted, the layout is deterministic).
export { ImportError, ImportTooLarge } from './errors.ts'
export { analyzeCompose, type AnalyzeComposeOptions } from './analyze.ts'
export { analyzeFileTree, type AnalyzeTreeOptions } from './file-tree.ts'
export { layoutGraph, type Positions } from './layout.ts'
export { MAX_COMPOSE_BYTES } from '../../../schemas/import-analysis.ts'
export type { AnalysisIssue, AnalysisService, ImportOptions } from '../../../schemas/import-analysis.ts'
export type { Analysis, ImportNode, ImportEdge } from './graph.ts'
