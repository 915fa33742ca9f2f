// Velero (velero.io).
import { field, type CatalogueEntry } from './types.ts'

export const backup: CatalogueEntry[] = [{
  name: 'velero-backup-schedule',
  display_name: 'Velero backup schedule',
  description: 'Backs up a namespace\'s resources (and volume snapshots) on a cron schedule, kept for a time-to-live. Requires Velero with a backup storage location; Velero reads Schedules only from its own namespace (usually velero), so deploy this node there.',
  version: '1.0.0',
  category: 'backup',
  icon: 'archive',
  crd: { group: 'velero.io', version: 'v1', kind: 'Schedule', plural: 'schedules' },
  config_fields: [
    field.string('schedule', 'Schedule', '0 2 * * *', { required: true, description: 'cron expression' }),
    field.string('includedNamespace', 'Namespace to back up', undefined, { required: true }),
    field.string('ttl', 'Keep for', '720h0m0s', { required: true, description: 'how long each backup is kept, a Go duration' }),
    field.boolean('snapshotVolumes', 'Snapshot volumes', true),
    field.string('storageLocation', 'Storage location', undefined, { description: 'BackupStorageLocation (the default when empty)' }),
  ],
  template: `apiVersion: velero.io/v1
kind: Schedule
metadata:
  name: {{ .name }}
  namespace: {{ .namespace }}
spec:
  schedule: {{ .schedule }}
  useOwnerReferencesInBackup: false
  template:
    includedNamespaces:
      - {{ .includedNamespace }}
    ttl: {{ .ttl }}
    snapshotVolumes: {{ .snapshotVolumes }}
    {{- if .storageLocation }}
    storageLocation: {{ .storageLocation }}
    {{- end }}
`,
}]
