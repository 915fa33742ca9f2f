import { isObject, type Json } from './util.ts'

// The slice of the OpenAPI "x-kubernetes-list-map-keys" / "patchMergeKey" knowledge the simulator needs:
// which lists are maps keyed by some fields. Decided by field name (and, for `ports`, by the items'
// shape) because the same names mean the same thing everywhere in the built-in API.
const byField: Record<string, string[]> = {
  containers: ['name'],
  initContainers: ['name'],
  ephemeralContainers: ['name'],
  env: ['name'],
  volumes: ['name'],
  imagePullSecrets: ['name'],
  resourceClaims: ['name'],
  volumeMounts: ['mountPath'],
  volumeDevices: ['devicePath'],
  conditions: ['type'],
  hostAliases: ['ip'],
  ownerReferences: ['uid'],
  topologySpreadConstraints: ['topologyKey', 'whenUnsatisfiable'],
}

/** Values a key field takes when omitted (SSA treats them as present, so `ports` without protocol still merge). */
export const keyDefaults: Record<string, Json> = { protocol: 'TCP' }

/** The key fields of a map-list, or undefined when the list is atomic (replaced wholesale). */
export function listKeys(field: string | undefined, items: Json[]): string[] | undefined {
  if (!field || !items.every(isObject)) return undefined
  let keys = byField[field]
  if (field === 'ports') {
    if (items.some((i) => 'containerPort' in i)) keys = ['containerPort', 'protocol']
    else if (items.some((i) => 'port' in i)) keys = ['port', 'protocol']
  }
  if (!keys) return undefined
  // A list whose items omit the primary key cannot be merged by it; fall back to atomic.
  if (!items.every((i) => i[keys[0]] !== undefined)) return undefined
  return keys
}

/** Lists of scalars that strategic merge patch merges as sets rather than replacing. */
export const primitiveSetFields = new Set(['finalizers'])

export function keyOf(item: Json, keys: string[]): Record<string, Json> {
  const k: Record<string, Json> = {}
  for (const f of [...keys].sort()) {
    const v = item[f] ?? keyDefaults[f]
    if (v !== undefined) k[f] = v
  }
  return k
}

export function sameKey(a: Json, b: Json, keys: string[]): boolean {
  return keys.every((f) => (a[f] ?? keyDefaults[f]) === (b[f] ?? keyDefaults[f]))
}
