import { randomBytes, randomUUID } from 'node:crypto'

// Loosely typed JSON: the simulator manipulates arbitrary user objects (including custom resources),
// so a structural `any` map is the honest type; typed views are applied where fields are read.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any
export type JsonObject = Record<string, Json>

export interface ObjectMeta {
  name?: string
  generateName?: string
  namespace?: string
  uid?: string
  resourceVersion?: string
  generation?: number
  creationTimestamp?: string
  deletionTimestamp?: string
  deletionGracePeriodSeconds?: number
  labels?: Record<string, string>
  annotations?: Record<string, string>
  ownerReferences?: OwnerReference[]
  finalizers?: string[]
  managedFields?: ManagedFieldsEntry[]
}

export interface OwnerReference { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean; blockOwnerDeletion?: boolean }
export interface ManagedFieldsEntry { manager: string; operation: 'Apply' | 'Update'; apiVersion: string; time?: string; fieldsType: 'FieldsV1'; fieldsV1: JsonObject; subresource?: string }

export interface KObject { apiVersion?: string; kind?: string; metadata: ObjectMeta; [field: string]: Json }

export function clone<T>(v: T): T { return structuredClone(v) }

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    return a.every((x, i) => deepEqual(x, b[i]))
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined)
    const kb = Object.keys(b).filter((k) => b[k] !== undefined)
    if (ka.length !== kb.length) return false
    return ka.every((k) => deepEqual(a[k], b[k]))
  }
  return false
}

/** RFC 3339 with second precision, as metav1.Time serialises. */
export function timestamp(ms = Date.now()): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z')
}

/** RFC 3339 with nanosecond digits, the form `kubectl logs --timestamps` prints. */
export function timestampNano(ms: number): string {
  const iso = new Date(ms).toISOString() // 2024-01-01T00:00:00.123Z
  return iso.replace(/\.(\d{3})Z$/, (_m, frac: string) => `.${frac}000000Z`)
}

export function newUid(): string { return randomUUID() }

const suffixAlphabet = 'bcdfghjklmnpqrstvwxz2456789'
/** The 5-character suffix generateName and controllers use (vowel-free, like utilrand.String). */
export function randomSuffix(n = 5): string {
  const bytes = randomBytes(n)
  let s = ''
  for (const b of bytes) s += suffixAlphabet[b % suffixAlphabet.length]
  return s
}

/** Stable short hash, used for pod-template-hash and deterministic fake numbers. */
export function fnv32(s: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h >>> 0
}

export function safeHash(value: unknown): string {
  const n = fnv32(stableStringify(value))
  let s = ''
  let x = n
  for (let i = 0; i < 10; i++) { s += suffixAlphabet[x % suffixAlphabet.length]; x = Math.floor(x / suffixAlphabet.length) || (n >>> i) }
  return s
}

export function stableStringify(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableStringify).join(',')}]`
  if (isObject(v)) return `{${Object.keys(v).sort().filter((k) => v[k] !== undefined).map((k) => `${JSON.stringify(k)}:${stableStringify(v[k])}`).join(',')}}`
  return JSON.stringify(v)
}

/** Human age the way kubectl prints it (5s, 3m2s, 4h, 2d). */
export function age(fromIso: string | undefined, now = Date.now()): string {
  if (!fromIso) return '<unknown>'
  const s = Math.max(0, Math.floor((now - Date.parse(fromIso)) / 1000))
  if (s < 120) return `${s}s`
  const m = Math.floor(s / 60)
  if (m < 10) return s % 60 ? `${m}m${s % 60}s` : `${m}m`
  if (m < 180) return `${m}m`
  const h = Math.floor(m / 60)
  if (h < 48) return `${h}h`
  return `${Math.floor(h / 24)}d`
}

export function labelsMatchSelector(labels: Record<string, string> | undefined, selector: JsonObject | undefined): boolean {
  if (!selector) return false
  const l = labels ?? {}
  const ml: Record<string, string> = selector.matchLabels ?? {}
  for (const [k, v] of Object.entries(ml)) if (l[k] !== v) return false
  for (const e of (selector.matchExpressions ?? []) as { key: string; operator: string; values?: string[] }[]) {
    const has = Object.prototype.hasOwnProperty.call(l, e.key)
    const vals = e.values ?? []
    switch (e.operator) {
      case 'In': if (!has || !vals.includes(l[e.key])) return false; break
      case 'NotIn': if (has && vals.includes(l[e.key])) return false; break
      case 'Exists': if (!has) return false; break
      case 'DoesNotExist': if (has) return false; break
      default: return false
    }
  }
  return Object.keys(ml).length > 0 || (selector.matchExpressions ?? []).length > 0
}

export function selectorString(selector: JsonObject | undefined): string {
  if (!selector) return ''
  const parts: string[] = Object.entries((selector.matchLabels ?? {}) as Record<string, string>).map(([k, v]) => `${k}=${v}`)
  for (const e of (selector.matchExpressions ?? []) as { key: string; operator: string; values?: string[] }[]) {
    if (e.operator === 'In') parts.push(`${e.key} in (${(e.values ?? []).join(',')})`)
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${(e.values ?? []).join(',')})`)
    else if (e.operator === 'Exists') parts.push(e.key)
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`)
  }
  return parts.join(',')
}

export function parseQuantity(q: string | number | undefined): number {
  if (q === undefined) return 0
  if (typeof q === 'number') return q
  const m = /^([0-9.]+)([a-zA-Z]*)$/.exec(q.trim())
  if (!m) return 0
  const n = parseFloat(m[1])
  const mult: Record<string, number> = {
    '': 1, n: 1e-9, u: 1e-6, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12,
    Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4,
  }
  return n * (mult[m[2]] ?? 1)
}
