// The workflow status stream in the KubeOrch UI's dialect (CONTRACT.md §4 "Workflow status"; the UI's
// lib/hooks/useWorkflowStatusStream.ts):
//   metadata      top-level `nodes[]`, each `data._status` in the UI's vocabulary (it seeds its statuses)
//   node_update   `{node_id, status}`, `status.state` in the vocabulary of the node's type
//   workflow_sync `{data: {nodes: [{id, data: {_status}}]}}` (it replaces every status), ours kept beside it
//   status_change left out (the UI logs "Unknown SSE event type" for it)
//   drift_detected, drift_resolved left out too: the node_update that follows each carries the node's
//                 status (drifted, or in sync again), which is what the canvas shows
//   error, complete as they are
//
// The vocabulary depends on the node's canvas type, which our events do not all carry: workflow_sync names
// only node ids, and a node_update names the kind of the object applied, which for a node may be the
// Namespace a run created for it. So a stream's reframe learns each node's type from its own `metadata`
// (the workflow's nodes) and from the kinds of later node_updates (a node added after the stream opened):
// one reframe per open stream. Its encodings are cached per stream, not across streams (the cache of
// src/events/sse.ts is keyed by the reframe function); the UI opens one stream per canvas, so that costs
// one encoding per event per open canvas.
import type { Reframe } from '../../events/sse.ts'
import { nodeTypeOfKind, uiNode, uiNodeStatus } from './node-status.ts'
import { type Json, isObject } from './translate.ts'

/** A fresh reframe for one open workflow stream. */
export function workflowStreamReframe(): Reframe {
  const typeOf = new Map<string, unknown>()

  const learnNodes = (nodes: unknown) => {
    if (!Array.isArray(nodes)) return
    for (const n of nodes) if (isObject(n) && typeof n.id === 'string') typeOf.set(n.id, n.type)
  }
  // The node's canvas type: as the workflow says, else as the object's kind says (never a Namespace's).
  const nodeType = (nodeId: unknown, kind?: unknown): unknown => {
    if (typeof nodeId !== 'string') return undefined
    const known = typeOf.get(nodeId)
    if (known !== undefined) return known
    const fromKind = nodeTypeOfKind(kind)
    if (fromKind) typeOf.set(nodeId, fromKind)
    return fromKind
  }

  return (type, data) => {
    if (type === 'status_change' || type === 'drift_detected' || type === 'drift_resolved') return null
    if (!isObject(data)) return { type, data }
    if (type === 'metadata') {
      learnNodes(data.nodes)
      return { type, data: Array.isArray(data.nodes) ? { ...data, nodes: data.nodes.map(uiNode) } : data }
    }
    if (type === 'node_update') {
      return { type, data: { ...data, status: uiNodeStatus(nodeType(data.node_id, data.kind), data.status) } }
    }
    if (type === 'workflow_sync') {
      const ours = Array.isArray(data.nodes) ? data.nodes.filter(isObject) : []
      const nodes = ours.map((n) => ({ id: n.node_id, data: { _status: uiNodeStatus(nodeType(n.node_id), n.status) } }))
      return { type, data: { ...data, data: { nodes } } }
    }
    return { type, data }
  }
}
