// Prometheus Operator (monitoring.coreos.com).
import { field, type CatalogueEntry } from './types.ts'

export const monitoring: CatalogueEntry[] = [{
  name: 'prometheus-service-monitor',
  display_name: 'Prometheus ServiceMonitor',
  description: 'Tells Prometheus to scrape the metrics endpoint of the Services carrying a label. Requires the Prometheus Operator (for example the kube-prometheus-stack Helm chart), whose Prometheus must select this monitor (kube-prometheus-stack selects on the `release` label).',
  version: '1.0.0',
  category: 'monitoring',
  icon: 'chart',
  crd: { group: 'monitoring.coreos.com', version: 'v1', kind: 'ServiceMonitor', plural: 'servicemonitors' },
  config_fields: [
    field.string('appLabel', 'Service label app', undefined, { required: true, description: 'value of the `app` label of the Services to scrape' }),
    field.string('portName', 'Port name', 'metrics', { required: true, description: 'name of the Service port that serves metrics' }),
    field.string('path', 'Metrics path', '/metrics', { required: true }),
    field.string('interval', 'Scrape interval', '30s', { required: true }),
    field.string('releaseLabel', 'Prometheus release label', undefined, { description: 'value of the `release` label your Prometheus selects monitors by' }),
  ],
  template: `apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ .name }}
  namespace: {{ .namespace }}
  {{- if .releaseLabel }}
  labels:
    release: {{ .releaseLabel }}
  {{- end }}
spec:
  selector:
    matchLabels:
      app: {{ .appLabel }}
  endpoints:
    - port: {{ .portName }}
      path: {{ .path }}
      interval: {{ .interval }}
`,
}]
