import { ApiError } from '../status.ts'
import type { StoreEvent } from '../store.ts'
import { keyOf, splitKey, type Controller, type ControllerContext } from './manager.ts'

/**
 * Namespace lifecycle: every new namespace gets its `default` ServiceAccount and the
 * `kube-root-ca.crt` ConfigMap; a terminating namespace has its content deleted, then is finalized.
 */
export class NamespaceController implements Controller {
  readonly name = 'namespace-controller'
  readonly triggers: Controller['triggers']

  constructor(private readonly ctx: ControllerContext, private readonly caPem: string) {
    const onNs = (e: StoreEvent) => [`/${e.object.metadata.name}`]
    const onContent = (e: StoreEvent) => {
      const ns = e.object.metadata.namespace
      if (!ns) return []
      // Content vanishing may let a terminating namespace finish; a deleted default is recreated.
      if (ctx.store.get('/namespaces', undefined, ns)?.metadata.deletionTimestamp) return [`/${ns}`]
      const name = e.object.metadata.name
      if (e.type === 'DELETED' && ((e.key === '/serviceaccounts' && name === 'default') || (e.key === '/configmaps' && name === 'kube-root-ca.crt'))) return [`/${ns}`]
      return []
    }
    this.triggers = new Proxy({}, { get: (_t, key: string) => (key === '/namespaces' ? onNs : onContent), has: () => true }) as Controller['triggers']
  }

  start(): void { for (const o of this.ctx.store.list('/namespaces')) this.ctx.enqueue(this, keyOf(o)) }

  reconcile(key: string): void {
    const [, name] = splitKey(key)
    const nsRt = this.ctx.rt('', 'namespaces')
    const ns = this.ctx.api.tryGet(nsRt, undefined, name)
    if (!ns) return
    if (!ns.metadata.deletionTimestamp) { this.ensureDefaults(name); return }
    let remaining = 0
    for (const rt of this.ctx.registry.all()) {
      if (!rt.namespaced || rt.virtual) continue
      const key2 = `${rt.group}/${rt.plural}`
      for (const o of this.ctx.store.list(key2, name)) {
        remaining++
        if (o.metadata.deletionTimestamp) continue
        try { this.ctx.api.delete(rt, name, o.metadata.name!, { propagationPolicy: 'Background' }) } catch (e) { if (!(e instanceof ApiError)) throw e }
      }
    }
    if (remaining > 0) { this.ctx.after(this, key, 20); return }
    ns.spec = { ...(ns.spec ?? {}), finalizers: [] }
    this.ctx.api.update(nsRt, undefined, name, ns, { fieldManager: 'namespace-controller', subresource: 'finalize' })
  }

  private ensureDefaults(ns: string): void {
    const saRt = this.ctx.rt('', 'serviceaccounts')
    const cmRt = this.ctx.rt('', 'configmaps')
    try {
      if (!this.ctx.api.tryGet(saRt, ns, 'default')) this.ctx.api.create(saRt, ns, { metadata: { name: 'default' } }, { fieldManager: 'kube-controller-manager' })
      if (!this.ctx.api.tryGet(cmRt, ns, 'kube-root-ca.crt')) {
        this.ctx.api.create(cmRt, ns, { metadata: { name: 'kube-root-ca.crt', annotations: { 'kubernetes.io/description': 'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.' } }, data: { 'ca.crt': this.caPem } }, { fieldManager: 'kube-controller-manager' })
      }
    } catch (e) {
      if (!(e instanceof ApiError && (e.code === 409 || e.code === 403))) throw e
    }
  }
}
