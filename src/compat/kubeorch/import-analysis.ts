// An import analysis as the KubeOrch UI reads it (CONTRACT.md §2.9, §3): `suggestedNodes` the canvas renders
// as they are (its 13 node types, with the per-type `data` its node components read: secret keys as
// `{id, name}` entries, a service's `port`/`targetPort`/`targetApp`, ingress path ids, the `_linked*` lists),
// `suggestedEdges` drawn the way the canvas draws them (service → workload, ingress → service, with its
// handle ids), `layoutPositions`, warnings as text and errors as `{code, message, service, field}`. The
// translation only adds and re-points: our wiring reads an edge in either direction (src/manifests/wiring.ts),
// so the graph deploys the same.
import type { AnalysisDocument } from '../../../schemas/import-analysis.ts'
import { layoutGraph } from '../../services/import/layout.ts'
import { type Json, isObject } from './translate.ts'

interface Node { id: string; type: string; position: { x: number; y: number }; data: Json; [k: string]: unknown }
interface Edge { id: string; source: string; target: string; sourceHandle?: string | null; targetHandle?: string | null; [k: string]: unknown }

const WORKLOADS = new Set(['deployment', 'statefulset', 'daemonset', 'job', 'cronjob'])
/** The canvas's handle ids: most nodes connect from `output`; a Service is reached on `input`. */
const OUTPUT = 'output'
const SERVICE_INPUT = 'input'
const MOUNT_TYPES: Record<string, string> = { persistentvolumeclaim: 'persistentVolumeClaim', configmap: 'configMap', secret: 'secret' }

const dataOf = (n: { data?: unknown }): Json => (isObject(n.data) ? n.data : {})
const nameOf = (n: { data?: unknown }) => (typeof dataOf(n).name === 'string' ? dataOf(n).name as string : undefined)

/** The analysis's nodes and edges as canvas nodes and edges, every node in `namespace` unless it names one. */
export function canvasGraph(nodes: readonly Node[], edges: readonly Edge[], namespace = 'default'): { nodes: Node[]; edges: Edge[] } {
  const byId = new Map(nodes.map((n) => [n.id, n]))
  const peers = new Map<string, Node[]>(nodes.map((n) => [n.id, []]))
  for (const e of edges) {
    const s = byId.get(e.source), t = byId.get(e.target)
    if (s && t) { peers.get(s.id)!.push(t); peers.get(t.id)!.push(s) }
  }
  const linked = (id: string, type: string) => peers.get(id)!.filter((p) => p.type === type)
  const pathIds = new Map<string, Array<{ id: string; serviceName?: unknown }>>()

  const out = nodes.map((node): Node => {
    const data: Json = { ...dataOf(node) }
    data.id ??= node.id
    data.namespace ??= namespace
    data.templateId ??= `builtin:${node.type}`
    if (WORKLOADS.has(node.type)) {
      if (node.type === 'deployment' || node.type === 'statefulset') data.replicas ??= 1
      if (node.type === 'statefulset') data.serviceName ??= data.name
      if (Array.isArray(data.volumeMounts)) {
        data.volumeMounts = data.volumeMounts.map((m) => {
          if (!isObject(m)) return m
          const source = peers.get(node.id)!.find((p) => MOUNT_TYPES[p.type] && nameOf(p) === m.name)
          return source ? { type: MOUNT_TYPES[source.type], nodeId: source.id, ...m } : m
        })
      }
      data._linkedConfigMaps ??= linked(node.id, 'configmap').map((p) => p.id)
      data._linkedSecrets ??= linked(node.id, 'secret').map((p) => p.id)
      data._linkedPVCs ??= linked(node.id, 'persistentvolumeclaim').map((p) => p.id)
    } else if (node.type === 'service') {
      // The canvas's Service node edits one port (port, targetPort); a single TCP port is said that way
      // (the same Service: its name only matters beside other ports). Several stay in `ports`.
      const only = Array.isArray(data.ports) && data.ports.length === 1 && isObject(data.ports[0]) ? data.ports[0] : undefined
      if (only && (only.protocol ?? 'TCP') === 'TCP' && only.nodePort === undefined && data.port === undefined && data.targetPort === undefined) {
        delete data.ports
        data.port = only.port
        data.targetPort = only.targetPort ?? only.port
      }
      data.serviceType ??= 'ClusterIP'
      const workload = peers.get(node.id)!.find((p) => WORKLOADS.has(p.type))
      if (workload) { data.targetApp ??= nameOf(workload) ?? ''; data._linkedDeployment ??= workload.id }
    } else if (node.type === 'secret') {
      data.secretType ??= 'Opaque'
      // The canvas edits keys as {id, name} entries (values never stored); plain names are ours.
      if (Array.isArray(data.keys)) data.keys = data.keys.map((k) => (typeof k === 'string' ? { id: `key-${k}`, name: k } : k))
    } else if (node.type === 'ingress' && Array.isArray(data.paths)) {
      const service = peers.get(node.id)!.find((p) => p.type === 'service')
      data.paths = data.paths.map((p, i) => (isObject(p) ? { id: `path-${node.id}-${i}`, ...(service && { _linkedService: service.id }), ...p } : p))
      pathIds.set(node.id, (data.paths as Json[]).filter(isObject).map((p) => ({ id: String(p.id), serviceName: p.serviceName })))
    }
    return { ...node, data }
  })

  const outEdges = edges.map((edge): Edge => {
    const s = byId.get(edge.source), t = byId.get(edge.target)
    if (!s || !t) return edge
    // Drawn as the canvas draws them: a Service points at its workload, an Ingress at its Service.
    if (WORKLOADS.has(s.type) && t.type === 'service') return { ...edge, source: t.id, target: s.id, sourceHandle: OUTPUT, targetHandle: null }
    if (s.type === 'service' && t.type === 'ingress') {
      const paths = pathIds.get(t.id) ?? []
      const path = paths.find((p) => p.serviceName === nameOf(s)) ?? paths[0]
      return { ...edge, source: t.id, target: s.id, sourceHandle: path?.id ?? null, targetHandle: SERVICE_INPUT }
    }
    return { ...edge, sourceHandle: edge.sourceHandle ?? OUTPUT, targetHandle: edge.targetHandle ?? (t.type === 'service' ? SERVICE_INPUT : null) }
  })
  return { nodes: out, edges: outEdges }
}

// The KubeOrch canvas draws its nodes with their fields inline, larger than the boxes our layout reserves
// (measured on its canvas: about 290 px wide, workloads about 165 px tall, the others about 100 px), so
// the graph is laid out again with those sizes, by the same layout, or tall nodes overlap the next row.
const UI_NODE_WIDTH = 300
const uiNodeHeight = (type: string) => (WORKLOADS.has(type) ? 180 : 110)

function laidOutForTheCanvas(graph: { nodes: Node[]; edges: Edge[] }): { nodes: Node[]; edges: Edge[] } {
  const positions = layoutGraph(graph.nodes.map((n) => ({ id: n.id, width: UI_NODE_WIDTH, height: uiNodeHeight(n.type) })), graph.edges)
  return { ...graph, nodes: graph.nodes.map((n) => ({ ...n, position: positions[n.id] ?? n.position })) }
}

/** Our analysis as the UI's `ImportAnalysis`, our own fields kept beside its names. */
export function uiAnalysis(analysis: AnalysisDocument, namespace = 'default'): Json {
  const graph = laidOutForTheCanvas(canvasGraph(analysis.nodes as Node[], analysis.edges as Edge[], namespace))
  // A repository without a compose file is analysed from its Dockerfiles (src/services/import/file-tree.ts).
  const fromDockerfiles = analysis.warnings.some((w) => w.key === 'Dockerfile')
  const build = analysis.services.find((s) => s.needs_build && s.build?.repo_url)?.build
  const { nodes: _nodes, edges: _edges, ...ours } = analysis
  return {
    ...ours,
    detectedType: fromDockerfiles ? 'dockerfile' : 'docker-compose',
    services: analysis.services.map((s) => ({
      ...s,
      ports: s.ports.map((p) => ({ ...p, containerPort: p.target, ...(p.published !== undefined && { hostPort: p.published }), protocol: p.protocol.toLowerCase() })),
      dependsOn: s.depends_on.map((d) => d.service),
      ...(s.build && { build: { ...s.build, context: s.build.context } }),
    })),
    volumes: graph.nodes.filter((n) => n.type === 'persistentvolumeclaim').map((n) => ({ name: nameOf(n) ?? n.id })),
    suggestedNodes: graph.nodes,
    suggestedEdges: graph.edges,
    layoutPositions: Object.fromEntries(graph.nodes.map((n) => [n.id, { x: n.position.x, y: n.position.y }])),
    warnings: analysis.warnings.map((w) => [w.service, w.key].filter(Boolean).join(' ') + (w.service || w.key ? ': ' : '') + w.message),
    errors: analysis.errors.map((e) => ({ code: e.key ?? 'import', message: e.message, ...(e.service !== undefined && { service: e.service }), ...(e.key !== undefined && { field: e.key }) })),
    needsBuild: build !== undefined,
    // The build page is opened with this repository prefilled (the UI then starts the build with workflowId).
    ...(build && { sourceBuildConfig: { repoUrl: build.repo_url, branch: build.branch ?? '', buildContext: build.context, useNixpacks: false, ...(build.dockerfile && { dockerfile: build.context === '.' ? build.dockerfile : `${build.context}/${build.dockerfile}` }) } }),
  }
}
