import { badRequest } from './status.ts'
import type { KObject } from './util.ts'

// Label selector grammar from the API conventions: comma-separated requirements, each `k`, `!k`,
// `k=v`, `k==v`, `k!=v`, `k in (a,b)` or `k notin (a,b)`. All requirements must hold.
export type LabelRequirement =
  | { key: string; op: 'exists' | 'notexists' }
  | { key: string; op: 'eq' | 'neq'; value: string }
  | { key: string; op: 'in' | 'notin'; values: string[] }

export function parseLabelSelector(input: string | undefined): LabelRequirement[] {
  const s = (input ?? '').trim()
  if (!s) return []
  const parts: string[] = []
  let depth = 0
  let cur = ''
  for (const ch of s) {
    if (ch === '(') depth++
    if (ch === ')') depth--
    if (ch === ',' && depth === 0) { parts.push(cur); cur = ''; continue }
    cur += ch
  }
  parts.push(cur)
  return parts.map((raw) => {
    const p = raw.trim()
    let m = /^([^\s!=(),]+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(p)
    if (m) return { key: m[1], op: m[2] as 'in' | 'notin', values: m[3].split(',').map((v) => v.trim()).filter((v) => v !== '') }
    m = /^([^\s!=(),]+)\s*(==|=|!=)\s*([^\s!=(),]*)$/.exec(p)
    if (m) return { key: m[1], op: m[2] === '!=' ? 'neq' : 'eq', value: m[3] }
    m = /^!\s*([^\s!=(),]+)$/.exec(p)
    if (m) return { key: m[1], op: 'notexists' }
    m = /^([^\s!=(),]+)$/.exec(p)
    if (m) return { key: m[1], op: 'exists' }
    throw badRequest(`unable to parse requirement: found '${p}', expected: identifier`)
  })
}

export function matchLabels(reqs: LabelRequirement[], labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {}
  return reqs.every((r) => {
    const has = Object.prototype.hasOwnProperty.call(l, r.key)
    switch (r.op) {
      case 'exists': return has
      case 'notexists': return !has
      case 'eq': return has && l[r.key] === r.value
      case 'neq': return !has || l[r.key] !== r.value
      case 'in': return has && r.values.includes(l[r.key])
      case 'notin': return !has || !r.values.includes(l[r.key])
    }
    return false
  })
}

export interface FieldRequirement { field: string; op: 'eq' | 'neq'; value: string }

export function parseFieldSelector(input: string | undefined): FieldRequirement[] {
  const s = (input ?? '').trim()
  if (!s) return []
  return s.split(',').map((raw) => {
    const m = /^\s*([^!=\s]+)\s*(==|=|!=)\s*(.*?)\s*$/.exec(raw)
    if (!m) throw badRequest(`invalid selector: '${s}'; can't understand '${raw}'`)
    return { field: m[1], op: m[2] === '!=' ? 'neq' : 'eq', value: m[3] }
  })
}

/** Which field labels a resource accepts beyond metadata.name/namespace (the apiserver rejects others). */
const extraFields: Record<string, Record<string, (o: KObject) => string | undefined>> = {
  '/pods': {
    'status.phase': (o) => o.status?.phase,
    'spec.nodeName': (o) => o.spec?.nodeName ?? '',
    'spec.restartPolicy': (o) => o.spec?.restartPolicy,
    'spec.schedulerName': (o) => o.spec?.schedulerName,
    'spec.serviceAccountName': (o) => o.spec?.serviceAccountName,
    'status.podIP': (o) => o.status?.podIP ?? '',
  },
  '/events': {
    'involvedObject.kind': (o) => o.involvedObject?.kind,
    'involvedObject.namespace': (o) => o.involvedObject?.namespace,
    'involvedObject.name': (o) => o.involvedObject?.name,
    'involvedObject.uid': (o) => o.involvedObject?.uid,
    'involvedObject.apiVersion': (o) => o.involvedObject?.apiVersion,
    'involvedObject.resourceVersion': (o) => o.involvedObject?.resourceVersion,
    'involvedObject.fieldPath': (o) => o.involvedObject?.fieldPath,
    reason: (o) => o.reason,
    type: (o) => o.type,
    source: (o) => o.source?.component,
  },
  '/secrets': { type: (o) => o.type },
  '/nodes': { 'spec.unschedulable': (o) => String(Boolean(o.spec?.unschedulable)) },
  '/namespaces': { 'status.phase': (o) => o.status?.phase },
  'batch/jobs': { 'status.successful': (o) => String(o.status?.succeeded ?? 0) },
}

export function fieldGetter(storageKey: string, field: string): ((o: KObject) => string | undefined) {
  if (field === 'metadata.name') return (o) => o.metadata.name
  if (field === 'metadata.namespace') return (o) => o.metadata.namespace ?? ''
  const g = extraFields[storageKey]?.[field]
  if (!g) throw badRequest(`field label not supported: ${field}`)
  return g
}

export function compileFieldSelector(storageKey: string, reqs: FieldRequirement[]): (o: KObject) => boolean {
  const checks = reqs.map((r) => ({ r, get: fieldGetter(storageKey, r.field) }))
  return (o) => checks.every(({ r, get }) => {
    const v = get(o) ?? ''
    return r.op === 'eq' ? v === r.value : v !== r.value
  })
}
