// The six fixable concerns. Each assessment answers both questions at once: what the check says, and the
// graph edit that would resolve it (or why there is none). Diagnostics name a fix type only when its plan
// exists, and the fix routes apply exactly that plan, so a check and its fix can never disagree.
import type { NodeView } from '../../manifests/build-context.ts'
import { isWorkload } from '../../manifests/wiring.ts'
import { WORKLOAD_KINDS } from '../../manifests/workloads.ts'
import { parseQuantity } from '../../kube/quantity.ts'
import type { ManifestNode } from '../../manifests/types.ts'
import { dataOf, isDnsLabel, kindOf, mostCommon, toDnsLabel, type GraphView } from './graph-view.ts'
import { pass, problem, type Check, type FixType, type GraphChange } from './types.ts'

export interface FixPlan { description: string; changes: GraphChange[] }
/** The check (null when the concern does not apply to the node) and the fix, or why there is none. */
export interface Assessment { check: Check | null; plan: FixPlan | string }

/** What a fix may know about the running cluster, read beforehand (the fix itself never calls one). */
export interface LiveFacts {
  /** The digest (`sha256:…`) the node's running pods report for its current image; null when unknown. */
  imageDigest: string | null
}

const json = (v: unknown) => JSON.stringify(v)
const change = (node_id: string, path: string, old: unknown, value: unknown): GraphChange => ({ node_id, path, old: old ?? null, new: value ?? null })

// dns-name

export function assessName(g: GraphView, node: ManifestNode): Assessment {
  const name = dataOf(node).name
  if (isDnsLabel(name)) return { check: pass('name', `name ${json(name)} is a valid DNS label`), plan: `the name ${json(name)} is already a valid DNS label` }
  const base = (typeof name === 'string' ? toDnsLabel(name) : null) ?? toDnsLabel(node.id) ?? node.type
  const namespace = g.views.get(node.id)?.namespace
  const taken = new Set(g.graph.nodes.filter((n) => n.id !== node.id && kindOf(n) === kindOf(node) && g.views.get(n.id)?.namespace === namespace).map((n) => dataOf(n).name))
  let candidate = base
  for (let i = 2; taken.has(candidate); i++) candidate = `${base.slice(0, 63 - String(i).length - 1).replace(/-+$/, '')}-${i}`
  const changes = [change(node.id, 'data.name', name, candidate), ...(typeof name === 'string' ? renamedReferences(g, node, name, candidate) : [])]
  const what = typeof name === 'string' && name !== '' ? `name ${json(name)} is not a valid DNS label (at most 63 lower-case letters, digits and -, starting and ending with a letter or digit)` : 'the node has no name'
  return {
    check: problem('name', 'error', what, `rename it to ${json(candidate)}`, 'dns-name'),
    plan: { description: `renames the node to ${json(candidate)}${changes.length > 1 ? ' and updates the nodes that refer to it by name' : ''}`, changes },
  }
}

/** Other nodes that name this one in their data: ingress paths and a statefulset's service name, volume mounts of config and claims. */
function renamedReferences(g: GraphView, node: ManifestNode, from: string, to: string): GraphChange[] {
  const out: GraphChange[] = []
  const neighbours = new Set(g.neighbours(node.id).map((v) => v.id))
  for (const other of g.graph.nodes) {
    if (other.id === node.id) continue
    const d = dataOf(other)
    if (node.type === 'service') {
      if (other.type === 'ingress' && Array.isArray(d.paths)) {
        d.paths.forEach((p: { serviceName?: unknown }, i) => { if (p?.serviceName === from) out.push(change(other.id, `data.paths[${i}].serviceName`, from, to)) })
      }
      if (other.type === 'statefulset' && d.serviceName === from) out.push(change(other.id, 'data.serviceName', from, to))
    }
    if (['configmap', 'secret', 'persistentvolumeclaim'].includes(node.type) && isWorkload(other.type) && neighbours.has(other.id) && Array.isArray(d.volumeMounts)) {
      d.volumeMounts.forEach((m: { name?: unknown }, i) => { if (m?.name === from) out.push(change(other.id, `data.volumeMounts[${i}].name`, from, to)) })
    }
  }
  return out
}

// missing-namespace

export function assessNamespace(g: GraphView, node: ManifestNode): Assessment {
  const raw = dataOf(node).namespace
  const peers = g.neighbours(node.id).filter((p) => isDnsLabel(p.namespace))
  const explicit = g.graph.nodes.filter((n) => n.id !== node.id).map((n) => dataOf(n).namespace).filter(isDnsLabel)
  const target = mostCommon(peers.map((p) => p.namespace)) ?? mostCommon(explicit) ?? 'default'
  const plan = (why: string): FixPlan => ({ description: `puts the node in namespace ${json(target)} (${why})`, changes: [change(node.id, 'data.namespace', raw, target)] })
  if (raw !== undefined && !isDnsLabel(raw)) {
    return {
      check: problem('namespace', 'error', `namespace ${json(raw)} is not a valid DNS label (at most 63 lower-case letters, digits and -)`, `set it to ${json(target)}`, 'missing-namespace'),
      plan: plan(peers.length ? 'the namespace of the nodes it is connected to' : explicit.length ? 'the namespace the other nodes use' : 'the cluster\'s default namespace'),
    }
  }
  const effective = raw ?? 'default'
  const apart = peers.filter((p) => p.namespace !== effective)
  if (apart.length > 0) {
    const message = `edges to ${apart.map((p) => `${p.name || p.id} (namespace ${p.namespace})`).join(', ')} have no effect: connected nodes must share a namespace, and this one is in ${json(effective)}`
    if (target === effective) return { check: problem('namespace', 'warning', message, 'move the connected nodes into one namespace'), plan: 'the connected nodes are split across namespaces; no single namespace is implied' }
    return { check: problem('namespace', 'warning', message, `set the namespace to ${json(target)}`, 'missing-namespace'), plan: plan('the namespace of the nodes it is connected to') }
  }
  const others = [...new Set(explicit)]
  if (raw === undefined && peers.length === 0 && others.length === 1 && others[0] !== 'default') {
    return {
      check: problem('namespace', 'warning', `no namespace is set, so it goes to "default" while every other node that names one is in ${json(others[0])}`, `set the namespace to ${json(others[0])}`, 'missing-namespace'),
      plan: plan('the namespace every other node uses'),
    }
  }
  return { check: pass('namespace', raw === undefined ? 'no namespace set: it goes to "default" (or the run\'s namespace)' : `namespace ${json(raw)}`), plan: `the namespace ${json(effective)} is valid and consistent with the connected nodes` }
}

// image-tag-latest

export interface ImageRef { repository: string; tag: string | null; digest: string | null }

export function parseImage(ref: string): ImageRef {
  const at = ref.indexOf('@')
  const digest = at >= 0 ? ref.slice(at + 1) : null
  const name = at >= 0 ? ref.slice(0, at) : ref
  const colon = name.lastIndexOf(':')
  // A colon before the last slash is a registry port, not a tag.
  if (colon > name.lastIndexOf('/')) return { repository: name.slice(0, colon), tag: name.slice(colon + 1), digest }
  return { repository: name, tag: null, digest }
}

export function assessImage(node: ManifestNode, live: LiveFacts | null): Assessment {
  if (!isWorkload(node.type)) return { check: null, plan: `a ${node.type} node has no container image` }
  const image = dataOf(node).image
  if (typeof image !== 'string' || image.trim() === '') {
    return { check: problem('image', 'error', 'no container image is set', 'set the image with a version tag, e.g. nginx:1.27'), plan: 'the node has no image to pin' }
  }
  const ref = parseImage(image)
  if (ref.digest) return { check: pass('image', `image ${json(image)} is pinned by digest`), plan: 'the image is already pinned by digest' }
  if (ref.tag !== null && ref.tag !== 'latest') return { check: pass('image', `image ${json(image)} is pinned to tag ${json(ref.tag)}`), plan: `the image is already pinned to tag ${json(ref.tag)}` }
  const message = `${ref.tag === null ? `image ${json(image)} has no tag, so Kubernetes pulls :latest` : `image ${json(image)} uses the :latest tag`}, which moves: pods started at different times may run different code and a rollback cannot return to the old image`
  const digest = live?.imageDigest ?? null
  if (!digest) {
    return {
      check: problem('image', 'warning', message, `pin a version tag, e.g. ${ref.repository}:<version>`),
      plan: `no concrete version of ${json(image)} can be known: the node is not deployed or its pods report no image digest; set a version tag yourself`,
    }
  }
  const pinned = `${ref.repository}@${digest}`
  return {
    check: problem('image', 'warning', message, `pin it to the digest the running pods use (${pinned}) or to a version tag`, 'image-tag-latest'),
    plan: { description: `pins the image to the digest its running pods report, so the next run deploys exactly what runs now`, changes: [change(node.id, 'data.image', image, pinned)] },
  }
}

// resource-requests

export const DEFAULT_REQUESTS = { cpu: '100m', memory: '128Mi' } as const
type Resource = keyof typeof DEFAULT_REQUESTS

function resourcesOf(data: Record<string, unknown>): { requests: Record<string, unknown>; limits: Record<string, unknown> } {
  const r = (data.resources && typeof data.resources === 'object' ? data.resources : {}) as Record<string, unknown>
  const obj = (v: unknown) => (v && typeof v === 'object' ? v as Record<string, unknown> : {})
  return { requests: obj(r.requests), limits: obj(r.limits) }
}

/** Requests for the missing resources: the default, or the limit when that is lower (a request may not exceed its limit). */
function requestChanges(workload: { id: string; data: Record<string, unknown> }, missing: Resource[]): GraphChange[] {
  const { limits } = resourcesOf(workload.data)
  return missing.map((r) => {
    const limit = typeof limits[r] === 'string' ? limits[r] as string : undefined
    const value = limit !== undefined && parseQuantity(limit) < parseQuantity(DEFAULT_REQUESTS[r]) ? limit : DEFAULT_REQUESTS[r]
    return change(workload.id, `data.resources.requests.${r}`, null, value)
  })
}

const missingRequests = (data: Record<string, unknown>, wanted: Resource[]): Resource[] => {
  const { requests } = resourcesOf(data)
  return wanted.filter((r) => typeof requests[r] !== 'string' || requests[r] === '')
}

export function assessRequests(g: GraphView, node: ManifestNode): Assessment {
  if (isWorkload(node.type)) {
    const missing = missingRequests(dataOf(node), ['cpu', 'memory'])
    if (missing.length === 0) return { check: pass('resources', 'CPU and memory requests are set'), plan: 'CPU and memory requests are already set' }
    const changes = requestChanges({ id: node.id, data: dataOf(node) }, missing)
    return {
      check: problem('resources', 'warning', `no ${missing.join(' or ')} request: the scheduler places the pods without knowing what they need, and they are the first evicted under pressure`, 'request what one pod needs (e.g. cpu 100m, memory 128Mi)', 'resource-requests'),
      plan: { description: `requests ${changes.map((c) => `${c.path.split('.').pop()} ${c.new}`).join(' and ')} (lowered to the limit where one is set)`, changes },
    }
  }
  if (node.type === 'hpa') {
    const target = g.linksOf(node.id, 'workload-hpa').map((l) => l.peer).find((p) => WORKLOAD_KINDS[p.type as keyof typeof WORKLOAD_KINDS]?.scalable)
    if (!target) return { check: null, plan: 'the autoscaler has no workload to scale' }
    const d = dataOf(node)
    const used: Resource[] = [...(d.targetCPUUtilization !== undefined || d.targetMemoryUtilization === undefined ? ['cpu' as const] : []), ...(d.targetMemoryUtilization !== undefined ? ['memory' as const] : [])]
    const missing = missingRequests(target.data, used)
    if (missing.length === 0) return { check: pass('metrics', `${target.name} requests the ${used.join(' and ')} the autoscaler measures against`), plan: `${target.name} already requests ${used.join(' and ')}` }
    const changes = requestChanges(target, missing)
    return {
      check: problem('metrics', 'error', `the autoscaler scales on ${missing.join(' and ')} utilization, which Kubernetes computes against the pods' requests, and ${target.name} requests no ${missing.join(' or ')}: it will never scale`, `set ${missing.join(' and ')} requests on ${target.name}`, 'resource-requests'),
      plan: { description: `sets ${target.name}'s ${missing.join(' and ')} requests so the autoscaler can compute utilization`, changes },
    }
  }
  return { check: null, plan: `a ${node.type} node has no containers to request resources for` }
}

// selector-mismatch

const SELECTOR_RULES = {
  service: { key: 'selector', rule: 'workload-service' },
  networkpolicy: { key: 'podSelector', rule: 'workload-networkpolicy' },
  poddisruptionbudget: { key: 'selector', rule: 'workload-poddisruptionbudget' },
} as const

const matches = (selector: Record<string, unknown>, labels: Record<string, string>) => Object.entries(selector).every(([k, v]) => labels[k] === v)
const showLabels = (labels: Record<string, unknown>) => Object.entries(labels).map(([k, v]) => `${k}=${String(v)}`).join(', ')

export function assessSelector(g: GraphView, node: ManifestNode): Assessment {
  const spec = SELECTOR_RULES[node.type as keyof typeof SELECTOR_RULES]
  if (!spec) return { check: null, plan: `a ${node.type} node selects no pods` }
  const d = dataOf(node)
  if (node.type === 'service' && d.serviceType === 'ExternalName') return { check: pass('selector', 'an ExternalName service selects no pods'), plan: 'an ExternalName service selects no pods' }
  const workloads: NodeView[] = g.linksOf(node.id, spec.rule).map((l) => l.peer)
  const explicit = d[spec.key] && typeof d[spec.key] === 'object' ? d[spec.key] as Record<string, unknown> : null
  const names = (ws: NodeView[]) => ws.map((w) => w.name).join(', ')
  if (explicit) {
    if (workloads.length > 0) {
      const wrong = workloads.filter((w) => !matches(explicit, g.podLabels(w)))
      if (wrong.length === 0) return { check: pass('selector', `${spec.key} matches the pods of ${names(workloads)}`), plan: `the ${spec.key} already matches the connected workloads` }
      return {
        check: problem('selector', 'error', `${spec.key} {${showLabels(explicit)}} does not match the pods of ${names(wrong)}, which carry ${showLabels(g.podLabels(wrong[0]))}`, `remove the ${spec.key} so the edge selects the connected workload's pods`, 'selector-mismatch'),
        plan: { description: `removes the ${spec.key}, so the node selects the pods of the workload it is connected to`, changes: [change(node.id, `data.${spec.key}`, explicit, null)] },
      }
    }
    const namespace = g.views.get(node.id)?.namespace
    const selected = g.workloads().filter((w) => w.namespace === namespace && matches(explicit, g.podLabels(w)))
    if (selected.length > 0) return { check: pass('selector', `${spec.key} matches the pods of ${names(selected)}`), plan: `the ${spec.key} already matches workloads of this workflow` }
    return {
      check: problem('selector', 'warning', `${spec.key} {${showLabels(explicit)}} matches no workload of this workflow (only pods deployed some other way)`, 'connect the workload it should select and remove the selector, or correct its labels'),
      plan: 'no workload is connected, so there are no pods to select instead',
    }
  }
  if (workloads.length > 0) return { check: pass('selector', `selects the pods of ${names(workloads)} through the edge`), plan: 'the node selects through its edge; there is no selector to correct' }
  const what = {
    service: problem('selector', 'warning', 'the service selects no pods: no workload is connected and no selector is set', 'connect the workload whose pods it should serve'),
    networkpolicy: problem('selector', 'warning', 'no podSelector and no connected workload: the policy applies to every pod in the namespace', 'connect the workload it should protect, or set a podSelector'),
    poddisruptionbudget: problem('selector', 'error', 'the budget selects no pods: no workload is connected and no selector is set', 'connect the workload it should protect'),
  }[node.type as keyof typeof SELECTOR_RULES]
  return { check: what, plan: 'no workload is connected, so there are no pods to select' }
}

// target-port

export function assessTargetPort(g: GraphView, node: ManifestNode): Assessment {
  if (node.type !== 'service') return { check: null, plan: `a ${node.type} node has no target port` }
  const d = dataOf(node)
  if (d.serviceType === 'ExternalName') return { check: null, plan: 'an ExternalName service has no target port' }
  const workload = g.linksOf(node.id, 'workload-service')[0]?.peer
  if (!workload) return { check: null, plan: 'no workload is connected to compare the target port with' }
  const port = workload.data.port
  // Node data is stored as the canvas sent it: a malformed entry is the schema check's to report, not a crash here.
  const entries = Array.isArray(d.ports) ? (d.ports as unknown[]).filter((p): p is { port?: number; targetPort?: unknown } => !!p && typeof p === 'object') : []
  const listed = entries.length > 0 ? entries : null
  if (typeof port !== 'number') {
    const to = listed ? listed.map((p) => p.targetPort ?? p.port).join(', ') : String(d.targetPort ?? d.port ?? 80)
    return {
      check: problem('target-port', 'warning', `${workload.name} declares no container port; the service sends traffic to port ${to}`, `set ${workload.name}'s port to the port its container listens on`),
      plan: `${workload.name} declares no port to target`,
    }
  }
  const wrong = (t: unknown) => t !== undefined && t !== port
  const fixFor = (paths: Array<{ path: string; old: unknown }>, message: string): Assessment => ({
    check: problem('target-port', 'error', message, `target port ${port}, the port ${workload.name} listens on`, 'target-port'),
    plan: { description: `targets port ${port}, the container port of ${workload.name}`, changes: paths.map((p) => change(node.id, p.path, p.old, port)) },
  })
  const describe = (t: unknown) => (typeof t === 'string' ? `targetPort ${json(t)} names a port ${workload.name}'s container does not declare (its port ${port} is unnamed)` : `targetPort ${String(t)} but ${workload.name} listens on ${port}`)
  if (listed) {
    const bad = listed.map((p, i) => ({ i, t: p.targetPort })).filter((p) => wrong(p.t))
    if (bad.length === 0) return { check: pass('target-port', `targets port ${port} of ${workload.name}`), plan: `the service already targets port ${port}` }
    if (listed.length === 1) return fixFor([{ path: 'data.ports[0].targetPort', old: bad[0].t }], describe(bad[0].t))
    if (bad.length < listed.length) return { check: pass('target-port', `one of its ports targets port ${port} of ${workload.name}`), plan: `a port already targets ${port}` }
    return {
      check: problem('target-port', 'error', `none of the service's ports targets port ${port}, the port ${workload.name} listens on`, `set the targetPort of the port that should reach ${workload.name} to ${port}`),
      plan: `the service lists several ports; which one should target ${port} is your choice`,
    }
  }
  if (!wrong(d.targetPort)) return { check: pass('target-port', `targets port ${port} of ${workload.name}`), plan: `the service already targets port ${port}` }
  return fixFor([{ path: 'data.targetPort', old: d.targetPort }], describe(d.targetPort))
}

export function assess(type: FixType, g: GraphView, node: ManifestNode, live: LiveFacts | null): Assessment {
  switch (type) {
    case 'dns-name': return assessName(g, node)
    case 'missing-namespace': return assessNamespace(g, node)
    case 'image-tag-latest': return assessImage(node, live)
    case 'resource-requests': return assessRequests(g, node)
    case 'selector-mismatch': return assessSelector(g, node)
    case 'target-port': return assessTargetPort(g, node)
  }
}

// Applying a plan

type Segment = string | number

function parsePath(path: string): Segment[] {
  return path.split('.').flatMap((part) => {
    const m = /^([^[\]]+)((?:\[\d+\])*)$/.exec(part)
    if (!m) throw new Error(`bad change path ${path}`)
    return [m[1], ...[...m[2].matchAll(/\[(\d+)\]/g)].map((x) => Number(x[1]))]
  })
}

/** The graph with the changes made (a copy; `null` removes the key); the input is not modified. */
export function applyChanges<N extends { id: string }>(nodes: N[], changes: GraphChange[]): N[] {
  const out = structuredClone(nodes)
  for (const c of changes) {
    const node = out.find((n) => n.id === c.node_id)
    if (!node) throw new Error(`change for a missing node ${c.node_id}`)
    const path = parsePath(c.path)
    let at = node as unknown as Record<Segment, unknown>
    for (const [i, seg] of path.slice(0, -1).entries()) {
      if (at[seg] === undefined || at[seg] === null || typeof at[seg] !== 'object') at[seg] = typeof path[i + 1] === 'number' ? [] : {}
      at = at[seg] as Record<Segment, unknown>
    }
    const last = path[path.length - 1]
    if (c.new === null) delete at[last]
    else at[last] = structuredClone(c.new)
  }
  return out
}
