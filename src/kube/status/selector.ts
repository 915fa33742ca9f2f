// Label selectors, both as Kubernetes writes them in specs (a LabelSelector, or a Service's plain map) and
// as the `labelSelector` query text, plus matching in memory (to hand a workload its pods without a request
// per workload).
import type { Loose } from './types.ts'

export interface LabelSelector { matchLabels?: Record<string, string>; matchExpressions?: Array<{ key: string; operator: string; values?: string[] }> }

/** The selector a workload (LabelSelector) or a Service (plain map) uses for its pods; null when it selects none. */
export function podSelectorOf(kind: string, spec: Loose | undefined): LabelSelector | null {
  const sel = spec?.selector
  if (!sel || typeof sel !== 'object') return null
  if (kind === 'Service') return Object.keys(sel).length ? { matchLabels: sel as Record<string, string> } : null
  const s = sel as LabelSelector
  return (s.matchLabels && Object.keys(s.matchLabels).length) || s.matchExpressions?.length ? s : null
}

/** The `labelSelector` query text of a LabelSelector. */
export function selectorText(s: LabelSelector): string {
  const parts = Object.entries(s.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`)
  for (const e of s.matchExpressions ?? []) {
    const values = `(${(e.values ?? []).join(',')})`
    if (e.operator === 'In') parts.push(`${e.key} in ${values}`)
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin ${values}`)
    else if (e.operator === 'Exists') parts.push(e.key)
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`)
  }
  return parts.join(',')
}

export function matchesSelector(labels: Record<string, string> | undefined, s: LabelSelector): boolean {
  const l = labels ?? {}
  for (const [k, v] of Object.entries(s.matchLabels ?? {})) if (l[k] !== v) return false
  for (const e of s.matchExpressions ?? []) {
    const has = Object.hasOwn(l, e.key)
    if (e.operator === 'In' && !(has && (e.values ?? []).includes(l[e.key]))) return false
    if (e.operator === 'NotIn' && has && (e.values ?? []).includes(l[e.key])) return false
    if (e.operator === 'Exists' && !has) return false
    if (e.operator === 'DoesNotExist' && has) return false
  }
  return true
}
