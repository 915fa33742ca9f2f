// An analysis as it leaves the analysis: its JSON text, made where the analysis ran (a worker thread), and the
// counts the session's log reports. A large analysis (1,000 services: ~600 KB, tens of thousands of
// objects) then crosses to the event loop, into the database and out to clients as one string: cloning,
// encoding and decoding it as a deep document held the event loop for hundreds of milliseconds (issue 22).
import type { Analysis } from './graph.ts'

export interface AnalysisText {
  json: string
  counts: { services: number; nodes: number; edges: number; warnings: number; errors: number }
}

export function analysisText(analysis: Analysis): AnalysisText {
  return {
    json: JSON.stringify(analysis),
    counts: { services: analysis.services.length, nodes: analysis.nodes.length, edges: analysis.edges.length, warnings: analysis.warnings.length, errors: analysis.errors.length },
  }
}
