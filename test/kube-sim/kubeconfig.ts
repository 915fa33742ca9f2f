import { stringify } from 'yaml'

export type KubeconfigUser = { token: string } | { certPem: string; keyPem: string }

const b64 = (s: string) => Buffer.from(s).toString('base64')

/** A single-context kubeconfig, with the CA and credentials inlined so the file is self-contained. */
export function kubeconfigYaml(o: { server: string; caPem: string; user: KubeconfigUser; userName: string; namespace?: string; clusterName?: string }): string {
  const cluster = o.clusterName ?? 'kube-sim'
  const user = 'token' in o.user ? { token: o.user.token } : { 'client-certificate-data': b64(o.user.certPem), 'client-key-data': b64(o.user.keyPem) }
  const context: Record<string, string> = { cluster, user: o.userName }
  if (o.namespace) context.namespace = o.namespace
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: cluster, cluster: { server: o.server, 'certificate-authority-data': b64(o.caPem) } }],
    users: [{ name: o.userName, user }],
    contexts: [{ name: `${o.userName}@${cluster}`, context }],
    'current-context': `${o.userName}@${cluster}`,
    preferences: {},
  })
}
