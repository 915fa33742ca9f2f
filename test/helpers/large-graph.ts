// The largest graph a workflow may hold (MAX_NODES nodes, MAX_EDGES edges), made of wired pairs
// (Deployment ← Service) and dependency edges between the deployments, so every node renders objects and
// every edge is wired: the worst case for rendering, not a graph of warnings.
import { MAX_EDGES, MAX_NODES } from '../../schemas/nodes.ts'
import type { App } from '../../src/app-types.ts'
import type { TestUser } from './auth.ts'

export interface LargeGraph {
  nodes: Array<{ id: string; type: string; position: { x: number; y: number }; data: Record<string, unknown> }>
  edges: Array<{ id: string; source: string; target: string }>
}

export function largestGraph(nodes = MAX_NODES, edges = MAX_EDGES): LargeGraph {
  const pairs = Math.floor(nodes / 2)
  const g: LargeGraph = { nodes: [], edges: [] }
  for (let i = 0; i < pairs; i++) {
    g.nodes.push({ id: `d${i}`, type: 'deployment', position: { x: i * 10, y: 0 }, data: { name: `app-${i}`, image: `registry.example/app-${i}:1.${i}`, port: 8080, replicas: 2, env: [{ name: 'MODE', value: 'prod' }, { name: 'INDEX', value: String(i) }] } })
    g.nodes.push({ id: `s${i}`, type: 'service', position: { x: i * 10, y: 100 }, data: { name: `app-${i}`, port: 80, targetPort: 8080 } })
    g.edges.push({ id: `ds${i}`, source: `d${i}`, target: `s${i}` })
  }
  // Dependencies only point forward (i → i + k), so there is no cycle; their chains are long.
  for (let e = 0, k = 1; g.edges.length < edges; k++) {
    for (let i = 0; i + k < pairs && g.edges.length < edges; i++, e++) g.edges.push({ id: `dep${e}`, source: `d${i}`, target: `d${i + k}` })
  }
  return g
}

/** A workflow of `user` holding the graph, saved through the service (a test of reading it back, not of a 1 MB request body). */
export async function workflowOf(app: App, user: TestUser, g = largestGraph()): Promise<string> {
  const wf = await app.services.workflows.create(user.user.id, { name: `${g.nodes.length} nodes` })
  await app.services.workflows.save(user.user.id, wf.id, { nodes: g.nodes, edges: g.edges } as never)
  return wf.id
}

/** GET manifests over HTTP with this Accept. */
export async function manifests(base: string, user: TestUser, id: string, accept: string) {
  const res = await fetch(`${base}/v1/api/workflows/${id}/manifests`, { headers: { authorization: `Bearer ${user.token}`, accept } })
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() }
}
