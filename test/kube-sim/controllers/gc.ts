import type { ResourceType } from '../resources.ts'
import { ApiError } from '../status.ts'
import type { StoreEvent } from '../store.ts'
import type { KObject } from '../util.ts'
import { type Controller, type ControllerContext } from './manager.ts'

/**
 * The garbage collector: deletes dependents whose owners are all gone (background propagation),
 * deletes dependents before their owner under the `foregroundDeletion` finalizer, and strips
 * ownerReferences under the `orphan` finalizer. Keys are owner uids.
 */
export class GarbageCollector implements Controller {
  readonly name = 'garbage-collector'
  readonly triggers: Controller['triggers']
  private sweepTimer?: NodeJS.Timeout

  constructor(private readonly ctx: ControllerContext) {
    const onAny = (e: StoreEvent): string[] => {
      const keys: string[] = []
      if (e.type === 'DELETED') keys.push(e.object.metadata.uid!)
      const fin = e.object.metadata.finalizers ?? []
      if (e.type !== 'DELETED' && e.object.metadata.deletionTimestamp && (fin.includes('foregroundDeletion') || fin.includes('orphan'))) keys.push(e.object.metadata.uid!)
      // A dependent going away may unblock an owner waiting in foreground deletion.
      if (e.type === 'DELETED' || e.object.metadata.deletionTimestamp) for (const r of e.object.metadata.ownerReferences ?? []) keys.push(r.uid)
      return keys
    }
    this.triggers = new Proxy({}, { get: () => onAny, has: () => true }) as Controller['triggers']
  }

  start(): void {
    // A periodic sweep catches ownerReferences to objects that never existed, as the real GC does.
    const sweep = () => { this.ctx.enqueue(this, '*'); this.sweepTimer = setTimeout(sweep, 2000).unref() }
    this.sweepTimer = setTimeout(sweep, 500).unref()
  }

  stop(): void { if (this.sweepTimer) clearTimeout(this.sweepTimer) }

  private index(): { uids: Map<string, { key: string; obj: KObject }>; dependents: Map<string, { key: string; obj: KObject }[]> } {
    const uids = new Map<string, { key: string; obj: KObject }>()
    const dependents = new Map<string, { key: string; obj: KObject }[]>()
    for (const [key, obj] of this.ctx.store.entries()) {
      uids.set(obj.metadata.uid!, { key, obj })
      for (const r of obj.metadata.ownerReferences ?? []) {
        const l = dependents.get(r.uid) ?? []
        l.push({ key, obj })
        dependents.set(r.uid, l)
      }
    }
    return { uids, dependents }
  }

  private rtFor(key: string): ResourceType | undefined {
    const [group, plural] = key.split('/')
    return this.ctx.registry.byGroupPlural(group, plural)
  }

  reconcile(uid: string): void {
    const { uids, dependents } = this.index()
    const owners = uid === '*' ? [...dependents.keys()] : [uid]
    for (const ownerUid of owners) this.handle(ownerUid, uids, dependents.get(ownerUid) ?? [])
  }

  private handle(ownerUid: string, uids: Map<string, { key: string; obj: KObject }>, deps: { key: string; obj: KObject }[]): void {
    const owner = uids.get(ownerUid)
    const del = (d: { key: string; obj: KObject }, policy: 'Background' | 'Foreground') => {
      const rt = this.rtFor(d.key)
      if (!rt || (d.obj.metadata.deletionTimestamp && policy === 'Background')) return
      try { this.ctx.api.delete(rt, d.obj.metadata.namespace, d.obj.metadata.name!, { propagationPolicy: policy, preconditions: { uid: d.obj.metadata.uid } }) } catch (e) { if (!(e instanceof ApiError)) throw e }
    }
    if (!owner) {
      for (const d of deps) {
        const refs = d.obj.metadata.ownerReferences ?? []
        const live = refs.filter((r) => r.uid !== ownerUid && uids.has(r.uid))
        if (!live.length) del(d, 'Background')
        else this.stripRef(d, ownerUid)
      }
      return
    }
    const fin = owner.obj.metadata.finalizers ?? []
    if (!owner.obj.metadata.deletionTimestamp) return
    if (fin.includes('orphan')) {
      for (const d of deps) this.stripRef(d, ownerUid)
      this.dropFinalizer(owner, 'orphan')
      return
    }
    if (fin.includes('foregroundDeletion')) {
      for (const d of deps) if (!d.obj.metadata.deletionTimestamp) del(d, 'Foreground')
      const blocking = deps.filter((d) => uids.has(d.obj.metadata.uid!) && (d.obj.metadata.ownerReferences ?? []).some((r) => r.uid === ownerUid && r.blockOwnerDeletion))
      if (!blocking.length) this.dropFinalizer(owner, 'foregroundDeletion')
    }
  }

  private stripRef(d: { key: string; obj: KObject }, ownerUid: string): void {
    const rt = this.rtFor(d.key)
    if (!rt) return
    const cur = this.ctx.api.tryGet(rt, d.obj.metadata.namespace, d.obj.metadata.name!)
    if (!cur) return
    const refs = (cur.metadata.ownerReferences ?? []).filter((r) => r.uid !== ownerUid)
    if (refs.length === (cur.metadata.ownerReferences ?? []).length) return
    if (refs.length) cur.metadata.ownerReferences = refs
    else delete cur.metadata.ownerReferences
    this.ctx.api.update(rt, cur.metadata.namespace, cur.metadata.name!, cur, { fieldManager: 'garbage-collector' })
  }

  private dropFinalizer(o: { key: string; obj: KObject }, f: string): void {
    const rt = this.rtFor(o.key)
    if (!rt) return
    const cur = this.ctx.api.tryGet(rt, o.obj.metadata.namespace, o.obj.metadata.name!)
    if (!cur) return
    cur.metadata.finalizers = (cur.metadata.finalizers ?? []).filter((x) => x !== f)
    if (!cur.metadata.finalizers.length) delete cur.metadata.finalizers
    this.ctx.api.update(rt, cur.metadata.namespace, cur.metadata.name!, cur, { fieldManager: 'garbage-collector' })
  }
}
