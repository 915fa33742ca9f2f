// The canvas shapes the analysis produces (a subset of schemas/nodes.ts CanvasNode/CanvasEdge, always with
// a position and data).
import type { AnalysisIssue, AnalysisService } from '../../../schemas/import-analysis.ts'
export interface ImportNode {
  id: string
  type: string
  position: { x: number; y: number }
  data: Record<string, unknown>
  [key: string]: unknown
}

export interface ImportEdge {
  id: string
  source: string
  target: string
  sourceHandle?: string
  targetHandle?: string
  /** Why the edge exists: what the renderer wires, or `depends_on` (start-up order only). */
  data?: { relation: 'depends_on'; condition: string } | { relation: 'wiring' }
  [key: string]: unknown
}



/** What analyzeCompose / analyzeFileTree answer (schema: AnalysisSchema in schemas/import-analysis.ts). */
export interface Analysis {
  services: AnalysisService[]
  nodes: ImportNode[]
  edges: ImportEdge[]
  warnings: AnalysisIssue[]
  errors: AnalysisIssue[]
}
