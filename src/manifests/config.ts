// ConfigMap, Secret and ServiceAccount. A secret's values never come from the workflow: they are the run's
// (ctx.secrets[nodeId]); a preview shows the keys with empty values.
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap'
import { Secret } from 'kubernetes-models/v1/Secret'
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount'
import { linksOf, objectMeta, str, stringMap, type BuildInput, type Builder } from './build-context.ts'

/** mountPath only means something to connected workloads; set without one, it is reported, not ignored. */
export function warnUnusedMountPath(input: BuildInput, rule: 'config-workload' | 'pvc-workload'): void {
  if (str(input.node.data, 'mountPath') !== undefined && linksOf(input, rule).length === 0) input.report.warn('mountPath has no effect: no workload is connected')
}

const DATA_KEY = /^[-._a-zA-Z0-9]+$/

function keyProblems(keys: Iterable<string>, field: string): string[] {
  return [...keys].filter((k) => k.length > 253 || !DATA_KEY.test(k))
    .map((k) => `${field}: ${JSON.stringify(k.slice(0, 80))} is not a valid key (letters, digits, -, _ and .)`)
}

export const configmap: Builder = (input) => {
  const data = stringMap(input.node.data, 'data') ?? {}
  for (const p of keyProblems(Object.keys(data), 'data')) input.report.error(p)
  warnUnusedMountPath(input, 'config-workload')
  return [new ConfigMap({ metadata: objectMeta(input), data })]
}

export const secret: Builder = (input) => {
  const { node, report, ctx } = input
  const declared = ((node.data.keys as Array<string | { name: string }> | undefined) ?? []).map((k) => typeof k === 'string' ? k : k.name)
  const supplied = ctx.secrets?.[node.id] ?? {}
  const keys = [...new Set([...declared, ...Object.keys(supplied)])]
  for (const p of keyProblems(keys, 'keys')) report.error(p)
  warnUnusedMountPath(input, 'config-workload')
  const data: Record<string, string> = {}
  for (const k of keys) {
    if (!ctx.revealSecrets) { data[k] = ''; continue }
    if (!Object.hasOwn(supplied, k)) { report.error(`keys: no value supplied for ${JSON.stringify(k)} (the run's secrets for node ${JSON.stringify(node.id)})`); continue }
    data[k] = Buffer.from(String(supplied[k]), 'utf8').toString('base64')
  }
  return [new Secret({ metadata: objectMeta(input), type: str(node.data, 'secretType') ?? 'Opaque', data })]
}

export const serviceaccount: Builder = (input) => {
  const d = input.node.data
  return [new ServiceAccount({
    metadata: objectMeta(input),
    ...(d.automountServiceAccountToken !== undefined && { automountServiceAccountToken: d.automountServiceAccountToken as boolean }),
    ...(d.imagePullSecrets !== undefined && { imagePullSecrets: (d.imagePullSecrets as string[]).map((name) => ({ name })) }),
  })]
}
