// The workflow file `cwo workflows apply -f` reads and `cwo workflows export` writes: YAML (JSON is YAML
// too), the workflow as a person edits it in a repository. Nodes and edges are the API's own (CanvasNode,
// CanvasEdge), without the live status the service writes into a node while the workflow is deployed: that
// describes the cluster, not the graph, and would make every export differ from the last.
import { isDeepStrictEqual } from 'node:util'
import YAML from 'yaml'
import type { components } from './api/openapi.ts'
import { CliError, EXIT } from './errors.ts'

export type CanvasNode = components['schemas']['CanvasNode']
export type CanvasEdge = components['schemas']['CanvasEdge']

export const API_VERSION = 'cwo/v1'
export const KIND = 'Workflow'

export interface WorkflowFile {
  apiVersion: typeof API_VERSION
  kind: typeof KIND
  name: string
  description: string
  /** The cluster's name; absent when the workflow names none (runs then use the user's default). */
  cluster?: string
  nodes: CanvasNode[]
  edges: CanvasEdge[]
}

/** Keys of a node's `data` only the service writes (src/services/live-status.ts LIVE_KEYS): never in a file. */
export const LIVE_KEYS = ['_status'] as const

const TOP_KEYS = ['apiVersion', 'kind', 'name', 'description', 'cluster', 'nodes', 'edges']
// The API's limits (CanvasNode, CanvasEdge, createWorkflow), checked here so a bad file is refused before
// anything is written, naming the field.
const MAX = { name: 200, description: 5000, cluster: 253, nodes: 2000, edges: 10000, id: 200, type: 100 }

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The node without its live keys (the same node when it has none). */
export function withoutLiveKeys(node: CanvasNode): CanvasNode {
  const data = node.data
  if (!isObject(data) || !LIVE_KEYS.some((k) => k in data)) return node
  const rest = { ...data }
  for (const k of LIVE_KEYS) delete rest[k]
  return { ...node, data: rest }
}

/** `nodes` with the live keys the workflow's current node of the same id has (apply must not erase them). */
export function withLiveKeysOf(nodes: CanvasNode[], current: readonly CanvasNode[]): CanvasNode[] {
  const live = new Map<string, Record<string, unknown>>()
  for (const n of current) {
    if (!isObject(n.data)) continue
    const data = n.data
    const keys = Object.fromEntries(LIVE_KEYS.filter((k) => k in data).map((k) => [k, data[k]]))
    if (Object.keys(keys).length) live.set(n.id, keys)
  }
  return nodes.map((n) => {
    const keys = live.get(n.id)
    return keys ? { ...n, data: { ...(isObject(n.data) ? n.data : {}), ...keys } } : n
  })
}

/** The file for a workflow as the API answers it, with its cluster's name. */
export function toWorkflowFile(wf: { name: string; description: string; nodes: CanvasNode[]; edges: CanvasEdge[] }, cluster: string | null): WorkflowFile {
  return {
    apiVersion: API_VERSION, kind: KIND, name: wf.name, description: wf.description,
    ...(cluster !== null && { cluster }),
    nodes: wf.nodes.map(withoutLiveKeys), edges: wf.edges,
  }
}

/** The file's text; the same workflow always gives the same bytes (no folding of long lines). */
export function stringifyWorkflowFile(file: WorkflowFile): string {
  return YAML.stringify(file, { lineWidth: 0, aliasDuplicateObjects: false })
}

/** Whether the workflow's graph (without live keys) is the file's. */
export function sameGraph(file: Pick<WorkflowFile, 'nodes' | 'edges'>, wf: { nodes: CanvasNode[]; edges: CanvasEdge[] }): boolean {
  return isDeepStrictEqual(file.nodes, wf.nodes.map(withoutLiveKeys)) && isDeepStrictEqual(file.edges, wf.edges)
}

function invalid(source: string, message: string): never {
  throw new CliError(`${source}: ${message}`, EXIT.usage)
}

/**
 * Parses and checks a workflow file. Every refusal names the source and the field (`nodes[2].id: ...`); the
 * checks are those the API would refuse on save (ids, edge ends), so apply writes nothing for a bad file.
 */
export function parseWorkflowFile(text: string, source: string): WorkflowFile {
  let doc: unknown
  try {
    const docs = YAML.parseAllDocuments(text)
    if (docs.length !== 1) invalid(source, `expected one YAML document, found ${docs.length}`)
    const [d] = docs
    if (d.errors.length) invalid(source, `not valid YAML: ${d.errors[0].message.split('\n')[0]}`)
    doc = d.toJS({ maxAliasCount: 100 })
  } catch (err) {
    if (err instanceof CliError) throw err
    invalid(source, `not valid YAML: ${(err as Error).message.split('\n')[0]}`)
  }
  if (!isObject(doc)) invalid(source, 'expected a mapping with apiVersion, kind, name, nodes and edges')
  for (const key of Object.keys(doc)) {
    if (!TOP_KEYS.includes(key)) invalid(source, `${key}: unknown field (the fields are ${TOP_KEYS.join(', ')})`)
  }
  if (doc.apiVersion !== API_VERSION) invalid(source, `apiVersion: must be ${API_VERSION}, not ${JSON.stringify(doc.apiVersion ?? null)}`)
  if (doc.kind !== KIND) invalid(source, `kind: must be ${KIND}, not ${JSON.stringify(doc.kind ?? null)}`)
  const name = text1(source, 'name', doc.name, MAX.name)
  const description = doc.description === undefined || doc.description === null ? '' : string(source, 'description', doc.description, MAX.description)
  const cluster = doc.cluster === undefined || doc.cluster === null ? undefined : text1(source, 'cluster', doc.cluster, MAX.cluster)
  const nodes = list(source, 'nodes', doc.nodes, MAX.nodes).map((n, i) => node(source, `nodes[${i}]`, n))
  const edges = list(source, 'edges', doc.edges, MAX.edges).map((e, i) => edge(source, `edges[${i}]`, e))

  const ids = new Map<string, number>()
  nodes.forEach((n, i) => {
    const first = ids.get(n.id)
    if (first !== undefined) invalid(source, `nodes[${i}].id: ${JSON.stringify(n.id)} is also the id of nodes[${first}]`)
    ids.set(n.id, i)
  })
  const edgeIds = new Map<string, number>()
  edges.forEach((e, i) => {
    const first = edgeIds.get(e.id)
    if (first !== undefined) invalid(source, `edges[${i}].id: ${JSON.stringify(e.id)} is also the id of edges[${first}]`)
    edgeIds.set(e.id, i)
    if (!ids.has(e.source)) invalid(source, `edges[${i}].source: no node has the id ${JSON.stringify(e.source)}`)
    if (!ids.has(e.target)) invalid(source, `edges[${i}].target: no node has the id ${JSON.stringify(e.target)}`)
  })
  return { apiVersion: API_VERSION, kind: KIND, name, description, ...(cluster !== undefined && { cluster }), nodes, edges }
}

function string(source: string, field: string, v: unknown, max: number): string {
  if (typeof v !== 'string') invalid(source, `${field}: must be a string`)
  if (v.length > max) invalid(source, `${field}: at most ${max} characters (has ${v.length})`)
  return v
}

function text1(source: string, field: string, v: unknown, max: number): string {
  if (v === undefined || v === null || v === '') invalid(source, `${field}: required`)
  return string(source, field, v, max)
}

function list(source: string, field: string, v: unknown, max: number): unknown[] {
  if (v === undefined || v === null) return []
  if (!Array.isArray(v)) invalid(source, `${field}: must be a list`)
  if (v.length > max) invalid(source, `${field}: at most ${max} items (has ${v.length})`)
  return v
}

function node(source: string, at: string, v: unknown): CanvasNode {
  if (!isObject(v)) invalid(source, `${at}: must be a mapping with id and type`)
  text1(source, `${at}.id`, v.id, MAX.id)
  text1(source, `${at}.type`, v.type, MAX.type)
  if (v.position !== undefined) {
    if (!isObject(v.position) || typeof v.position.x !== 'number' || typeof v.position.y !== 'number') invalid(source, `${at}.position: must be a mapping with numbers x and y`)
  }
  if (v.data !== undefined && !isObject(v.data)) invalid(source, `${at}.data: must be a mapping`)
  for (const k of ['width', 'height']) {
    if (v[k] !== undefined && v[k] !== null && typeof v[k] !== 'number') invalid(source, `${at}.${k}: must be a number`)
  }
  // Live status in a file (an API answer saved by hand) is the cluster's, not the graph's: dropped.
  return withoutLiveKeys(v as CanvasNode)
}

function edge(source: string, at: string, v: unknown): CanvasEdge {
  if (!isObject(v)) invalid(source, `${at}: must be a mapping with id, source and target`)
  for (const k of ['id', 'source', 'target']) text1(source, `${at}.${k}`, v[k], MAX.id)
  for (const k of ['sourceHandle', 'targetHandle']) {
    if (v[k] !== undefined && v[k] !== null && typeof v[k] !== 'string') invalid(source, `${at}.${k}: must be a string`)
  }
  return v as CanvasEdge
}
