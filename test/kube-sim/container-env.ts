import type { JsonObject, KObject } from './util.ts'

// The environment a container starts with, as the kubelet computes it: a base image environment, the
// service-link variables of the `kubernetes` Service, `envFrom` sources, then `env` entries in order
// (`$(VAR)` expansion of earlier values, `valueFrom` ConfigMap/Secret keys and the downward API).
// Shared by exec (the simulated shell) and the containers that run real processes.

export interface ObjectLookup {
  configMap(name: string): KObject | undefined
  secret(name: string): KObject | undefined
}

export function containerEnv(lookup: ObjectLookup, pod: KObject, spec: JsonObject): Record<string, string> {
  const env: Record<string, string> = {
    PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    HOSTNAME: pod.metadata.name!,
    HOME: '/root',
    KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443', KUBERNETES_SERVICE_PORT_HTTPS: '443',
    KUBERNETES_PORT: 'tcp://10.96.0.1:443',
  }
  const ns = pod.metadata.namespace!
  const b64 = (s: string) => Buffer.from(s, 'base64').toString('utf8')
  for (const src of (spec.envFrom ?? []) as JsonObject[]) {
    const prefix = src.prefix ?? ''
    if (src.configMapRef) for (const [k, v] of Object.entries((lookup.configMap(src.configMapRef.name)?.data ?? {}) as Record<string, string>)) env[prefix + k] = v
    if (src.secretRef) for (const [k, v] of Object.entries((lookup.secret(src.secretRef.name)?.data ?? {}) as Record<string, string>)) env[prefix + k] = b64(v)
  }
  for (const e of (spec.env ?? []) as JsonObject[]) {
    if (e.value !== undefined) { env[e.name] = String(e.value).replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, n: string) => env[n] ?? m); continue }
    const vf = e.valueFrom ?? {}
    if (vf.configMapKeyRef) { const v = lookup.configMap(vf.configMapKeyRef.name)?.data?.[vf.configMapKeyRef.key]; if (v !== undefined) env[e.name] = v } else if (vf.secretKeyRef) { const v = lookup.secret(vf.secretKeyRef.name)?.data?.[vf.secretKeyRef.key]; if (v !== undefined) env[e.name] = b64(v) } else if (vf.fieldRef) {
      const fp: string = vf.fieldRef.fieldPath
      const m = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(fp)
      env[e.name] = m ? String((pod.metadata[m[1] as 'labels'] ?? {})[m[2]] ?? '')
        : ({ 'metadata.name': pod.metadata.name, 'metadata.namespace': ns, 'metadata.uid': pod.metadata.uid, 'spec.nodeName': pod.spec?.nodeName, 'spec.serviceAccountName': pod.spec?.serviceAccountName, 'status.podIP': pod.status?.podIP, 'status.hostIP': pod.status?.hostIP } as Record<string, string | undefined>)[fp] ?? ''
    }
  }
  return env
}
