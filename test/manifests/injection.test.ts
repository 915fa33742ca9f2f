// Hostile text in any string field of any node (line breaks, document separators, quotes, template
// delimiters, 1 MB values) never changes the structure of the rendered YAML: it parses back to exactly the
// objects rendered, no extra document appears, and the only Secret is the secret node's.
import t from 'tap'
import { parseAllDocuments } from 'yaml'
import { NodeDataSchemas, type NodeType } from '../../schemas/nodes.ts'
import { renderWorkflow, toYaml } from '../../src/manifests/index.ts'
import type { ManifestNode } from '../../src/manifests/types.ts'
import { ctx, fullCanvas } from './canvas.ts'

// One value holding every trick at once: a break, a document start, an end marker, quotes, template
// delimiters, a comment, a tag, a directive and the line separators YAML 1.1 knows.
const PIECES = [
  'x\nkind: Secret',
  '---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: stolen\n',
  '"quoted\' \\" `tick` #hash: colon',
  '{{ .secret }}{{ template "x" }}',
  'ok\r\n...\n--- !!binary\n\u2028\u0085%YAML 1.1',
]
const HOSTILE = [PIECES.join('\n')]
const HUGE = `${'A'.repeat(1 << 20)}\n---\nkind: Secret`

type Path = Array<string | number>
interface Site { path: Path; key: boolean }

/** Every string in the data (values and map keys), plus each top-level string field the data leaves unset. */
function sites(type: NodeType, data: Record<string, unknown>): Site[] {
  const out: Site[] = []
  const walk = (v: unknown, path: Path) => {
    if (typeof v === 'string') out.push({ path, key: false })
    else if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...path, i]))
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) { out.push({ path: [...path, k], key: true }); walk(x, [...path, k]) }
  }
  walk(data, [])
  const props = (NodeDataSchemas[type] as { properties: Record<string, { type?: string }> }).properties
  for (const [k, s] of Object.entries(props)) if (s.type === 'string' && !(k in data)) out.push({ path: [k], key: false })
  return out
}

function withValue(data: Record<string, unknown>, site: Site, value: string): Record<string, unknown> {
  const copy = structuredClone(data)
  let parent: any = copy
  for (const p of site.path.slice(0, -1)) parent = parent[p]
  const last = site.path[site.path.length - 1]
  if (site.key) {
    const entries = Object.entries(parent as Record<string, unknown>).map(([k, v]) => [k === last ? value : k, v])
    for (const k of Object.keys(parent)) delete parent[k]
    Object.assign(parent, Object.fromEntries(entries))
  } else {
    parent[last] = value
  }
  return copy
}

async function check(t: { fail(message: string): unknown }, nodes: ManifestNode[], edges: ReturnType<typeof fullCanvas>['edges'], label: string) {
  const result = await renderWorkflow({ nodes, edges }, ctx())
  const text = toYaml(result)
  const docs = parseAllDocuments(text, { version: '1.1' })
  const ok = docs.every((d) => d.errors.length === 0) &&
    docs.length === result.objects.length &&
    JSON.stringify(docs.map((d) => d.toJS())) === JSON.stringify(result.objects.map((o) => o.object)) &&
    result.objects.filter((o) => o.object.kind === 'Secret').every((o) => o.node_id === 'n-secret')
  if (!ok) t.fail(`${label}: the YAML structure changed`)
  return ok
}

t.test('hostile strings in every string field never change the YAML structure', async (t) => {
  const canvas = fullCanvas()
  // Each node with the nodes it is wired to: enough for every value to reach every object it can reach.
  const neighbourhood = (id: string) => {
    const edges = canvas.edges.filter((e) => e.source === id || e.target === id)
    const ids = new Set([id, ...edges.flatMap((e) => [e.source, e.target])])
    return { ids, edges }
  }
  let checked = 0
  let failed = 0
  for (const [i, n] of canvas.nodes.entries()) {
    for (const site of sites(n.type as NodeType, n.data!)) {
      for (const value of [...HOSTILE, HUGE]) {
        const { ids, edges } = neighbourhood(n.id)
        const nodes = canvas.nodes.filter((m) => ids.has(m.id)).map((m) => (m.id === n.id ? { ...m, data: withValue(m.data!, site, value) } : m))
        if (!await check(t, nodes, edges, `${n.type} ${site.key ? 'key' : 'value'} ${site.path.join('/')} = ${JSON.stringify(value.slice(0, 30))}`)) failed++
        checked++
      }
    }
  }
  t.equal(failed, 0, `${checked} hostile renders kept their structure`)
  t.ok(checked > 600, 'every string site was tried')
})

t.test('hostile node and edge ids stay inside their comment and annotation', async (t) => {
  const canvas = fullCanvas()
  const evil = 'id\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: x}\n# '
  canvas.nodes[0].id = evil
  for (const e of canvas.edges) if (e.source === 'n-deployment') e.source = evil; else if (e.target === 'n-deployment') e.target = evil
  canvas.edges.push({ id: evil, source: 'n-configmap', target: 'n-service' })
  t.ok(await check(t, canvas.nodes, canvas.edges, 'hostile ids'))
  const result = await renderWorkflow(canvas, ctx())
  t.ok(result.objects.some((o) => o.object.metadata.annotations?.['workflows.cluster-orchestration.io/node-id'] === evil), 'the id is kept intact as a value')
})
