// KEDA (keda.sh) and Knative Serving (serving.knative.dev).
import { field, type CatalogueEntry } from './types.ts'

export const scaling: CatalogueEntry[] = [{
  name: 'keda-prometheus-scaledobject',
  display_name: 'KEDA ScaledObject (Prometheus)',
  description: 'Scales a Deployment (down to zero if allowed) on the value of a Prometheus query. Requires KEDA 2.x and a Prometheus server reachable from the KEDA operator.',
  version: '1.0.0',
  category: 'scaling',
  icon: 'scale',
  crd: { group: 'keda.sh', version: 'v1alpha1', kind: 'ScaledObject', plural: 'scaledobjects' },
  config_fields: [
    field.string('targetDeployment', 'Deployment', undefined, { required: true, description: 'the Deployment to scale, in the same namespace' }),
    field.number('minReplicaCount', 'Minimum replicas', 1, { required: true }),
    field.number('maxReplicaCount', 'Maximum replicas', 10, { required: true }),
    field.number('pollingInterval', 'Polling interval (s)', 30),
    field.number('cooldownPeriod', 'Cool-down (s)', 300),
    field.string('serverAddress', 'Prometheus URL', 'http://prometheus-operated.monitoring.svc:9090', { required: true }),
    field.string('query', 'PromQL query', undefined, { required: true, description: 'its value is compared with the threshold' }),
    field.string('threshold', 'Threshold', '100', { required: true, description: 'target value per replica' }),
  ],
  template: `apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: {{ .name }}
  namespace: {{ .namespace }}
spec:
  scaleTargetRef:
    name: {{ .targetDeployment }}
  minReplicaCount: {{ .minReplicaCount }}
  maxReplicaCount: {{ .maxReplicaCount }}
  {{- if .pollingInterval }}
  pollingInterval: {{ .pollingInterval }}
  {{- end }}
  {{- if .cooldownPeriod }}
  cooldownPeriod: {{ .cooldownPeriod }}
  {{- end }}
  triggers:
    - type: prometheus
      metadata:
        serverAddress: {{ .serverAddress }}
        query: {{ .query }}
        threshold: {{ .threshold | quote }}
`,
}, {
  name: 'knative-service',
  display_name: 'Knative Service',
  description: 'A request-driven container that scales with traffic, down to zero when idle, with its own URL. Requires Knative Serving 1.x and a networking layer (Kourier, Istio or Contour).',
  version: '1.0.0',
  category: 'scaling',
  icon: 'lambda',
  crd: { group: 'serving.knative.dev', version: 'v1', kind: 'Service', plural: 'services' },
  config_fields: [
    field.string('image', 'Image', undefined, { required: true }),
    field.number('containerPort', 'Container port', 8080, { required: true }),
    field.number('containerConcurrency', 'Requests per pod', 0, { description: '0 lets each pod take as many as it can' }),
    field.string('minScale', 'Minimum pods', '0', { required: true, description: 'autoscaling.knative.dev/min-scale' }),
    field.string('maxScale', 'Maximum pods', '10', { required: true, description: 'autoscaling.knative.dev/max-scale' }),
  ],
  template: `apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: {{ .name }}
  namespace: {{ .namespace }}
spec:
  template:
    metadata:
      annotations:
        autoscaling.knative.dev/min-scale: {{ .minScale | quote }}
        autoscaling.knative.dev/max-scale: {{ .maxScale | quote }}
    spec:
      containerConcurrency: {{ .containerConcurrency }}
      containers:
        - image: {{ .image }}
          ports:
            - containerPort: {{ .containerPort }}
`,
}]
