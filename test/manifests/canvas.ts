// Realistic canvases for the manifest tests: one node of every built-in type, edges for every wiring rule,
// and a render context without plugins unless a test gives one.
import type { ManifestEdge, ManifestNode, RenderContext } from '../../src/manifests/types.ts'

export const WORKFLOW_ID = '665f1c2ab4d3e9a1c0ffee01'

export function ctx(overrides: Partial<RenderContext> = {}): RenderContext {
  return { workflowId: WORKFLOW_ID, plugins: () => null, revealSecrets: false, ...overrides }
}

let edgeSeq = 0
export function edge(source: string, target: string, extra: Partial<ManifestEdge> = {}): ManifestEdge {
  return { id: `e${++edgeSeq}-${source}-${target}`, source, target, ...extra }
}

export const node = (id: string, type: string, data: Record<string, unknown>): ManifestNode =>
  ({ id, type, position: { x: 0, y: 0 }, data })

/** Realistic data for each built-in type, every optional field a user would plausibly set. */
export function sampleData(): Record<string, Record<string, unknown>> {
  const container = {
    image: 'ghcr.io/acme/api:1.4.2', port: 8080, imagePullPolicy: 'IfNotPresent',
    env: [{ name: 'LOG_LEVEL', value: 'info' }, { name: 'FEATURE_X' }],
    command: ['/app/server'], args: ['--listen', ':8080'],
    resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '1', memory: '512Mi' } },
    labels: { team: 'payments' }, annotations: { 'acme.io/owner': 'payments@acme.io' },
  }
  return {
    // No replicas: the autoscaler wired to it owns the count (a set value would be a warning).
    deployment: { name: 'api', namespace: 'shop', ...container },
    statefulset: { name: 'db', namespace: 'shop', ...container, image: 'postgres:16', port: 5432, replicas: 2, serviceName: 'db-headless', storage: '10Gi', storageClassName: 'fast', volumeMounts: [{ name: 'data', mountPath: '/var/lib/postgresql/data' }] },
    daemonset: { name: 'agent', namespace: 'shop', ...container, image: 'fluent/fluent-bit:3.0', port: 2020 },
    replicaset: { name: 'legacy', namespace: 'shop', ...container, replicas: 2 },
    pod: { name: 'debug', namespace: 'shop', ...container, image: 'busybox:1.36', restartPolicy: 'Never' },
    job: { name: 'migrate', namespace: 'shop', ...container, completions: 1, parallelism: 1, backoffLimit: 3, restartPolicy: 'Never' },
    cronjob: { name: 'report', namespace: 'shop', ...container, schedule: '*/15 * * * *', concurrencyPolicy: 'Forbid', suspend: false, restartPolicy: 'OnFailure' },
    service: { name: 'api-svc', namespace: 'shop', serviceType: 'ClusterIP', port: 80, targetPort: 8080, labels: { team: 'payments' }, annotations: { 'acme.io/doc': 'x' } },
    ingress: { name: 'web', namespace: 'shop', host: 'shop.example.com', ingressClassName: 'nginx', tlsEnabled: true, tlsSecretName: 'shop-tls', paths: [{ path: '/api', pathType: 'Prefix', serviceName: 'api-svc', servicePort: 80 }], labels: { team: 'payments' }, annotations: { 'nginx.ingress.kubernetes.io/proxy-body-size': '8m' } },
    configmap: { name: 'api-config', namespace: 'shop', data: { LOG_FORMAT: 'json', 'app.yaml': 'a: 1\nb: 2\n' }, labels: { team: 'payments' }, annotations: { note: 'x' } },
    secret: { name: 'api-secrets', namespace: 'shop', secretType: 'Opaque', keys: ['DB_PASSWORD', 'API_KEY'], labels: { team: 'payments' }, annotations: { note: 'x' } },
    persistentvolumeclaim: { name: 'uploads', namespace: 'shop', storage: '5Gi', accessModes: ['ReadWriteOnce'], storageClassName: 'standard', mountPath: '/srv/uploads', labels: { team: 'payments' }, annotations: { note: 'x' } },
    hpa: { name: 'api-hpa', namespace: 'shop', minReplicas: 2, maxReplicas: 10, targetCPUUtilization: 70, targetMemoryUtilization: 80, labels: { team: 'payments' }, annotations: { note: 'x' } },
    networkpolicy: { name: 'api-np', namespace: 'shop', policyTypes: ['Ingress', 'Egress'], ingress: [{ from: [{ podSelector: { matchLabels: { role: 'frontend' } } }] }], egress: [{ ports: [{ port: 53, protocol: 'UDP' }] }], labels: { team: 'payments' }, annotations: { note: 'x' } },
    serviceaccount: { name: 'api-sa', namespace: 'shop', automountServiceAccountToken: false, imagePullSecrets: ['regcred'], labels: { team: 'payments' }, annotations: { note: 'x' } },
    poddisruptionbudget: { name: 'api-pdb', namespace: 'shop', minAvailable: 1, labels: { team: 'payments' }, annotations: { note: 'x' } },
  }
}

/** One node of every built-in type, and one edge for every wiring rule (several for the workload rules). */
export function fullCanvas(): { nodes: ManifestNode[]; edges: ManifestEdge[] } {
  const data = sampleData()
  const nodes = Object.entries(data).map(([type, d]) => node(`n-${type}`, type, d))
  const edges = [
    edge('n-deployment', 'n-service'),
    edge('n-service', 'n-ingress'),
    edge('n-deployment', 'n-hpa'),
    edge('n-deployment', 'n-networkpolicy'),
    edge('n-deployment', 'n-poddisruptionbudget'),
    edge('n-configmap', 'n-deployment'),
    edge('n-secret', 'n-deployment'),
    edge('n-persistentvolumeclaim', 'n-deployment'),
    edge('n-serviceaccount', 'n-deployment'),
    edge('n-configmap', 'n-statefulset', { targetHandle: 'volume' }),
    edge('n-secret', 'n-cronjob'),
    edge('n-serviceaccount', 'n-job'),
    edge('n-statefulset', 'n-networkpolicy'),
    edge('n-statefulset', 'n-deployment'),
  ]
  return { nodes, edges }
}
