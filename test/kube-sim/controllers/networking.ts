import { ApiError } from '../status.ts'
import type { StoreEvent } from '../store.ts'
import { type JsonObject, type KObject } from '../util.ts'
import { isPodReady, keyOf, splitKey, type Controller, type ControllerContext } from './manager.ts'

const selects = (svc: KObject | undefined, pod: KObject | undefined) => {
  const sel = svc?.spec?.selector as Record<string, string> | undefined
  return !!sel && !!pod && Object.keys(sel).length > 0 && Object.entries(sel).every(([k, v]) => pod.metadata.labels?.[k] === v)
}

/** Endpoints for every Service with a selector: ready pod IPs in `addresses`, the rest in `notReadyAddresses`. */
export class EndpointsController implements Controller {
  readonly name = 'endpoints-controller'
  readonly triggers: Controller['triggers']

  constructor(private readonly ctx: ControllerContext) {
    this.triggers = {
      '/services': (e: StoreEvent) => [keyOf(e.object)],
      '/pods': (e: StoreEvent) => ctx.store.list('/services', e.object.metadata.namespace).filter((s) => selects(s, e.object) || selects(s, e.old)).map(keyOf),
    }
  }

  start(): void { for (const o of this.ctx.store.list('/services')) this.ctx.enqueue(this, keyOf(o)) }

  reconcile(key: string): void {
    const [ns, name] = splitKey(key)
    const epRt = this.ctx.rt('', 'endpoints')
    const svc = this.ctx.store.get('/services', ns, name)
    const existing = this.ctx.api.tryGet(epRt, ns, name)
    if (!svc || svc.metadata.deletionTimestamp) {
      if (existing && svc === undefined) { try { this.ctx.api.delete(epRt, ns, name, {}) } catch (e) { if (!(e instanceof ApiError)) throw e } }
      return
    }
    if (!svc.spec?.selector || !Object.keys(svc.spec.selector).length) return
    const pods = this.ctx.store.list('/pods', ns).filter((p) => selects(svc, p) && p.status?.podIP && !p.metadata.deletionTimestamp && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed')
    const addr = (p: KObject) => ({ ip: p.status!.podIP, nodeName: p.spec?.nodeName, targetRef: { kind: 'Pod', namespace: ns, name: p.metadata.name, uid: p.metadata.uid } })
    const ready = pods.filter(isPodReady).map(addr)
    const notReady = pods.filter((p) => !isPodReady(p)).map(addr)
    const ports = ((svc.spec.ports ?? []) as JsonObject[]).map((sp) => {
      let port = sp.targetPort ?? sp.port
      if (typeof port === 'string') {
        for (const p of pods) for (const c of (p.spec?.containers ?? []) as JsonObject[]) for (const cp of (c.ports ?? []) as JsonObject[]) if (cp.name === port) port = cp.containerPort
        if (typeof port === 'string') port = Number(port) || sp.port
      }
      const out: JsonObject = { port, protocol: sp.protocol ?? 'TCP' }
      if (sp.name) out.name = sp.name
      if (sp.appProtocol) out.appProtocol = sp.appProtocol
      return out
    })
    const subset: JsonObject = { ports }
    if (ready.length) subset.addresses = ready
    if (notReady.length) subset.notReadyAddresses = notReady
    const desired: KObject = { metadata: { name, namespace: ns, labels: { ...(svc.metadata.labels ?? {}) } }, subsets: ready.length || notReady.length ? [subset] : [] }
    if (!existing) { this.ctx.api.create(epRt, ns, desired, { fieldManager: 'kube-controller-manager' }); return }
    existing.subsets = desired.subsets
    existing.metadata.labels = desired.metadata.labels
    if (!existing.subsets.length) delete existing.subsets
    this.ctx.api.update(epRt, ns, name, existing, { fieldManager: 'kube-controller-manager' })
  }
}

/** Stand-in cloud provider and ingress controller: LoadBalancer Services and Ingresses get an address. */
export class LoadBalancerController implements Controller {
  readonly name = 'service-lb-controller'
  readonly triggers: Controller['triggers'] = {
    '/services': (e: StoreEvent) => [`svc:${keyOf(e.object)}`],
    'networking.k8s.io/ingresses': (e: StoreEvent) => [`ing:${keyOf(e.object)}`],
  }
  private readonly firstSeen = new Map<string, number>()
  private nextIp = 0
  private readonly ips = new Map<string, string>()

  constructor(private readonly ctx: ControllerContext) {}

  start(): void {
    for (const o of this.ctx.store.list('/services')) this.ctx.enqueue(this, `svc:${keyOf(o)}`)
    for (const o of this.ctx.store.list('networking.k8s.io/ingresses')) this.ctx.enqueue(this, `ing:${keyOf(o)}`)
  }

  private ipFor(uid: string): string {
    let ip = this.ips.get(uid)
    if (!ip) { ip = `172.18.255.${200 + (this.nextIp++ % 50)}`; this.ips.set(uid, ip) }
    return ip
  }

  reconcile(key: string): void {
    const kind = key.slice(0, 3)
    const [ns, name] = splitKey(key.slice(4))
    const rt = kind === 'svc' ? this.ctx.rt('', 'services') : this.ctx.rt('networking.k8s.io', 'ingresses')
    const o = this.ctx.api.tryGet(rt, ns, name)
    if (!o || o.metadata.deletionTimestamp) return
    const uid = o.metadata.uid!
    const wantsLb = kind === 'ing' || o.spec?.type === 'LoadBalancer'
    const has = ((o.status?.loadBalancer?.ingress ?? []) as JsonObject[]).length > 0
    if (!wantsLb) {
      if (has) { o.status = { loadBalancer: {} }; this.ctx.api.update(rt, ns, name, o, { fieldManager: 'kube-controller-manager', subresource: 'status' }) }
      return
    }
    if (has) return
    const seen = this.firstSeen.get(uid) ?? Date.now()
    this.firstSeen.set(uid, seen)
    const wait = seen + this.ctx.timing.loadBalancerMs - Date.now()
    if (wait > 0) {
      if (kind === 'svc' && wait >= this.ctx.timing.loadBalancerMs - 1) this.ctx.events.record(o, 'Normal', 'EnsuringLoadBalancer', 'Ensuring load balancer', 'service-controller')
      this.ctx.after(this, key, wait)
      return
    }
    const ip = this.ipFor(uid)
    o.status = kind === 'svc'
      ? { loadBalancer: { ingress: [{ ip, ipMode: 'VIP' }] } }
      : { loadBalancer: { ingress: [{ ip }] } }
    try {
      this.ctx.api.update(rt, ns, name, o, { fieldManager: kind === 'svc' ? 'kube-controller-manager' : 'ingress-controller', subresource: 'status' })
    } catch (e) { if (!(e instanceof ApiError && e.code === 404)) throw e }
    if (kind === 'svc') this.ctx.events.record(o, 'Normal', 'EnsuredLoadBalancer', 'Ensured load balancer', 'service-controller')
    else this.ctx.events.record(o, 'Normal', 'Sync', 'Scheduled for sync', 'ingress-controller')
    this.firstSeen.delete(uid)
  }
}
