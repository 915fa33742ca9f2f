import { serverSideApply, trackUpdate } from './apply.ts'
import { applyDefaults, validate } from './defaults.ts'
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch } from './patch.ts'
import type { Registry } from './registry.ts'
import { apiVersionOf, storageKey, type ResourceType } from './resources.ts'
import { compileFieldSelector, matchLabels, parseFieldSelector, parseLabelSelector } from './selectors.ts'
import { alreadyExists, ApiError, badRequest, conflict, notFound } from './status.ts'
import type { Store } from './store.ts'
import { clone, deepEqual, isObject, newUid, randomSuffix, selectorString, timestamp, type Json, type JsonObject, type KObject } from './util.ts'

export type PatchType = 'json' | 'merge' | 'strategic' | 'apply'

export const patchContentTypes: Record<string, PatchType> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
  'application/apply-patch+json': 'apply',
}

export interface WriteOptions {
  dryRun?: boolean
  fieldManager?: string
  /** Fallback manager name, derived from the User-Agent as the apiserver does. */
  defaultManager?: string
  subresource?: string
  force?: boolean
}

export interface DeleteOptions {
  dryRun?: boolean
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan'
  orphanDependents?: boolean
  gracePeriodSeconds?: number
  preconditions?: { uid?: string; resourceVersion?: string }
}

export interface ListQuery {
  labelSelector?: string
  fieldSelector?: string
  limit?: number
  continue?: string
  resourceVersion?: string
  resourceVersionMatch?: string
}

export interface ListResult { items: KObject[]; resourceVersion: string; continue?: string; remainingItemCount?: number }

interface ContinueToken { rv: number; start: string }

/** A filter compiled from list/watch query parameters. */
export function compileFilter(rt: ResourceType, q: { labelSelector?: string; fieldSelector?: string }): (o: KObject) => boolean {
  const labels = parseLabelSelector(q.labelSelector)
  const fields = compileFieldSelector(storageKey(rt), parseFieldSelector(q.fieldSelector))
  return (o) => matchLabels(labels, o.metadata.labels) && fields(o)
}

const generatedSuffix = (name: string) => `${name}${randomSuffix()}`

/**
 * The apiserver's registry layer: every read and write, for HTTP handlers and controllers alike,
 * goes through here so defaulting, validation, optimistic concurrency, managedFields, generation and
 * graceful/finalizer-aware deletion behave the same whoever writes.
 */
export class ObjectApi {
  /** Allocation and other mutations that depend on cluster state (e.g. service ClusterIPs). */
  admit: (rt: ResourceType, obj: KObject, old: KObject | undefined) => void = () => undefined

  constructor(readonly store: Store, readonly registry: Registry) {}

  present(rt: ResourceType, o: KObject): KObject {
    o.apiVersion = apiVersionOf(rt)
    o.kind = rt.kind
    return o
  }

  private key(rt: ResourceType): string { return storageKey(rt) }

  tryGet(rt: ResourceType, ns: string | undefined, name: string): KObject | undefined {
    const o = this.store.get(this.key(rt), rt.namespaced ? ns : undefined, name)
    return o ? this.present(rt, o) : undefined
  }

  get(rt: ResourceType, ns: string | undefined, name: string): KObject {
    const o = this.tryGet(rt, ns, name)
    if (!o) throw notFound(rt.plural, rt.group, name)
    return o
  }

  list(rt: ResourceType, ns: string | undefined, q: ListQuery = {}): ListResult {
    const filter = compileFilter(rt, q)
    let rv = this.store.resourceVersion
    let start = ''
    if (q.continue) {
      let tok: ContinueToken
      try { tok = JSON.parse(Buffer.from(q.continue, 'base64url').toString()) as ContinueToken } catch { throw badRequest('continue key is not valid: illegal base64 data') }
      if (tok.rv < this.store.compactedThrough) {
        throw new ApiError(410, 'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.', 'Expired')
      }
      rv = tok.rv
      start = tok.start
    }
    if (q.resourceVersion && q.resourceVersionMatch === 'Exact' && Number(q.resourceVersion) < this.store.compactedThrough) {
      throw new ApiError(410, `too old resource version: ${q.resourceVersion} (${this.store.compactedThrough})`, 'Expired')
    }
    const all = this.store.list(this.key(rt), rt.namespaced ? ns : undefined)
      .filter((o) => !start || `${o.metadata.namespace ?? ''}/${o.metadata.name}` > start)
      .filter(filter)
    const limit = q.limit && q.limit > 0 ? q.limit : undefined
    const page = limit ? all.slice(0, limit) : all
    const out: ListResult = { items: page.map((o) => this.present(rt, o)), resourceVersion: String(rv) }
    if (limit && all.length > limit) {
      const last = page[page.length - 1]
      out.continue = Buffer.from(JSON.stringify({ rv, start: `${last.metadata.namespace ?? ''}/${last.metadata.name}` } satisfies ContinueToken)).toString('base64url')
      out.remainingItemCount = all.length - limit
    }
    return out
  }

  private requireNamespace(rt: ResourceType, ns: string | undefined): void {
    if (!rt.namespaced) return
    if (!ns) throw badRequest('the server could not find the requested resource: a namespace is required')
    const nsObj = this.store.get('/namespaces', undefined, ns)
    if (!nsObj) throw notFound('namespaces', '', ns)
    if (nsObj.metadata.deletionTimestamp) {
      throw new ApiError(403, `${rt.plural}${rt.group ? '.' + rt.group : ''} is forbidden: unable to create new content in namespace ${ns} because it is being terminated`, 'Forbidden', {
        kind: rt.plural, group: rt.group || undefined, causes: [{ type: 'NamespaceTerminating', message: `namespace ${ns} is being terminated`, field: 'metadata.namespace' }],
      })
    }
  }

  private checkIdentity(rt: ResourceType, obj: JsonObject, ns: string | undefined, name?: string): void {
    if (!isObject(obj) || !isObject(obj.metadata ?? {})) throw badRequest('Object \'metadata\' is invalid')
    obj.metadata ??= {}
    if (obj.kind !== undefined && obj.kind !== rt.kind) throw badRequest(`the API version in the data (${obj.apiVersion}) does not match the expected API version (${apiVersionOf(rt)}) or the kind (${obj.kind}) does not match ${rt.kind}`)
    if (rt.namespaced) {
      if (obj.metadata.namespace && ns && obj.metadata.namespace !== ns) throw badRequest('the namespace of the provided object does not match the namespace sent on the request')
      obj.metadata.namespace = ns
    } else delete obj.metadata.namespace
    if (name !== undefined && obj.metadata.name !== undefined && obj.metadata.name !== name) {
      throw badRequest(`the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`)
    }
    if (name !== undefined) obj.metadata.name = name
  }

  private manager(o: WriteOptions): string { return o.fieldManager ?? o.defaultManager ?? 'unknown' }

  create(rt: ResourceType, ns: string | undefined, body: Json, o: WriteOptions = {}, preTracked = false): KObject {
    if (!isObject(body)) throw badRequest('Object body is not a JSON object')
    const obj = clone(body) as KObject
    this.checkIdentity(rt, obj, ns)
    if (!obj.metadata.name) {
      if (obj.metadata.generateName) obj.metadata.name = generatedSuffix(obj.metadata.generateName)
      else throw new ApiError(422, `${rt.kind} "" is invalid: metadata.name: Required value: name or generateName is required`, 'Invalid', { kind: rt.kind, group: rt.group || undefined, causes: [{ reason: 'FieldValueRequired', message: 'Required value: name or generateName is required', field: 'metadata.name' }] })
    }
    if (rt.plural !== 'namespaces' || rt.group) this.requireNamespace(rt, obj.metadata.namespace)
    if (this.store.has(this.key(rt), obj.metadata.namespace, obj.metadata.name)) throw alreadyExists(rt.plural, rt.group, obj.metadata.name)
    const m = obj.metadata
    delete m.resourceVersion; delete m.deletionTimestamp; delete m.deletionGracePeriodSeconds
    m.uid = newUid()
    m.creationTimestamp = timestamp()
    if (rt.generation) m.generation = 1
    else delete m.generation
    // As in the apiserver's create strategies: status is owned by controllers, not by whoever creates.
    if (rt.subresources.status) delete obj.status
    this.present(rt, obj)
    applyDefaults(rt, obj)
    this.admit(rt, obj, undefined)
    validate(rt, obj)
    if (!preTracked) trackUpdate(undefined, obj, { manager: this.manager(o), apiVersion: apiVersionOf(rt) })
    if (o.dryRun) return obj
    return this.present(rt, this.store.put(this.key(rt), obj))
  }

  update(rt: ResourceType, ns: string | undefined, name: string, body: Json, o: WriteOptions = {}): KObject {
    if (!isObject(body)) throw badRequest('Object body is not a JSON object')
    const old = this.tryGet(rt, ns, name)
    if (!old) throw notFound(rt.plural, rt.group, name)
    const obj = clone(body) as KObject
    this.checkIdentity(rt, obj, ns, name)
    if (obj.metadata.resourceVersion && obj.metadata.resourceVersion !== old.metadata.resourceVersion) {
      throw conflict(rt.plural, rt.group, name, 'the object has been modified; please apply your changes to the latest version and try again')
    }
    return this.commit(rt, old, obj, o, false)
  }

  patch(rt: ResourceType, ns: string | undefined, name: string, type: PatchType, patch: Json, o: WriteOptions = {}): { obj: KObject; created: boolean } {
    const old = this.tryGet(rt, ns, name)
    if (type === 'apply') return this.apply(rt, ns, name, old, patch, o)
    if (!old) throw notFound(rt.plural, rt.group, name)
    let next: Json
    if (type === 'json') next = applyJsonPatch(old, patch)
    else if (type === 'merge') next = applyMergePatch(old, patch)
    else {
      if (rt.crd) throw new ApiError(415, `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`, 'UnsupportedMediaType')
      next = applyStrategicMergePatch(old, patch)
    }
    if (!isObject(next)) throw badRequest('patch did not produce an object')
    const obj = next as KObject
    obj.metadata ??= {}
    if (obj.metadata.resourceVersion && obj.metadata.resourceVersion !== old.metadata.resourceVersion) {
      throw conflict(rt.plural, rt.group, name, 'the object has been modified; please apply your changes to the latest version and try again')
    }
    this.checkIdentity(rt, obj, ns, name)
    return { obj: this.commit(rt, old, obj, o, false), created: false }
  }

  private apply(rt: ResourceType, ns: string | undefined, name: string, old: KObject | undefined, patch: Json, o: WriteOptions): { obj: KObject; created: boolean } {
    if (!o.fieldManager) throw badRequest('PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch')
    if (!isObject(patch)) throw badRequest('error decoding YAML: the applied configuration must be an object')
    const applied = clone(patch) as KObject
    if (!applied.apiVersion || !applied.kind) throw badRequest('invalid object type: apiVersion and kind must be set in the applied configuration')
    if (applied.kind !== rt.kind) throw badRequest(`the kind of the applied configuration (${applied.kind}) does not match ${rt.kind}`)
    applied.metadata ??= {}
    this.checkIdentity(rt, applied, ns, name)
    if (applied.metadata.resourceVersion && (!old || applied.metadata.resourceVersion !== old.metadata.resourceVersion)) {
      throw conflict(rt.plural, rt.group, name, 'the object has been modified; please apply your changes to the latest version and try again')
    }
    delete applied.metadata.resourceVersion
    const opts = { manager: o.fieldManager, apiVersion: apiVersionOf(rt), force: o.force ?? false, subresource: o.subresource, hasStatusSubresource: !!rt.subresources.status }
    if (!old) {
      if (o.subresource) throw notFound(rt.plural, rt.group, name)
      const created = serverSideApply(undefined, applied, opts)
      return { obj: this.create(rt, ns, created, o, true), created: true }
    }
    const merged = serverSideApply(old, applied, opts)
    return { obj: this.commit(rt, old, merged, o, true), created: false }
  }

  /** Shared tail of update/patch/apply: subresource scoping, defaults, validation, generation, no-op detection. */
  private commit(rt: ResourceType, old: KObject, incoming: KObject, o: WriteOptions, preTracked: boolean): KObject {
    let next: KObject
    if (o.subresource === 'status') {
      next = clone(old)
      next.status = incoming.status
      if (preTracked) next.metadata.managedFields = incoming.metadata.managedFields
    } else {
      next = incoming
      if (rt.subresources.status) next.status = clone(old.status)
      const m = next.metadata
      m.uid = old.metadata.uid
      m.creationTimestamp = old.metadata.creationTimestamp
      m.deletionTimestamp = old.metadata.deletionTimestamp
      m.deletionGracePeriodSeconds = old.metadata.deletionGracePeriodSeconds
      m.generation = old.metadata.generation
      if (m.deletionTimestamp === undefined) delete m.deletionTimestamp
      if (m.deletionGracePeriodSeconds === undefined) delete m.deletionGracePeriodSeconds
      if (m.generation === undefined) delete m.generation
      // A terminating object cannot gain finalizers, only lose them.
      if (old.metadata.deletionTimestamp) m.finalizers = (m.finalizers ?? []).filter((f) => (old.metadata.finalizers ?? []).includes(f))
    }
    this.present(rt, next)
    applyDefaults(rt, next)
    this.admit(rt, next, old)
    validate(rt, next, old)
    if (rt.generation && specChanged(old, next)) next.metadata.generation = (old.metadata.generation ?? 0) + 1
    if (!preTracked) trackUpdate(old, next, { manager: this.manager(o), apiVersion: apiVersionOf(rt), subresource: o.subresource })
    next.metadata.resourceVersion = old.metadata.resourceVersion
    if (deepEqual(withoutTimes(old), withoutTimes(next))) return old
    if (o.dryRun) return next
    if (this.readyToRemove(rt, next)) return this.present(rt, this.store.remove(this.key(rt), next.metadata.namespace, next.metadata.name!)!)
    return this.present(rt, this.store.put(this.key(rt), next))
  }

  private readyToRemove(rt: ResourceType, o: KObject): boolean {
    if (!o.metadata.deletionTimestamp || (o.metadata.finalizers ?? []).length) return false
    if (rt.plural === 'namespaces' && !rt.group && (o.spec?.finalizers ?? []).length) return false
    if (rt.plural === 'pods' && !rt.group && (o.metadata.deletionGracePeriodSeconds ?? 0) > 0) return false
    return true
  }

  /**
   * Deletes (or starts deleting) an object. `pending` is true when it stays visible with a
   * deletionTimestamp: finalizers, foreground/orphan propagation, or a pod's grace period.
   */
  delete(rt: ResourceType, ns: string | undefined, name: string, d: DeleteOptions = {}): { obj: KObject; pending: boolean } {
    const old = this.tryGet(rt, ns, name)
    if (!old) throw notFound(rt.plural, rt.group, name)
    if (d.preconditions?.uid && d.preconditions.uid !== old.metadata.uid) {
      throw conflict(rt.plural, rt.group, name, `Precondition failed: UID in precondition: ${d.preconditions.uid}, UID in object meta: ${old.metadata.uid}`)
    }
    if (d.preconditions?.resourceVersion && d.preconditions.resourceVersion !== old.metadata.resourceVersion) {
      throw conflict(rt.plural, rt.group, name, `Precondition failed: ResourceVersion in precondition: ${d.preconditions.resourceVersion}, ResourceVersion in object meta: ${old.metadata.resourceVersion}`)
    }
    // The legacy orphanDependents flag still selects Orphan; everything defaults to Background.
    const policy = d.propagationPolicy ?? (d.orphanDependents === true ? 'Orphan' : 'Background')
    const next = clone(old)
    const m = next.metadata
    const isPod = rt.plural === 'pods' && !rt.group
    const isNamespace = rt.plural === 'namespaces' && !rt.group
    let grace = 0
    if (isPod) {
      const terminal = old.status?.phase === 'Succeeded' || old.status?.phase === 'Failed'
      grace = d.gracePeriodSeconds ?? old.spec?.terminationGracePeriodSeconds ?? 30
      // Unscheduled or finished pods have no kubelet to wait for.
      if (!old.spec?.nodeName || terminal) grace = 0
    }
    if (policy === 'Foreground' && !(m.finalizers ?? []).includes('foregroundDeletion')) m.finalizers = [...(m.finalizers ?? []), 'foregroundDeletion']
    if (policy === 'Orphan' && !(m.finalizers ?? []).includes('orphan')) m.finalizers = [...(m.finalizers ?? []), 'orphan']
    if (isPod) {
      // A second delete may shorten a pod's grace period, never lengthen it.
      if (!old.metadata.deletionTimestamp || grace < (old.metadata.deletionGracePeriodSeconds ?? Infinity)) {
        m.deletionTimestamp = timestamp(Date.now() + grace * 1000)
        m.deletionGracePeriodSeconds = grace
      }
    } else if (!old.metadata.deletionTimestamp) {
      m.deletionTimestamp = timestamp()
      m.deletionGracePeriodSeconds = 0
    }
    if (isNamespace) next.status = { ...(next.status ?? {}), phase: 'Terminating' }
    if (rt.generation && !old.metadata.deletionTimestamp) m.generation = (m.generation ?? 0) + 1
    const pending = !this.readyToRemove(rt, next) || isNamespace
    if (d.dryRun) return { obj: next, pending }
    if (!pending) return { obj: this.present(rt, this.store.remove(this.key(rt), m.namespace, m.name!)!), pending: false }
    if (deepEqual(withoutTimes(old), withoutTimes(next))) return { obj: old, pending: true }
    return { obj: this.present(rt, this.store.put(this.key(rt), next)), pending: true }
  }

  deleteCollection(rt: ResourceType, ns: string | undefined, q: ListQuery, d: DeleteOptions): KObject[] {
    const out: KObject[] = []
    for (const o of this.list(rt, ns, { labelSelector: q.labelSelector, fieldSelector: q.fieldSelector }).items) {
      try { out.push(this.delete(rt, o.metadata.namespace, o.metadata.name!, d).obj) } catch (e) { if (!(e instanceof ApiError && e.code === 404)) throw e }
    }
    return out
  }

  // ---- scale subresource ----

  private replicaPaths(rt: ResourceType): { spec: string; status: string; selector?: string } {
    const s = rt.crd?.scale
    if (s) return { spec: s.specReplicasPath, status: s.statusReplicasPath, selector: s.labelSelectorPath }
    return { spec: '.spec.replicas', status: '.status.replicas' }
  }

  getScale(rt: ResourceType, ns: string | undefined, name: string): KObject {
    const o = this.get(rt, ns, name)
    const p = this.replicaPaths(rt)
    const sel = p.selector ? readPath(o, p.selector) : o.spec?.selector
    return {
      kind: 'Scale', apiVersion: 'autoscaling/v1',
      metadata: { name, namespace: o.metadata.namespace, uid: o.metadata.uid, resourceVersion: o.metadata.resourceVersion, creationTimestamp: o.metadata.creationTimestamp },
      spec: { replicas: readPath(o, p.spec) ?? 0 },
      status: { replicas: readPath(o, p.status) ?? 0, selector: typeof sel === 'string' ? sel : selectorString(sel) },
    }
  }

  updateScale(rt: ResourceType, ns: string | undefined, name: string, scale: Json, o: WriteOptions): KObject {
    const cur = this.get(rt, ns, name)
    if (scale?.metadata?.resourceVersion && scale.metadata.resourceVersion !== cur.metadata.resourceVersion) {
      throw conflict(rt.plural, rt.group, name, 'the object has been modified; please apply your changes to the latest version and try again')
    }
    const replicas = scale?.spec?.replicas
    if (typeof replicas !== 'number' || replicas < 0) throw new ApiError(422, `Scale.autoscaling "${name}" is invalid: spec.replicas: Invalid value: ${replicas}: must be greater than or equal to 0`, 'Invalid')
    const next = clone(cur)
    writePath(next, this.replicaPaths(rt).spec, replicas)
    this.commit(rt, cur, next, { ...o, subresource: 'scale' }, false)
    return this.getScale(rt, ns, name)
  }

  patchScale(rt: ResourceType, ns: string | undefined, name: string, type: PatchType, patch: Json, o: WriteOptions): KObject {
    const cur = this.getScale(rt, ns, name)
    const next = type === 'json' ? applyJsonPatch(cur, patch) : type === 'merge' ? applyMergePatch(cur, patch) : type === 'strategic' ? applyStrategicMergePatch(cur, patch) : applyMergePatch(cur, patch)
    return this.updateScale(rt, ns, name, next, o)
  }
}

function specChanged(a: KObject, b: KObject): boolean {
  const strip = (o: KObject) => { const c: JsonObject = { ...o }; delete c.metadata; delete c.status; delete c.apiVersion; delete c.kind; return c }
  return !deepEqual(strip(a), strip(b))
}

function withoutTimes(o: KObject): KObject {
  const c = clone(o)
  for (const e of c.metadata.managedFields ?? []) delete e.time
  return c
}

function readPath(o: JsonObject, path: string): Json {
  let cur: Json = o
  for (const seg of path.replace(/^\./, '').split('.')) { if (!isObject(cur)) return undefined; cur = cur[seg] }
  return cur
}

function writePath(o: JsonObject, path: string, v: Json): void {
  const segs = path.replace(/^\./, '').split('.')
  let cur: JsonObject = o
  for (const seg of segs.slice(0, -1)) cur = (cur[seg] ??= {})
  cur[segs[segs.length - 1]] = v
}
