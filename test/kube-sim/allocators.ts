import type { ResourceType } from './resources.ts'
import { ApiError } from './status.ts'
import type { Store } from './store.ts'
import type { JsonObject, KObject } from './util.ts'

// Service ClusterIP and NodePort allocation, done synchronously at admission like the apiserver's
// allocators, so `create` returns a Service that already has its IP. Used values are derived from
// the stored Services, so there is no separate bitmap to keep consistent.

function usedIps(store: Store): Set<string> {
  const s = new Set<string>()
  for (const svc of store.list('/services')) for (const ip of (svc.spec?.clusterIPs ?? [svc.spec?.clusterIP]) as string[]) if (ip) s.add(ip)
  return s
}

function usedNodePorts(store: Store): Set<number> {
  const s = new Set<number>()
  for (const svc of store.list('/services')) for (const p of (svc.spec?.ports ?? []) as JsonObject[]) if (p.nodePort) s.add(p.nodePort)
  return s
}

export function admitService(store: Store, rt: ResourceType, svc: KObject, old: KObject | undefined): void {
  if (rt.group !== '' || rt.plural !== 'services') return
  const spec = svc.spec as JsonObject
  if (spec.type === 'ExternalName') { delete spec.clusterIP; delete spec.clusterIPs; return }
  if (!spec.clusterIP && old?.spec?.clusterIP) spec.clusterIP = old.spec.clusterIP
  if (!spec.clusterIP) {
    const used = usedIps(store)
    let ip: string | undefined
    for (let i = 10; i < 65000 && !ip; i++) {
      const cand = `10.96.${Math.floor(i / 254)}.${(i % 254) + 1}`
      if (!used.has(cand)) ip = cand
    }
    if (!ip) throw new ApiError(500, 'Internal error occurred: failed to allocate a serviceIP: range is full', 'InternalError')
    spec.clusterIP = ip
  } else if (spec.clusterIP !== 'None' && !old && usedIps(store).has(spec.clusterIP)) {
    throw new ApiError(422, `Service "${svc.metadata.name}" is invalid: spec.clusterIPs: Invalid value: []string{"${spec.clusterIP}"}: failed to allocate IP ${spec.clusterIP}: provided IP is already allocated`, 'Invalid')
  }
  spec.clusterIPs = [spec.clusterIP]
  if (spec.type === 'NodePort' || spec.type === 'LoadBalancer') {
    const used = usedNodePorts(store)
    const oldPorts = (old?.spec?.ports ?? []) as JsonObject[]
    for (const p of (spec.ports ?? []) as JsonObject[]) {
      if (p.nodePort) continue
      const prev = oldPorts.find((o) => o.port === p.port && (o.protocol ?? 'TCP') === (p.protocol ?? 'TCP'))?.nodePort
      if (prev) { p.nodePort = prev; continue }
      let n = 30000
      while (used.has(n) && n < 32767) n++
      p.nodePort = n
      used.add(n)
    }
  } else for (const p of (spec.ports ?? []) as JsonObject[]) delete p.nodePort
}
