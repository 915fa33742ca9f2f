// Services, Ingresses and NetworkPolicies. A LoadBalancer Service and an Ingress are pending until the
// cloud (or ingress controller) gives them an address; everything else works as soon as it exists.
import { result, spec, status, str, type DerivedStatus, type KubeObject, type Loose } from './types.ts'

/** The first address of a `status.loadBalancer.ingress` list (ip, else hostname). */
function loadBalancerAddress(o: KubeObject): string | null {
  const ingress = status(o).loadBalancer?.ingress
  if (!Array.isArray(ingress)) return null
  for (const i of ingress as Loose[]) { const a = str(i?.ip) ?? str(i?.hostname); if (a) return a }
  return null
}

export function serviceStatus(o: KubeObject): DerivedStatus {
  const s = spec(o)
  const type = str(s.type) ?? 'ClusterIP'
  const lb = loadBalancerAddress(o)
  const externalIPs = Array.isArray(s.externalIPs) ? s.externalIPs as string[] : []
  const counters = {
    type, clusterIP: str(s.clusterIP), externalIP: lb ?? externalIPs[0] ?? (type === 'ExternalName' ? str(s.externalName) : null),
    ports: Array.isArray(s.ports) ? s.ports.length : 0,
  }
  if (type === 'LoadBalancer' && !lb) return result('pending', 'waiting for a load-balancer address', null, counters)
  if (type === 'LoadBalancer') return result('running', `load balancer at ${lb}`, null, counters)
  if (type === 'ExternalName') return result('running', `alias of ${counters.externalIP ?? 'nothing'}`, null, counters)
  return result('running', counters.clusterIP && counters.clusterIP !== 'None' ? `cluster IP ${counters.clusterIP}` : 'headless', null, counters)
}

export function ingressStatus(o: KubeObject): DerivedStatus {
  const address = loadBalancerAddress(o)
  const hosts = (Array.isArray(spec(o).rules) ? spec(o).rules as Loose[] : []).map((r) => str(r?.host)).filter((h): h is string => !!h)
  const counters = { externalIP: address, hosts: hosts.join(',') || null }
  if (!address) return result('pending', 'waiting for an address from the ingress controller', null, counters)
  return result('running', `address ${address}`, null, counters)
}

export function networkPolicyStatus(o: KubeObject): DerivedStatus {
  const types = Array.isArray(spec(o).policyTypes) ? (spec(o).policyTypes as string[]).join(',') : null
  return result('running', 'present', null, { policyTypes: types })
}
