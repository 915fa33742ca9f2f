// Checks that need no cluster: the node's data, its edges and what it renders to. The fixable concerns
// come from fixes.ts; the rest are reported with a suggestion only.
import { isWorkload } from '../../manifests/wiring.ts'
import { WORKLOAD_KINDS } from '../../manifests/workloads.ts'
import type { KubeObject, ManifestNode, RenderResult } from '../../manifests/types.ts'
import { assessImage, assessName, assessNamespace, assessRequests, assessSelector, assessTargetPort, type Assessment, type LiveFacts } from './fixes.ts'
import type { GraphView } from './graph-view.ts'
import { pass, problem, type Check } from './types.ts'

// Render diagnostics a dedicated check already reports in its own words.
const COVERED = [
  /^name: /, /^namespace: /, /are in different namespaces; the edge has no effect$/,
  /^scaleTargetRef: connect /, /^selector: set it or connect a workload$/,
]

/** The check of an assessment, naming its fix only when that fix has a plan. */
function fromAssessment(a: Assessment): Check[] {
  if (!a.check) return []
  if (typeof a.plan === 'string' && a.check.fix_type) {
    const { fix_type: _unused, ...rest } = a.check
    return [rest]
  }
  return [a.check]
}

const sameLine = (s: string) => s.replace(/[\r\n\u2028\u2029]+/g, ' ')
type Loose = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

function servicePorts(object: KubeObject): Check {
  const spec = (object.spec ?? {}) as Loose
  const type = spec.type ?? 'ClusterIP'
  const ports = Array.isArray(spec.ports) ? spec.ports as Loose[] : []
  const seen = new Set<string>()
  for (const p of ports) {
    const key = `${p.port}/${p.protocol ?? 'TCP'}`
    if (seen.has(key)) return problem('ports', 'error', `port ${key} is listed twice`, 'give each port a different number or protocol')
    seen.add(key)
    if (p.nodePort !== undefined && !['NodePort', 'LoadBalancer'].includes(type)) return problem('ports', 'error', `nodePort ${p.nodePort} is set on a ${type} service; the API server refuses it`, 'remove the nodePort or make the service a NodePort or LoadBalancer')
    if (p.nodePort !== undefined && (p.nodePort < 30000 || p.nodePort > 32767)) return problem('ports', 'warning', `nodePort ${p.nodePort} is outside the default node port range 30000-32767`, 'choose a node port between 30000 and 32767, or leave it unset to have one allocated')
  }
  if (type === 'ExternalName') return pass('ports', 'an ExternalName service forwards by DNS')
  return pass('ports', `exposes ${ports.map((p) => `${p.port}${p.targetPort !== undefined ? ` → ${p.targetPort}` : ''}`).join(', ')}`)
}

function ingressBackends(g: GraphView, object: KubeObject): Check[] {
  const namespace = object.metadata.namespace
  const out: Check[] = []
  const routes: string[] = []
  for (const rule of ((object.spec as Loose)?.rules ?? []) as Loose[]) {
    for (const p of (rule.http?.paths ?? []) as Loose[]) {
      const name = p.backend?.service?.name as string | undefined
      const port = p.backend?.service?.port?.number as number | undefined
      if (!name) continue
      const service = [...g.views.values()].find((v) => v.type === 'service' && v.name === name && v.namespace === namespace)
      if (!service) {
        out.push(problem('backend', 'warning', `path ${p.path} routes to service ${name}, which is not in this workflow: it must already exist in namespace ${namespace}`, `connect the ${name} service node to this ingress, or add it`))
        continue
      }
      const listed = Array.isArray(service.data.ports) && service.data.ports.length > 0 ? (service.data.ports as Loose[]).map((x) => x.port) : [service.data.port ?? 80]
      if (port !== undefined && !listed.includes(port)) {
        out.push(problem('backend', 'error', `path ${p.path} routes to port ${port} of service ${name}, which exposes ${listed.join(', ')}`, `route to port ${listed[0]}`))
        continue
      }
      routes.push(`${p.path} → ${name}:${port}`)
    }
  }
  if (out.length === 0) out.push(pass('backend', routes.length ? `routes ${routes.join(', ')}` : 'no backends'))
  return out
}

function scaleTarget(g: GraphView, node: ManifestNode): Check {
  const targets = g.linksOf(node.id, 'workload-hpa').map((l) => l.peer)
  const scalable = targets.find((t) => WORKLOAD_KINDS[t.type as keyof typeof WORKLOAD_KINDS]?.scalable)
  if (scalable) return pass('scale-target', `scales ${WORKLOAD_KINDS[scalable.type as keyof typeof WORKLOAD_KINDS].kind} ${scalable.name}`)
  if (targets.length > 0) return problem('scale-target', 'error', `${targets.map((t) => `a ${WORKLOAD_KINDS[t.type as keyof typeof WORKLOAD_KINDS].kind} (${t.name})`).join(', ')} cannot be scaled`, 'connect a Deployment, StatefulSet or ReplicaSet instead')
  return problem('scale-target', 'error', 'no workload is connected, so there is nothing to scale', 'connect the Deployment, StatefulSet or ReplicaSet to scale')
}

const USAGE_RULES = { configmap: 'config-workload', secret: 'config-workload', persistentvolumeclaim: 'pvc-workload', serviceaccount: 'serviceaccount-workload' } as const

function usage(g: GraphView, node: ManifestNode): Check {
  const users = g.linksOf(node.id, USAGE_RULES[node.type as keyof typeof USAGE_RULES]).map((l) => l.peer.name)
  if (users.length > 0) return pass('usage', `used by ${users.join(', ')}`)
  return problem('usage', 'warning', 'no workload is connected, so no pod uses it', 'connect it to the workload that needs it')
}

function manifest(node: ManifestNode, render: RenderResult): Check[] {
  const mine = render.diagnostics.filter((d) => d.node_id === node.id)
  const out = mine.filter((d) => !COVERED.some((re) => re.test(d.message))).map((d) => problem(
    'manifest', d.severity, sameLine(d.message),
    d.severity === 'error' ? 'correct the field or edge it names; the node deploys nothing until then' : 'review the field or edge it names (a warning does not block a run)',
  ))
  if (mine.some((d) => d.severity === 'error')) return out
  const objects = render.objects.filter((o) => o.node_id === node.id && o.object.kind !== 'Namespace').map((o) => o.object)
  const names = objects.map((o) => `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`)
  return [pass('manifest', names.length ? `renders ${names.join(', ')}` : 'renders no object'), ...out]
}

export function staticChecks(g: GraphView, node: ManifestNode, render: RenderResult, live: LiveFacts | null): Check[] {
  const own = render.objects.find((o) => o.node_id === node.id && o.object.kind !== 'Namespace')?.object
  const checks: Check[] = [...fromAssessment(assessName(g, node)), ...fromAssessment(assessNamespace(g, node))]
  if (isWorkload(node.type)) checks.push(...fromAssessment(assessImage(node, live)), ...fromAssessment(assessRequests(g, node)))
  if (node.type === 'service') {
    checks.push(...fromAssessment(assessSelector(g, node)), ...fromAssessment(assessTargetPort(g, node)))
    if (own) checks.push(servicePorts(own))
  }
  if (node.type === 'ingress' && own) checks.push(...ingressBackends(g, own))
  if (node.type === 'hpa') checks.push(scaleTarget(g, node), ...fromAssessment(assessRequests(g, node)))
  if (node.type === 'networkpolicy' || node.type === 'poddisruptionbudget') checks.push(...fromAssessment(assessSelector(g, node)))
  if (node.type in USAGE_RULES) checks.push(usage(g, node))
  checks.push(...manifest(node, render))
  return checks
}
