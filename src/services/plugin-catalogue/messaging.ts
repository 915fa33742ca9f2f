// Strimzi (kafka.strimzi.io).
import { field, type CatalogueEntry } from './types.ts'

export const messaging: CatalogueEntry[] = [{
  name: 'strimzi-kafka-topic',
  display_name: 'Strimzi Kafka topic',
  description: 'A Kafka topic with its partitions, replicas and retention, managed by the Strimzi Topic Operator. Requires Strimzi 0.49 or later (the v1 API; Strimzi 1.x serves only v1), its Cluster Operator and a Kafka cluster it manages with the Topic Operator enabled; the topic must be created in the namespace the Topic Operator watches.',
  version: '1.0.0',
  category: 'messaging',
  icon: 'queue',
  crd: { group: 'kafka.strimzi.io', version: 'v1', kind: 'KafkaTopic', plural: 'kafkatopics' },
  config_fields: [
    field.string('kafkaCluster', 'Kafka cluster', 'my-cluster', { required: true, description: 'name of the Kafka resource (the strimzi.io/cluster label)' }),
    field.number('partitions', 'Partitions', 3, { required: true }),
    field.number('replicas', 'Replicas', 3, { required: true, description: 'replication factor' }),
    field.number('retentionMs', 'Retention (ms)', 604800000, { description: 'retention.ms of the topic' }),
    field.select('cleanupPolicy', 'Cleanup policy', ['delete', 'compact', 'compact,delete'], 'delete'),
  ],
  template: `apiVersion: kafka.strimzi.io/v1
kind: KafkaTopic
metadata:
  name: {{ .name }}
  namespace: {{ .namespace }}
  labels:
    strimzi.io/cluster: {{ .kafkaCluster }}
spec:
  partitions: {{ .partitions }}
  replicas: {{ .replicas }}
  config:
    cleanup.policy: {{ .cleanupPolicy }}
    {{- if .retentionMs }}
    retention.ms: {{ .retentionMs }}
    {{- end }}
`,
}]
