// What the read caches hold: deep-frozen copies of plain data. Frozen, an entry can be handed to a reader
// that only reads it (the reply of GET /workflows/:id) without a copy, and its serialized reply can be kept
// beside it: nothing can change its content while it lives. Freezing protects only plain data, so anything
// else (a Date, a Buffer, a class instance: their state is not in their properties) makes a value
// uncacheable rather than shared.

// Every snapshot made here, so the reply serializer can tell a value whose content never changes.
const snapshots = new WeakSet<object>()

const NOT_PLAIN: unique symbol = Symbol('not plain data')

/** Whether `value` is a snapshot: deep-frozen plain data, the same content for as long as it lives. */
export function isSnapshot(value: unknown): boolean {
  return typeof value === 'object' && value !== null && snapshots.has(value)
}

/** A snapshot of `value` (a deep-frozen copy), or undefined when it holds anything but plain data. */
export function snapshotOf<T>(value: T): T | undefined {
  const copy = frozenCopy(value)
  if (copy === NOT_PLAIN) return undefined
  if (typeof copy === 'object' && copy !== null) snapshots.add(copy)
  return copy as T
}

function frozenCopy(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return typeof value === 'function' ? NOT_PLAIN : value
  if (Array.isArray(value)) {
    const out = new Array(value.length)
    for (let i = 0; i < value.length; i++) {
      const item = frozenCopy(value[i])
      if (item === NOT_PLAIN) return NOT_PLAIN
      out[i] = item
    }
    return Object.freeze(out)
  }
  const proto = Object.getPrototypeOf(value)
  if (proto !== Object.prototype && proto !== null) return NOT_PLAIN
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value)) {
    const item = frozenCopy((value as Record<string, unknown>)[key])
    if (item === NOT_PLAIN) return NOT_PLAIN
    setOwn(out, key, item)
  }
  return Object.freeze(out)
}

/**
 * A mutable deep copy of a snapshot, for callers that may change what they read. Snapshots hold plain data
 * only, so this is what structuredClone would answer, several times faster.
 */
export function thaw<T>(snapshot: T): T {
  return thawed(snapshot) as T
}

function thawed(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value
  if (Array.isArray(value)) {
    const out = new Array(value.length)
    for (let i = 0; i < value.length; i++) out[i] = thawed(value[i])
    return out
  }
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value)) setOwn(out, key, thawed((value as Record<string, unknown>)[key]))
  return out
}

// An own data property even for the key `__proto__`, which plain assignment would take as the prototype.
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
  else target[key] = value
}

// Per function, what it derived from each snapshot it was given.
const derivations = new WeakMap<(source: never) => unknown, WeakMap<object, unknown>>()

/**
 * `derive(source)` as a snapshot, computed once per snapshot `source` and kept as long as `source` lives
 * (a reply shaped from a cached page keeps its serialized form too). `derive` must be a pure function of its
 * argument, and one stable function (not a fresh closure per call). Anything but a snapshot is derived afresh.
 */
export function derivedSnapshot<S, R>(source: S, derive: (source: S) => R): R {
  if (!isSnapshot(source)) return derive(source)
  let memo = derivations.get(derive as (source: never) => unknown)
  if (!memo) derivations.set(derive as (source: never) => unknown, memo = new WeakMap())
  if (memo.has(source as object)) return memo.get(source as object) as R
  const derived = derive(source)
  const snapshot = snapshotOf(derived)
  memo.set(source as object, snapshot ?? derived)
  return snapshot ?? derived
}
