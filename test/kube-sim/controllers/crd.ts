import type { StoreEvent } from '../store.ts'
import { timestamp, type JsonObject } from '../util.ts'
import { keyOf, splitKey, type Controller, type ControllerContext } from './manager.ts'

const cleanup = 'customresourcecleanup.apiextensions.k8s.io'

/**
 * Marks CRDs Established (the registry already serves them: it is updated synchronously on every CRD
 * write so discovery changes as soon as the create returns), and deletes all custom resources of a
 * CRD being deleted before letting it go.
 */
export class CrdController implements Controller {
  readonly name = 'apiextensions-controller'
  readonly triggers: Controller['triggers'] = {
    'apiextensions.k8s.io/customresourcedefinitions': (e: StoreEvent) => [keyOf(e.object)],
  }

  constructor(private readonly ctx: ControllerContext) {}

  start(): void { for (const o of this.ctx.store.list('apiextensions.k8s.io/customresourcedefinitions')) this.ctx.enqueue(this, keyOf(o)) }

  reconcile(key: string): void {
    const [, name] = splitKey(key)
    const crdRt = this.ctx.rt('apiextensions.k8s.io', 'customresourcedefinitions')
    const crd = this.ctx.api.tryGet(crdRt, undefined, name)
    if (!crd) return
    const spec = crd.spec as JsonObject
    if (crd.metadata.deletionTimestamp) {
      // The type is no longer served once its CRD is terminating, so its objects are removed directly.
      const storage = `${spec.group}/${spec.names.plural}`
      for (const o of this.ctx.store.list(storage)) this.ctx.store.remove(storage, o.metadata.namespace, o.metadata.name!)
      crd.metadata.finalizers = (crd.metadata.finalizers ?? []).filter((f) => f !== cleanup)
      this.ctx.api.update(crdRt, undefined, name, crd, { fieldManager: 'kube-apiserver' })
      return
    }
    if (!(crd.metadata.finalizers ?? []).includes(cleanup)) {
      crd.metadata.finalizers = [...(crd.metadata.finalizers ?? []), cleanup]
      this.ctx.api.update(crdRt, undefined, name, crd, { fieldManager: 'kube-apiserver' })
      return
    }
    const prev = (crd.status?.conditions ?? []) as JsonObject[]
    const cond = (type: string, reason: string, message: string) => ({ type, status: 'True', lastTransitionTime: prev.find((c) => c.type === type)?.lastTransitionTime ?? timestamp(), reason, message })
    const names = { ...spec.names, singular: spec.names.singular ?? spec.names.kind.toLowerCase(), listKind: spec.names.listKind ?? `${spec.names.kind}List` }
    crd.status = {
      conditions: [cond('NamesAccepted', 'NoConflicts', 'no conflicts found'), cond('Established', 'InitialNamesAccepted', 'the initial names have been accepted')],
      acceptedNames: names,
      storedVersions: [...new Set([...(crd.status?.storedVersions ?? []), ...((spec.versions ?? []) as JsonObject[]).filter((v) => v.storage).map((v) => v.name as string)])],
    }
    this.ctx.api.update(crdRt, undefined, name, crd, { fieldManager: 'kube-apiserver', subresource: 'status' })
  }
}
