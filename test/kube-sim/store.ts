import { clone, type KObject } from './util.ts'

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED'

export interface StoreEvent {
  type: EventType
  /** Storage key, `group/plural`. */
  key: string
  rv: number
  object: KObject
  /** The object before this change (absent for ADDED). */
  old?: KObject
}

export type Listener = (e: StoreEvent) => void

/**
 * The simulated etcd: objects by storage key, one global resourceVersion counter, and a bounded
 * ring of past events so watches can resume from a resourceVersion until it falls out of the ring.
 */
export class Store {
  private readonly data = new Map<string, Map<string, KObject>>()
  private history: StoreEvent[] = []
  private readonly listeners = new Set<Listener>()
  private rev = 1
  /** Events at or below this revision are gone; a watch asking to resume from before it gets 410. */
  compactedThrough = 0

  constructor(private readonly historyLimit: number) {}

  get resourceVersion(): number { return this.rev }

  private bucket(key: string): Map<string, KObject> {
    let b = this.data.get(key)
    if (!b) { b = new Map(); this.data.set(key, b) }
    return b
  }

  private static id(ns: string | undefined, name: string): string { return `${ns ?? ''}/${name}` }

  get(key: string, ns: string | undefined, name: string): KObject | undefined {
    const o = this.data.get(key)?.get(Store.id(ns, name))
    return o ? clone(o) : undefined
  }

  has(key: string, ns: string | undefined, name: string): boolean {
    return this.data.get(key)?.has(Store.id(ns, name)) ?? false
  }

  /** Objects in etcd key order (namespace, then name), which is the order list pagination walks. */
  list(key: string, ns?: string): KObject[] {
    const b = this.data.get(key)
    if (!b) return []
    const ids = [...b.keys()].filter((id) => ns === undefined || id.startsWith(`${ns}/`)).sort()
    return ids.map((id) => clone(b.get(id)!))
  }

  /** Every stored object, for sweeps such as garbage collection. */
  *entries(): Generator<[string, KObject]> {
    for (const [key, b] of this.data) for (const o of b.values()) yield [key, o]
  }

  /** Writes (creates or replaces) an object, stamping a fresh resourceVersion. Returns the stored copy. */
  put(key: string, obj: KObject): KObject {
    const id = Store.id(obj.metadata.namespace, obj.metadata.name!)
    const b = this.bucket(key)
    const old = b.get(id)
    const rv = ++this.rev
    const stored = clone(obj)
    stored.metadata.resourceVersion = String(rv)
    b.set(id, stored)
    this.record({ type: old ? 'MODIFIED' : 'ADDED', key, rv, object: stored, old })
    return clone(stored)
  }

  remove(key: string, ns: string | undefined, name: string): KObject | undefined {
    const b = this.data.get(key)
    const id = Store.id(ns, name)
    const old = b?.get(id)
    if (!b || !old) return undefined
    b.delete(id)
    const rv = ++this.rev
    // A DELETED event carries the object's final state stamped with the deletion's revision.
    const gone = clone(old)
    gone.metadata.resourceVersion = String(rv)
    this.record({ type: 'DELETED', key, rv, object: gone, old })
    return clone(gone)
  }

  private record(e: StoreEvent): void {
    this.history.push(e)
    if (this.history.length > this.historyLimit) {
      const dropped = this.history.splice(0, this.history.length - this.historyLimit)
      this.compactedThrough = dropped[dropped.length - 1].rv
    }
    for (const l of [...this.listeners]) l(e)
  }

  /** Events after `rv`, or 'expired' when some of them have been compacted away. */
  since(rv: number): StoreEvent[] | 'expired' {
    if (rv < this.compactedThrough) return 'expired'
    return this.history.filter((e) => e.rv > rv)
  }

  /** Forget all history; bumping the revision makes every resourceVersion a client holds now too old. */
  compact(): void {
    this.history = []
    this.compactedThrough = ++this.rev
  }

  subscribe(l: Listener): () => void {
    this.listeners.add(l)
    return () => { this.listeners.delete(l) }
  }
}
