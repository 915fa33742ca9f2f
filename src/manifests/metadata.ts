// Labels and annotations every rendered object carries, and the checks the API server would make on user
// labels, so a bad key is a per-node error here rather than a refused apply later.
import { createHash } from 'node:crypto'
import { APP_NAME } from '../app-info.ts'

/** `app.kubernetes.io/managed-by` value: the service's name as a label value. */
export const MANAGED_BY = APP_NAME.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '')
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by'
export const NAME_LABEL = 'app.kubernetes.io/name'
export const INSTANCE_LABEL = 'app.kubernetes.io/instance'
export const ANNOTATION_PREFIX = 'workflows.cluster-orchestration.io'
export const WORKFLOW_ID_ANNOTATION = `${ANNOTATION_PREFIX}/workflow-id`
export const NODE_ID_ANNOTATION = `${ANNOTATION_PREFIX}/node-id`

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/
const KEY_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/
const MAX_ANNOTATIONS_BYTES = 256 * 1024

/** A valid label value for any string: itself when valid, otherwise a stable digest of it. */
export function labelValue(s: string): string {
  return s.length <= 63 && LABEL_VALUE.test(s) ? s : `h-${createHash('sha256').update(s).digest('hex').slice(0, 40)}`
}

/** The labels a workload's pods carry and every selector aimed at them uses: node name and workflow. */
export function selectorLabels(name: string, workflowId: string): Record<string, string> {
  return { [NAME_LABEL]: name, [INSTANCE_LABEL]: labelValue(workflowId) }
}

export function qualifiedKeyProblem(key: string): string | null {
  const slash = key.lastIndexOf('/')
  const prefix = slash >= 0 ? key.slice(0, slash) : null
  const name = slash >= 0 ? key.slice(slash + 1) : key
  if (prefix !== null && (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) return 'its prefix must be a DNS subdomain'
  if (name.length > 63 || !KEY_NAME.test(name)) return 'its name must be at most 63 letters, digits, -, _ or . starting and ending with a letter or digit'
  return null
}

/** Problems with user labels, each naming the key by JSON so hostile text stays on one line. */
export function labelProblems(labels: Record<string, string>, field: string): string[] {
  const out: string[] = []
  for (const [k, v] of Object.entries(labels)) {
    const p = qualifiedKeyProblem(k)
    if (p) out.push(`${field}: key ${JSON.stringify(k.slice(0, 80))} is not a valid label key (${p})`)
    else if (typeof v !== 'string' || v.length > 63 || !LABEL_VALUE.test(v)) out.push(`${field}: value of ${JSON.stringify(k)} is not a valid label value (at most 63 letters, digits, -, _ or .)`)
  }
  return out
}

export function annotationProblems(annotations: Record<string, string>, field: string): string[] {
  const out: string[] = []
  let size = 0
  for (const [k, v] of Object.entries(annotations)) {
    const p = qualifiedKeyProblem(k)
    if (p) out.push(`${field}: key ${JSON.stringify(k.slice(0, 80))} is not a valid annotation key (${p})`)
    size += Buffer.byteLength(k) + Buffer.byteLength(String(v))
  }
  if (size > MAX_ANNOTATIONS_BYTES) out.push(`${field}: annotations total ${size} bytes, more than the ${MAX_ANNOTATIONS_BYTES} Kubernetes allows`)
  return out
}

export function systemLabels(): Record<string, string> {
  return { [MANAGED_BY_LABEL]: MANAGED_BY }
}

export function systemAnnotations(workflowId: string, nodeId: string): Record<string, string> {
  return { [WORKFLOW_ID_ANNOTATION]: workflowId, [NODE_ID_ANNOTATION]: nodeId }
}
