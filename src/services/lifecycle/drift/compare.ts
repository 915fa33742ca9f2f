// What "drift" means, as pure functions: the baseline an apply leaves, and how a live object differs from it.
//
// Baseline: the server's answer to the apply, projected onto the leaf paths the rendered manifest sets. Both
// sides of a later comparison are then values the server normalised ("1000m" and "1" are one quantity), and
// what the server or a controller defaulted (a Service's clusterIP, a port's protocol) is never compared.
// Paths are object-diff.ts's ("spec.template.spec.containers[name=web].image"); lists of objects with
// distinct names are keyed by name, so a reordering is not drift.
//
// What counts:
//   - every leaf the rendered manifest sets: a different value, or the leaf gone;
//   - metadata.labels as one map: a label added (`kubectl label`), changed or removed is drift, except keys
//     under the reserved kubernetes.io / k8s.io prefixes, which controllers and the API server add (and the
//     ApplySet label the apply adds). Server-side apply leaves another manager's label in place, so a sync
//     removes such labels itself afterwards (drift-service.ts, src/kube/label-removal.ts);
//   - metadata.annotations only per key the manifest set: another tool's annotation is not ours to judge;
//   - never status, server bookkeeping (managedFields, resourceVersion, ...), name or namespace;
//   - the caller passes the paths to ignore: spec.replicas of a workload an autoscaler of the workflow scales.
// Secret data and values the run's redactor changes (run-time trigger values) are kept only as a digest
// (digest.ts) and shown as "(hidden)", on both sides, in every result.
import { isDeepStrictEqual } from 'node:util'
import { child, HIDDEN, leaves, normaliseObject } from '../../../kube/object-diff.ts'
import type { KubeObject } from '../../../manifests/types.ts'

export { HIDDEN }

/** One leaf of a baseline: its value, or (a secret) only its digest. */
export interface BaselineField { path: string; value?: unknown; digest?: string }

export interface ObjectBaseline {
  /** Leaf paths the manifest set, with the value the server answered. */
  fields: BaselineField[]
  /** The labels the manifest set, as the server answered them (reserved prefixes left out), `path` being the key. */
  labels: BaselineField[]
  /** An autoscaler's target (kind and name, same namespace): its replica count is the autoscaler's. */
  scale_target: { kind: string; name: string } | null
}

export interface DriftField { path: string; applied: unknown; live: unknown }
export interface ObjectDrift { missing: boolean; fields: DriftField[] }

export interface Hasher {
  digest(value: unknown): string
  /** null: the digest cannot be checked (its key is gone). */
  matches(digest: string, value: unknown): boolean | null
}

const SECRET_PATH = /^(data|stringData)(\.|\[|$)/
/** Identity and type: the apply targets them, they cannot differ and still be this object. */
const IDENTITY = new Set(['apiVersion', 'kind', 'metadata.name', 'metadata.namespace'])
const LABELS = 'metadata.labels'

/** A label key under a reserved prefix (kubernetes.io/, k8s.io/ and their subdomains): controllers' labels. */
export function reservedLabel(key: string): boolean {
  const slash = key.indexOf('/')
  if (slash < 0) return false
  const prefix = key.slice(0, slash)
  return ['kubernetes.io', 'k8s.io'].some((d) => prefix === d || prefix.endsWith(`.${d}`))
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function ownLabels(obj: KubeObject | null | undefined): Map<string, string> {
  const labels = isObject(obj?.metadata?.labels) ? obj.metadata.labels as Record<string, unknown> : {}
  return new Map(Object.entries(labels).filter(([k, v]) => !reservedLabel(k) && typeof v === 'string') as Array<[string, string]>)
}

/** Label keys on the live object that the manifest did not set (reserved prefixes left out): what a sync removes. */
export function extraLabels(baseline: Pick<ObjectBaseline, 'labels'>, live: KubeObject | null): string[] {
  const known = new Set(baseline.labels.map((f) => f.path))
  return [...ownLabels(live).keys()].filter((k) => !known.has(k))
}

export interface BaselineOptions {
  /** The run's redactor: a value it changes is a run-time secret. */
  redact: (text: string) => string
  hasher: Hasher
}

function sensitive(value: unknown, redact: (text: string) => string): boolean {
  const text = typeof value === 'string' ? value : JSON.stringify(value)
  return typeof text === 'string' && redact(text) !== text
}

/** The baseline of one applied object: `rendered` (what the run sent) projected onto `live` (the server's answer). */
export function baselineOf(rendered: KubeObject, live: KubeObject, o: BaselineOptions): ObjectBaseline {
  const secret = rendered.kind === 'Secret'
  const set = leaves(normaliseObject(rendered))
  // stringData is write-only: the server answers it merged into data (base64), which is what a read shows.
  if (secret) {
    for (const path of [...set.keys()]) {
      if (path.startsWith('stringData')) { set.delete(path); set.set(`data${path.slice('stringData'.length)}`, null) }
    }
  }
  const answered = leaves(normaliseObject(live))
  const keep = (path: string, value: unknown): BaselineField =>
    (secret && SECRET_PATH.test(path)) || sensitive(value, o.redact) ? { path, digest: o.hasher.digest(value) } : { path, value }
  const fields: BaselineField[] = []
  for (const path of set.keys()) {
    if (IDENTITY.has(path) || path.startsWith(`${LABELS}.`) || path.startsWith(`${LABELS}[`)) continue
    // The server dropped or rewrote it away (an empty value): nothing there to compare later.
    if (!answered.has(path)) continue
    fields.push(keep(path, answered.get(path)))
  }
  // The labels the manifest sets, as the server answered them. Not every label of the answer: one another
  // field manager added before this apply (`kubectl label`) survives a server-side apply, and taking it into
  // the baseline would call that drift resolved when it is still there.
  const answeredLabels = ownLabels(live)
  const labels = [...ownLabels(rendered)].filter(([key]) => answeredLabels.has(key)).map(([key]) => {
    const value = answeredLabels.get(key)!
    return sensitive(value, o.redact) ? { path: key, digest: o.hasher.digest(value) } : { path: key, value }
  })
  const spec = isObject(rendered.spec) ? rendered.spec : {}
  const ref = isObject(spec.scaleTargetRef) ? spec.scaleTargetRef : null
  const scale_target = rendered.kind === 'HorizontalPodAutoscaler' && ref && typeof ref.kind === 'string' && typeof ref.name === 'string' ? { kind: ref.kind, name: ref.name } : null
  return { fields, labels, scale_target }
}

export interface CompareOptions {
  hasher: Pick<Hasher, 'matches'>
  /** Paths not compared (an autoscaler's spec.replicas). */
  ignore?: ReadonlySet<string>
}

/** How `live` (null: not in the cluster) differs from the baseline; no fields and not missing: in sync. */
export function compareObject(baseline: Pick<ObjectBaseline, 'fields' | 'labels'>, live: KubeObject | null, o: CompareOptions): ObjectDrift {
  if (!live) return { missing: true, fields: [] }
  const now = leaves(normaliseObject(live))
  const fields: DriftField[] = []
  const judge = (path: string, field: BaselineField, value: unknown) => {
    if (field.digest !== undefined) {
      if (value === undefined) { fields.push({ path, applied: HIDDEN, live: null }); return }
      if (o.hasher.matches(field.digest, value) === false) fields.push({ path, applied: HIDDEN, live: HIDDEN })
      return
    }
    if (value === undefined || !isDeepStrictEqual(field.value, value)) fields.push({ path, applied: field.value ?? null, live: value ?? null })
  }
  for (const field of baseline.fields) {
    if (o.ignore?.has(field.path)) continue
    judge(field.path, field, now.get(field.path))
  }
  const labels = ownLabels(live)
  for (const field of baseline.labels) judge(child(LABELS, field.path), field, labels.get(field.path))
  const known = new Set(baseline.labels.map((f) => f.path))
  for (const [key, value] of labels) if (!known.has(key)) fields.push({ path: child(LABELS, key), applied: null, live: value })
  return { missing: false, fields: fields.sort((a, b) => a.path.localeCompare(b.path)) }
}

/** The field paths a node shows for its objects' drift: every drifted path once, MISSING for an object gone. */
export const MISSING = '(missing)'
export function nodeFields(objects: Array<{ missing: boolean; paths: string[] }>): string[] {
  const out = new Set<string>()
  for (const o of objects) {
    if (o.missing) out.add(MISSING)
    for (const p of o.paths) out.add(p)
  }
  return [...out].sort()
}
