// CloudNativePG (postgresql.cnpg.io).
import { field, type CatalogueEntry } from './types.ts'

export const database: CatalogueEntry[] = [{
  name: 'cloudnative-pg-cluster',
  display_name: 'CloudNativePG PostgreSQL cluster',
  description: 'A highly available PostgreSQL cluster (a primary and streaming replicas) with an application database and owner, whose credentials CloudNativePG writes to the Secret <name>-app. Requires the CloudNativePG operator 1.2x and a storage class.',
  version: '1.0.0',
  category: 'database',
  icon: 'database',
  crd: { group: 'postgresql.cnpg.io', version: 'v1', kind: 'Cluster', plural: 'clusters' },
  config_fields: [
    field.number('instances', 'Instances', 3, { required: true, description: 'one primary plus replicas' }),
    field.string('storageSize', 'Storage size', '10Gi', { required: true }),
    field.string('storageClass', 'Storage class', undefined, { description: 'the cluster default when empty' }),
    field.string('imageName', 'PostgreSQL image', undefined, { description: 'operand image, e.g. ghcr.io/cloudnative-pg/postgresql:17 (the operator default when empty)' }),
    field.string('database', 'Database', 'app', { required: true }),
    field.string('owner', 'Owner', 'app', { required: true }),
  ],
  template: `apiVersion: postgresql.cnpg.io/v1
kind: Cluster
metadata:
  name: {{ .name }}
  namespace: {{ .namespace }}
spec:
  instances: {{ .instances }}
  {{- if .imageName }}
  imageName: {{ .imageName }}
  {{- end }}
  storage:
    size: {{ .storageSize }}
    {{- if .storageClass }}
    storageClass: {{ .storageClass }}
    {{- end }}
  bootstrap:
    initdb:
      database: {{ .database }}
      owner: {{ .owner }}
`,
}]
