// @peculiar/x509 resolves its services through tsyringe, which refuses to load unless the
// Reflect metadata API exists. Nothing here uses decorator metadata semantics beyond storing and
// reading values, so a small map-backed implementation is enough and avoids another dependency.
// It only installs itself when no polyfill (reflect-metadata, core-js) is already present.
type Key = unknown
const store = new WeakMap<object, Map<string | symbol | undefined, Map<Key, unknown>>>()

function table(target: object, prop: string | symbol | undefined, create: boolean): Map<Key, unknown> | undefined {
  let byProp = store.get(target)
  if (!byProp) { if (!create) return undefined; byProp = new Map(); store.set(target, byProp) }
  let t = byProp.get(prop)
  if (!t) { if (!create) return undefined; t = new Map(); byProp.set(prop, t) }
  return t
}

interface MetadataReflect {
  getMetadata?: unknown
  defineMetadata?: unknown
  getOwnMetadata?: unknown
  hasMetadata?: unknown
  hasOwnMetadata?: unknown
  metadata?: unknown
}

const R = Reflect as unknown as MetadataReflect
if (typeof R.getMetadata !== 'function') {
  const getOwn = (key: Key, target: object, prop?: string | symbol) => table(target, prop, false)?.get(key)
  const get = (key: Key, target: object, prop?: string | symbol): unknown => {
    for (let t: object | null = target; t; t = Object.getPrototypeOf(t)) {
      const m = table(t, prop, false)
      if (m?.has(key)) return m.get(key)
    }
    return undefined
  }
  const define = (key: Key, value: unknown, target: object, prop?: string | symbol) => { table(target, prop, true)!.set(key, value) }
  Object.assign(Reflect, {
    getOwnMetadata: getOwn,
    getMetadata: get,
    defineMetadata: define,
    hasOwnMetadata: (key: Key, target: object, prop?: string | symbol) => table(target, prop, false)?.has(key) ?? false,
    hasMetadata: (key: Key, target: object, prop?: string | symbol) => get(key, target, prop) !== undefined,
    metadata: (key: Key, value: unknown) => (target: object, prop?: string | symbol) => define(key, value, target, prop),
  })
}

export {}
